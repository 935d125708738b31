"""The Go oracle for the tests that talk to it: built once per run; without Go they skip (CI fails them)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from conformance.oracle import BINARY, build
from tests.conftest import unavailable


@pytest.fixture(scope="session")
def oracle_binary() -> Path:
    if shutil.which("go") is None:
        unavailable("go is not installed: the conformance oracle cannot be built")
    build()
    return BINARY
