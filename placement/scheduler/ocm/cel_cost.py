"""cel-go's runtime cost of a CEL evaluation, as OCM limits it.

upstream: cel-go `interpreter/runtimecost.go` (`CostTracker.costCall`, `actualSize`) with the costs of
`common/cost.go`, and OCM's estimator (sdk-go `pkg/cel/library.CostEstimator`), which prices only
`scores` and `parseJSON`: every other library function keeps cel-go's default of 1, because OCM's
`BaseEnvCostEstimator` does not fall back to the k8s library's estimator when its own one is set.
OCM (`pkg/placement/helpers/cel.go`) builds each program with a per-call limit of
`celconfig.PerCallLimit` and gives one cluster's expressions `celconfig.RuntimeCELCostBudget` in all;
nothing is rejected at compile time on the estimated cost.

What costs what (the evaluator charges the structural parts, `call_cost` the calls):
- a variable or the start of a selection chain on a computed value: 1; each selection or index: 1
  (an optional one only when it finds a value); literals: 0; a list literal 10, a map literal 30;
- `&&`, `||`, `?:`, `or`, `orValue`: 0 (they are not calls in cel-go's plan);
- a call: 1, or the size-proportional costs below for the strings, bytes and lists overloads.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from placement.scheduler.ocm.cel_library import CelOptional

# k8s.io/apiserver `pkg/apis/cel`: PerCallLimit and RuntimeCELCostBudget
PER_CALL_LIMIT = 1_000_000
RUNTIME_BUDGET = 10_000_000

SELECT_COST = 1
LIST_CREATE_COST = 10
MAP_CREATE_COST = 30
_STRING_TRAVERSAL = 0.1
_REGEX_LENGTH = 0.25


# the cost rules whose price depends on the size of the arguments
_SIZED = frozenset({"eq", "concat", "in_list", "matches", "contains", "text"})


class CostLimitExceeded(Exception):
    """cel-go cancels the evaluation: `operation cancelled: actual cost limit exceeded`."""


class CostTracker:
    """The cost of one expression's evaluation, cancelled past the per-call limit."""

    __slots__ = ("cost",)

    def __init__(self) -> None:
        self.cost = 0

    def charge(self, amount: int) -> None:
        self.cost += amount
        if self.cost > PER_CALL_LIMIT:
            raise CostLimitExceeded


def actual_size(value: Any) -> int:
    """cel-go `actualSize`: the size of strings, bytes, lists and maps (through an optional), else 1."""
    if isinstance(value, str | bytes | list | dict):
        return len(value)
    if isinstance(value, CelOptional) and value.present:
        return actual_size(value.value)
    return 1


def _traversal(size: int) -> int:
    return math.ceil(size * _STRING_TRAVERSAL)


def _struct_cost(value: Any) -> int:
    """sdk-go `calculateStructCost` of a parsed JSON value."""
    if isinstance(value, dict):
        return MAP_CREATE_COST + sum(_struct_cost(item) for item in value.values())
    if isinstance(value, list):
        return LIST_CREATE_COST + sum(_struct_cost(item) for item in value)
    return 0


def call_cost(function: str, tag: str, args: Sequence[Any], result: Any) -> int:
    """The cost cel-go's tracker adds for one call of `function` (receiver first in `args`).

    `tag` is the cost rule of the overload the checker resolved the call to (see `cel_overloads`),
    empty when several overloads could apply: cel-go then knows no overload id and charges 1.
    """
    if function == "scores":
        size = len(result) if isinstance(result, list) else 0
        return LIST_CREATE_COST + size * (SELECT_COST + MAP_CREATE_COST)
    if function == "parseJSON":
        return _traversal(actual_size(args[0])) + _struct_cost(result)
    if tag not in _SIZED:
        return 1
    sizes = [actual_size(arg) for arg in args]
    if tag == "eq":
        return _traversal(min(sizes))
    if tag == "concat":
        return _traversal(sum(sizes))
    if tag == "in_list":
        return sizes[1]
    if tag == "matches":
        return _traversal(1 + sizes[0]) * math.ceil(sizes[1] * _REGEX_LENGTH)
    if tag == "contains":
        return _traversal(sizes[0]) * _traversal(sizes[1])
    return _traversal(sizes[0])  # text
