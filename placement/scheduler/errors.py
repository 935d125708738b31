"""Errors shared by the scheduler's input parsers."""

from __future__ import annotations

from typing import Any

# Go's integer types: a value outside them cannot be decoded by the hub's controllers, whatever the CRD
# schema says, so the dashboard refuses it where the apiserver's own bounds stop short of it.
INT32_MIN, INT32_MAX = -(2**31), 2**31 - 1
INT64_MIN, INT64_MAX = -(2**63), 2**63 - 1


class ManifestError(ValueError):
    """A manifest value the API server (or its admission webhook) would reject.

    `field` is the JSON path inside the object (e.g. `spec.prioritizerPolicy.configurations[0].weight`),
    so the offline `schedule` command can name file, document and field in one line.
    """

    def __init__(self, field: str, message: str) -> None:
        super().__init__(f"{field}: {message}" if field else message)
        self.field = field
        self.message = message


def in_range(value: int, path: str, minimum: int = INT32_MIN, maximum: int = INT32_MAX) -> int:
    """`value` when `minimum <= value <= maximum`; else the apiserver's schema error on `path`."""
    if value > maximum:
        raise ManifestError(
            path, f"Invalid value: {value}: {path} in body should be less than or equal to {maximum}"
        )
    if value < minimum:
        raise ManifestError(
            path, f"Invalid value: {value}: {path} in body should be greater than or equal to {minimum}"
        )
    return value


def json_type(value: Any) -> str:
    """The JSON type of a decoded value as the apiserver's schema errors name it (`integer`, `object`...)."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    return "array" if isinstance(value, list) else "object"
