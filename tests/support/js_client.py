"""The TypeScript client (``clients/js``), generated from a given OpenAPI document and compiled.

``make client-js`` builds it from this checkout's route table before ``make test``; a test that
runs it (``tests/e2e/test_js_client.py``, the web example of ``test_firebase_suite.py``) calls
:func:`ensure_built` with the document the running stack serves, which regenerates the client
when that document is not the one it was generated from (a changed route changes the client).
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

CLIENT = Path(__file__).resolve().parents[2] / "clients" / "js"
DOCUMENT = CLIENT / "openapi.json"
GENERATED = CLIENT / "src" / "schema.gen.ts"
BUILT = CLIENT / "dist" / "index.js"


def ensure_built(document: dict[str, Any]) -> None:
    """Generate and compile the client from ``document`` unless it already was."""
    assert (CLIENT / "node_modules" / ".installed").exists(), "clients/js is not installed: run make setup"
    current = json.loads(DOCUMENT.read_text()) if DOCUMENT.exists() else None
    if current == document and BUILT.exists() and GENERATED.exists():
        return
    DOCUMENT.write_text(json.dumps(document, indent=1))
    done = subprocess.run(["npm", "run", "--silent", "build"], cwd=CLIENT, capture_output=True, text=True,
                          timeout=600)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
