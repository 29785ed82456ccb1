"""A clone is the whole product: nothing in it reaches outside the repository.

The sample conversations ship inside the repository, and no tracked file names a folder beside the
clone or an absolute workplace path (the LoCoMo evaluation split is only ever read through an
explicit ``--data`` path a user passes).
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

from strata_dev import samples

REPO = Path(__file__).resolve().parents[2]

# A folder beside the clone, or an absolute path of a development machine.
OUTSIDE = re.compile(r"\.\./shared|(?<![\w.])shared/(data|spec|docs)\b|/work/|REPO(_ROOT)?\.parent\b|"
                     r"parents\[\d\]\.parent\b")


def _tracked() -> list[Path]:
    listed = subprocess.run(["git", "ls-files", "-z"], cwd=REPO, capture_output=True, check=True).stdout
    return [REPO / name for name in listed.decode().split("\0") if name]


def test_samples_ship_inside_the_repository() -> None:
    directory = samples.samples_dir()
    assert directory.resolve().is_relative_to(REPO.resolve())
    loaded = samples.load_samples()
    assert len(loaded) >= 5
    for name, doc in loaded.items():
        assert doc["id"] == name and doc["transcript_segments"], name


def test_the_override_is_checked(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("STRATA_SAMPLES_DIR", str(tmp_path))
    try:
        samples.samples_dir()
    except FileNotFoundError as exc:
        assert str(tmp_path) in str(exc) and "STRATA_SAMPLES_DIR" in str(exc)
    else:
        raise AssertionError("an empty override folder was accepted")


def test_no_tracked_file_names_a_path_outside_the_clone() -> None:
    offenders = []
    for path in _tracked():
        if path.suffix in {".png", ".zip", ".ico"} or not path.is_file() or path == Path(__file__).resolve():
            continue
        try:
            text = path.read_text(encoding="utf-8")
        except UnicodeDecodeError:
            continue
        for number, line in enumerate(text.splitlines(), 1):
            if OUTSIDE.search(line) and not ("--data" in line and "locomo" in line.lower()):
                offenders.append(f"{path.relative_to(REPO)}:{number}: {line.strip()[:120]}")
    assert not offenders, "\n".join(offenders)
