"""The Python client (``clients/python``), generated from a given OpenAPI document.

``make client-python`` runs this module on the document of this checkout's route table before
``make test``; ``tests/e2e/test_python_client.py`` calls :func:`ensure_built` with the document the
running stack serves, which regenerates ``strata_client/generated`` when that document is not the
one it was generated from (a changed route changes the client). The generator is
openapi-python-client, in its own venv (``.venv-client-python``, made by ``make setup``).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
CLIENT = REPO / "clients" / "python"
DOCUMENT = CLIENT / "openapi.json"
GENERATED = CLIENT / "strata_client" / "generated"
GENERATOR = REPO / ".venv-client-python" / "bin" / "openapi-python-client"


def generate(document: Path = DOCUMENT) -> None:
    """Write ``strata_client/generated`` from ``document`` (replacing what was there)."""
    assert GENERATOR.exists(), "the Python client's generator is not installed: run make setup"
    # The generator formats its output with ruff when ruff is on PATH: the project's own.
    env = dict(os.environ, PATH=f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}")
    done = subprocess.run([str(GENERATOR), "generate", "--path", str(document.resolve()), "--output-path", str(GENERATED),
                           "--meta", "none", "--overwrite"], cwd=CLIENT, env=env, capture_output=True, text=True,
                          timeout=600)
    assert done.returncode == 0 and (GENERATED / "client.py").exists(), done.stdout[-3000:] + done.stderr[-3000:]


def ensure_built(document: dict[str, Any]) -> None:
    """Generate the client from ``document`` unless it already was."""
    current = json.loads(DOCUMENT.read_text()) if DOCUMENT.exists() else None
    if current == document and (GENERATED / "client.py").exists():
        return
    DOCUMENT.write_text(json.dumps(document, indent=1))
    generate()


if __name__ == "__main__":
    generate(Path(sys.argv[1]) if len(sys.argv) > 1 else DOCUMENT)
