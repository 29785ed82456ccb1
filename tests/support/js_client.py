"""The TypeScript client (``clients/js``), generated from a given OpenAPI document and compiled.

``make client-js`` builds it from this checkout's route table before ``make test``; a test that
runs it (``tests/e2e/test_js_client.py``, the web example of ``test_firebase_suite.py``) calls
:func:`ensure_built` with the document the running stack serves, which regenerates the client
when that document is not the one it was generated from (a changed route changes the client).
The document, ``src/schema.gen.ts`` and ``dist/`` are committed (a clone installs with npm alone);
:func:`differences` compares them with a fresh build.
"""

from __future__ import annotations

import json
import shutil
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
    DOCUMENT.write_text(json.dumps(document, indent=1) + "\n")  # as `python -m core.api.app` prints it
    build(CLIENT)


def build(package: Path) -> None:
    """``npm run build`` in ``package``: ``src/schema.gen.ts`` from its ``openapi.json``, then ``dist/``."""
    done = subprocess.run(["npm", "run", "--silent", "build"], cwd=package, capture_output=True, text=True,
                          timeout=600)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]


def _files(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def differences(scratch: Path) -> list[str]:
    """The files of ``src/schema.gen.ts`` and ``dist/`` that a fresh build from ``openapi.json`` and
    ``src`` (a copy in ``scratch``, with the installed node modules) writes otherwise, adds or
    leaves out."""
    copy = scratch / "js"
    copy.mkdir()
    for name in ("package.json", "tsconfig.json", "openapi.json"):
        shutil.copy(CLIENT / name, copy / name)
    shutil.copytree(CLIENT / "src", copy / "src", ignore=shutil.ignore_patterns("schema.gen.ts"))
    (copy / "node_modules").symlink_to(CLIENT / "node_modules")
    build(copy)
    fresh = {"src/schema.gen.ts": (copy / "src" / "schema.gen.ts").read_bytes(),
             **{f"dist/{k}": v for k, v in _files(copy / "dist").items()}}
    committed = {"src/schema.gen.ts": GENERATED.read_bytes() if GENERATED.exists() else b"",
                 **{f"dist/{k}": v for k, v in _files(CLIENT / "dist").items()}}
    return sorted(name for name in fresh.keys() | committed.keys() if fresh.get(name) != committed.get(name))
