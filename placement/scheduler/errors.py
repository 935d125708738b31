"""Errors shared by the scheduler's input parsers."""

from __future__ import annotations


class ManifestError(ValueError):
    """A manifest value the API server (or its admission webhook) would reject.

    `field` is the JSON path inside the object (e.g. `spec.prioritizerPolicy.configurations[0].weight`),
    so the offline `schedule` command can name file, document and field in one line.
    """

    def __init__(self, field: str, message: str) -> None:
        super().__init__(f"{field}: {message}" if field else message)
        self.field = field
        self.message = message
