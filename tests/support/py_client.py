"""The Python client (``clients/python``), generated from a given OpenAPI document.

``make client-python`` runs this module on the document of this checkout's route table before
``make test``; ``tests/e2e/test_python_client.py`` calls :func:`ensure_built` with the document the
running stack serves, which regenerates ``strata_client/generated`` when that document is not the
one it was generated from (a changed route changes the client), and compares the package with a
fresh generation (:func:`differences`). The document and the package are committed, so a clone
installs with ``pip install clients/python``. The generator is openapi-python-client, in its own
venv (``.venv-client-python``, made by ``make setup``).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
CLIENT = REPO / "clients" / "python"
DOCUMENT = CLIENT / "openapi.json"
GENERATED = CLIENT / "strata_client" / "generated"
GENERATOR = REPO / ".venv-client-python" / "bin" / "openapi-python-client"


def generate(document: Path = DOCUMENT, output: Path = GENERATED) -> None:
    """Write ``output`` (``strata_client/generated``) from ``document`` (replacing what was there)."""
    assert GENERATOR.exists(), "the Python client's generator is not installed: run make setup"
    # The generator formats its output with ruff when ruff is on PATH: the project's own.
    env = dict(os.environ, PATH=f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}")
    done = subprocess.run([str(GENERATOR), "generate", "--path", str(document.resolve()), "--output-path", str(output),
                           "--meta", "none", "--overwrite"], cwd=CLIENT, env=env, capture_output=True, text=True,
                          timeout=600)
    assert done.returncode == 0 and (output / "client.py").exists(), done.stdout[-3000:] + done.stderr[-3000:]


def files(root: Path) -> dict[str, bytes]:
    """The files under ``root`` by relative path, bytecode and ruff caches left out."""
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*"))
            if p.is_file() and not {"__pycache__", ".ruff_cache"} & set(p.parts)}


def differences() -> list[str]:
    """The files of ``strata_client/generated`` that a fresh generation from ``openapi.json`` writes
    otherwise, adds or leaves out. The scratch directory is in the checkout (``build/``, excluded
    from ruff like the package), so the generator's ruff reads the same configuration."""
    (REPO / "build").mkdir(exist_ok=True)
    scratch = Path(tempfile.mkdtemp(prefix="client-python-", dir=REPO / "build"))
    try:
        generate(DOCUMENT, scratch / "generated")
        fresh, committed = files(scratch / "generated"), files(GENERATED)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    return sorted(name for name in fresh.keys() | committed.keys() if fresh.get(name) != committed.get(name))


def ensure_built(document: dict[str, Any]) -> None:
    """Generate the client from ``document`` unless it already was."""
    current = json.loads(DOCUMENT.read_text()) if DOCUMENT.exists() else None
    if current == document and (GENERATED / "client.py").exists():
        return
    DOCUMENT.write_text(json.dumps(document, indent=1) + "\n")  # as `python -m core.api.app` prints it
    generate()


if __name__ == "__main__":
    generate(Path(sys.argv[1]) if len(sys.argv) > 1 else DOCUMENT)
