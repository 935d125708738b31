"""Runs every upstream test vector through the real scheduler (runner contract: shared/vectors/README.md).

Every `*.json` in `$FLEETUI_VECTORS` (default `../shared/vectors` beside the checkout) is loaded; each
vector becomes one case, dispatched on its `plugin` (OCM) or `kind` (Fleet). A vector nobody can run
fails; it is never skipped.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from tests.vector_adapters import resolve

_DEFAULT_FOLDER = Path(__file__).resolve().parents[1].parent / "shared" / "vectors"


def _vector_folder() -> Path:
    return Path(os.environ.get("FLEETUI_VECTORS") or _DEFAULT_FOLDER)


def _load_vectors() -> list[Any]:
    folder = _vector_folder()
    files = sorted(folder.glob("*.json"))
    if not files:
        return [pytest.param(None, id=f"no-vector-files-in-{folder}")]
    params = []
    for path in files:
        vectors = json.loads(path.read_text())["vectors"]
        for index, vector in enumerate(vectors):
            name = vector.get("plugin") or vector.get("kind") or "unknown"
            params.append(pytest.param(vector, id=f"{path.stem}:{vector.get('id') or f'{name}-{index}'}"))
    return params


@pytest.mark.parametrize("vector", _load_vectors())
def test_vector(vector: dict[str, Any] | None) -> None:
    assert vector is not None, f"no *.json vector files found in {_vector_folder()}"
    name = vector.get("plugin") or vector.get("kind")
    adapter = resolve(name or "")
    assert adapter is not None, f"no adapter for plugin/kind {name!r}"
    adapter(vector)
