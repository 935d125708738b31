"""Regression vectors: a shrunk disagreeing case and the oracle's verdict, kept under tests/vectors.

`tests/test_vectors.py` runs every vector of these files through our scheduler and compares with the
same comparison `make conformance` uses, so a disagreement, once fixed, stays fixed.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from conformance.cases import Case, FamilyName
from conformance.oracle import REPOSITORY

FOLDER = REPOSITORY / "tests" / "vectors" / "regressions"
PLUGIN = "Conformance"


def vector(case: Case, upstream: Mapping[str, Any], source: str) -> dict[str, Any]:
    """A regression vector: the case, where it came from, and the oracle's result as the expectation."""
    expected: dict[str, Any] = {"placements": upstream.get("placements") or []}
    if upstream.get("error"):
        expected["error"] = upstream["error"]
    return {
        "id": case["id"],
        "plugin": PLUGIN,
        "family": case["family"],
        "source": source,
        "now": case["now"],
        "manifests": case["manifests"],
        "expected": expected,
    }


def case_of(vector: Mapping[str, Any]) -> Case:
    """The case a regression vector holds, as it is sent to either side."""
    return {
        "id": vector["id"],
        "family": vector["family"],
        "now": vector["now"],
        "manifests": vector["manifests"],
    }


def regression_file(family: FamilyName, folder: Path) -> Path:
    return folder / f"{family}.json"


def append(new: Mapping[str, Any], folder: Path) -> Path:
    """Add `new` to its family's file (replacing a vector with the same id); returns the file."""
    path = regression_file(new["family"], folder)
    vectors = json.loads(path.read_text())["vectors"] if path.exists() else []
    vectors = [existing for existing in vectors if existing["id"] != new["id"]]
    vectors.append(dict(new))
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"vectors": vectors}, indent=1) + "\n")
    return path
