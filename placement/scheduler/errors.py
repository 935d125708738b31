"""Errors shared by the scheduler's input parsers."""

from __future__ import annotations

from typing import Any


class ManifestError(ValueError):
    """A manifest value the API server (or its admission webhook) would reject.

    `field` is the JSON path inside the object (e.g. `spec.prioritizerPolicy.configurations[0].weight`),
    so the offline `schedule` command can name file, document and field in one line.
    """

    def __init__(self, field: str, message: str) -> None:
        super().__init__(f"{field}: {message}" if field else message)
        self.field = field
        self.message = message


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
