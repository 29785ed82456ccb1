"""Fixtures for the infrastructure tests (helpers live in infra_hcl.py)."""

from __future__ import annotations

import pytest
from infra_hcl import TF_MODULE, TF_ROOT, TerraformDir, load_dir


@pytest.fixture(scope="session")
def root() -> TerraformDir:
    return load_dir(TF_ROOT)


@pytest.fixture(scope="session")
def module() -> TerraformDir:
    return load_dir(TF_MODULE)
