"""One conformance case: the manifests and the scheduling time, as the oracle reads them."""

from __future__ import annotations

from typing import Any, Literal, TypedDict

FamilyName = Literal["ocm", "fleet"]


class Case(TypedDict):
    """A case exactly as it is sent to the oracle (one JSON line) and stored in a regression vector."""

    id: str
    family: FamilyName
    # RFC 3339 in UTC, e.g. "2024-05-01T12:00:00Z"
    now: str
    manifests: list[dict[str, Any]]
