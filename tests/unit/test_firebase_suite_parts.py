"""The pieces of ``--suite firebase`` that need no firebase-tools: its config, the wrapper jar, and
finding the emulators firebase-tools starts in process groups of their own."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import time
import zipfile
from pathlib import Path

from strata_dev.localstack import firebase_suite
from strata_dev.localstack.processes import detached_descendants

PORTS = {"firestore": 1001, "firestore_ws": 1002, "pubsub": 1003, "auth": 1004, "firebase_hub": 1005,
         "firebase_logging": 1006}


def test_config_is_the_projects_with_the_stacks_ports(tmp_path: Path) -> None:
    rules = tmp_path / "x.rules"
    firebase_suite.write_config(tmp_path / "firebase.json", PORTS, "127.0.0.1", rules)
    config = json.loads((tmp_path / "firebase.json").read_text())
    emulators = config["emulators"]
    assert config["firestore"]["rules"] == str(rules)
    assert emulators["firestore"] == {"host": "127.0.0.1", "port": 1001, "websocketPort": 1002}
    assert emulators["pubsub"]["port"] == 1003 and emulators["auth"]["port"] == 1004
    assert emulators["hub"]["port"] == 1005 and emulators["logging"]["port"] == 1006
    assert emulators["ui"] == {"enabled": False} and emulators["singleProjectMode"] is True


def test_wrapper_jar_is_a_manifest_naming_the_cloud_cli_jar(tmp_path: Path) -> None:
    real = tmp_path / "sdk" / "platform" / "cloud-firestore-emulator" / "cloud-firestore-emulator.jar"
    real.parent.mkdir(parents=True)
    real.write_bytes(b"")
    firebase_suite._firestore_wrapper_jar(tmp_path / "w.jar", tmp_path / "sdk")
    with zipfile.ZipFile(tmp_path / "w.jar") as jar:
        assert jar.namelist() == ["META-INF/MANIFEST.MF"]
        lines = jar.read("META-INF/MANIFEST.MF").decode().splitlines()
    assert f"Main-Class: {firebase_suite.FIRESTORE_MAIN}" in lines
    assert f"Class-Path: {real.as_uri()}" in lines


def test_detached_descendants_finds_children_in_their_own_group() -> None:
    code = ("import subprocess, time\n"
            "subprocess.Popen(['sleep', '60'], start_new_session=True)\n"
            "subprocess.Popen(['sleep', '60'])\n"
            "time.sleep(60)\n")
    parent = subprocess.Popen([sys.executable, "-c", code], start_new_session=True)
    found: list[int] = []
    try:
        deadline = time.monotonic() + 30
        while not found and time.monotonic() < deadline:
            found = detached_descendants(parent.pid)
            time.sleep(0.1)
        assert len(found) == 1  # the child in the parent's own group is not one of them
        assert os.getpgid(found[0]) == found[0] != parent.pid
    finally:
        for group in [parent.pid, *found]:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(group, signal.SIGKILL)
        parent.wait()
