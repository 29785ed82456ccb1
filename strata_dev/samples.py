"""The sample conversations that ship with the repository (``strata_dev/data/conversations``).

One lookup for the demo, the benchmarks and the tests. ``STRATA_SAMPLES_DIR`` points them at
another folder of conversation documents in the same shape.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

BUNDLED = Path(__file__).resolve().parent / "data" / "conversations"


def samples_dir() -> Path:
    """The folder of sample conversation documents (``*.json``), checked to hold at least one."""
    override = os.environ.get("STRATA_SAMPLES_DIR", "").strip()
    directory = Path(override) if override else BUNDLED
    if not directory.is_dir() or not any(directory.glob("*.json")):
        source = "STRATA_SAMPLES_DIR" if override else "the repository"
        raise FileNotFoundError(f"no sample conversations (*.json) in {directory} (from {source})")
    return directory


def sample_paths() -> list[Path]:
    """The sample files, sorted by name."""
    return sorted(samples_dir().glob("*.json"))


def load_sample(name: str) -> dict[str, Any]:
    """One sample conversation document by file stem (``c-doctor``), ``id`` included."""
    return json.loads((samples_dir() / f"{name}.json").read_text())


def load_samples() -> dict[str, dict[str, Any]]:
    """Every sample conversation document, keyed by file stem, in name order."""
    return {path.stem: json.loads(path.read_text()) for path in sample_paths()}
