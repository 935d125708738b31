"""JSON values reach CEL as celpy's `json_to_cel` makes them: the same CEL type for every value, nested
maps and lists included, and values of other classes (already CEL values, tuples, timestamps) too."""

from datetime import UTC, datetime
from typing import Any

import pytest
from celpy import celtypes
from celpy.adapter import json_to_cel

from placement.scheduler.ocm.cel import to_cel

DOCUMENT = {
    "name": "cpu",
    "value": 30,
    "largest": 2**63 - 1,
    "smallest": -(2**63),
    7: "an int key",
    "ratio": 0.5,
    "ready": True,
    "none": None,
    "items": [1, 2.0, False, "x", {"a": [True]}, []],
    "nested": {"deep": {"deeper": [None, {}]}},
    "cel": celtypes.StringType("already"),
    "count": celtypes.IntType(3),
    "pair": (1, "two"),
    "at": datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC),
}


def shape(value: Any) -> Any:
    """Every value with its exact class, down through maps and lists."""
    if isinstance(value, dict):
        return (type(value), {shape(key): shape(item) for key, item in value.items()})
    if isinstance(value, list):
        return (type(value), [shape(item) for item in value])
    return (type(value), value)


def test_conversion_is_celpys() -> None:
    assert shape(to_cel(DOCUMENT)) == shape(json_to_cel(DOCUMENT))


def test_unconvertible_value_refused_as_celpy_does() -> None:
    with pytest.raises(ValueError, match="unexpected type"):
        to_cel({"set": {1}})


@pytest.mark.parametrize("number", [2**63, -(2**63) - 1])
def test_int_beyond_int64_refused_as_celpy_does(number: int) -> None:
    with pytest.raises(ValueError, match="overflow"):
        to_cel({"value": number})
