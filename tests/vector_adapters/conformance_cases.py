"""Regression vectors of the conformance runs (`plugin`: Conformance): whole cases, upstream's verdicts.

Our scheduler runs on the vector's manifests exactly as `make conformance` runs it, and the result is
compared with the stored upstream verdict by the same comparison, so the vector fails with the same
field-by-field lines the run printed.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from conformance.compare import differences
from conformance.regressions import PLUGIN, case_of
from conformance.verdict import our_result


def run_conformance_case(vector: dict[str, Any]) -> None:
    found = differences(vector["expected"], our_result(case_of(vector)))
    assert not found, "\n".join([f"{vector['id']} disagrees with upstream:", *found])


ADAPTERS: dict[str, Callable[[dict[str, Any]], None]] = {PLUGIN: run_conformance_case}
