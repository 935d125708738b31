"""Runs every upstream test vector through the real scheduler (runner contract: tests/vectors/README.md).

Every `*.json` under `tests/vectors/` is loaded, and so is every `*.json` in the folders named by
`FLEETUI_VECTORS_DIR` (or `FLEETUI_VECTORS`), so a folder of further cases of the same shapes runs
beside the project's own. Each vector becomes one case, dispatched on its `plugin` (OCM) or `kind`
(Fleet). A vector nobody can run fails; it is never skipped.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from tests.vector_adapters import resolve

REPO_VECTORS = Path(__file__).resolve().parent / "vectors"
EXTRA_FOLDER_VARIABLES = ("FLEETUI_VECTORS_DIR", "FLEETUI_VECTORS")


def vector_files() -> list[Path]:
    """The repository's vector files, then those of each extra folder named in the environment."""
    files = sorted(REPO_VECTORS.rglob("*.json"))
    for variable in EXTRA_FOLDER_VARIABLES:
        folder = os.environ.get(variable)
        if not folder:
            continue
        extra = sorted(Path(folder).glob("*.json"))
        if not extra:
            raise pytest.UsageError(f"{variable}={folder} names a folder with no *.json vector files")
        files.extend(path for path in extra if path.resolve() not in {f.resolve() for f in files})
    return files


def _load_vectors() -> list[Any]:
    params = []
    for path in vector_files():
        vectors = json.loads(path.read_text())["vectors"]
        inside = path.is_relative_to(REPO_VECTORS)
        label = path.relative_to(REPO_VECTORS).with_suffix("") if inside else path.stem
        for index, vector in enumerate(vectors):
            name = vector.get("plugin") or vector.get("kind") or "unknown"
            params.append(pytest.param(vector, id=f"{label}:{vector.get('id') or f'{name}-{index}'}"))
    return params


def test_the_repository_holds_both_families_of_vectors() -> None:
    assert {path.name for path in REPO_VECTORS.glob("*.json")} >= {"ocm.json", "fleet.json"}


@pytest.mark.parametrize("vector", _load_vectors())
def test_vector(vector: dict[str, Any]) -> None:
    name = vector.get("plugin") or vector.get("kind")
    adapter = resolve(name or "")
    assert adapter is not None, f"no adapter for plugin/kind {name!r}"
    adapter(vector)
