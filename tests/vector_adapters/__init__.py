"""Adapters that run upstream test vectors through the product's real scheduler functions.

Each module below exports `ADAPTERS`: a mapping from a vector's `plugin` (OCM) or `kind` (Fleet) to a
callable that takes the whole vector and asserts its expectations. A key ending in `/` matches every
name with that prefix (e.g. `AddOn/` for `AddOn/<resource>/<score>`). Dispatch is per plugin/kind,
never per vector id, so new vectors of the same shapes run unchanged.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from functools import cache
from typing import Any

Adapter = Callable[[dict[str, Any]], None]

_MODULES = (
    "ocm_scheduling",
    "ocm_decisions",
    "ocm_rollout",
    "fleet_scheduling",
    "fleet_rollout",
    "conformance_cases",
)


@cache
def _registry() -> dict[str, Adapter]:
    merged: dict[str, Adapter] = {}
    for name in _MODULES:
        module = importlib.import_module(f"{__name__}.{name}")
        for key, adapter in module.ADAPTERS.items():
            if key in merged:
                raise RuntimeError(f"vector adapter {key!r} is registered twice")
            merged[key] = adapter
    return merged


def resolve(name: str) -> Adapter | None:
    """The adapter for a plugin/kind name, exact match first, then the longest registered prefix."""
    registry = _registry()
    if name in registry:
        return registry[name]
    prefixes = [key for key in registry if key.endswith("/") and name.startswith(key)]
    return registry[max(prefixes, key=len)] if prefixes else None
