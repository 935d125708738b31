"""A hook: what a lower layer asks and only an app above it can answer, filled when that app is ready.

Layers import only downward (pyproject.toml's layers contract). Where an inventory page or action needs
something of the placements (how many select a cluster, what a taint edit would do to them), the
inventory calls a hook, and the placement app fills it in its `AppConfig.ready`.
"""

from typing import Generic, TypeVar

from django.core.exceptions import ImproperlyConfigured

T = TypeVar("T")


class Hook(Generic[T]):
    """One answer (a function, or an object of them), filled once by the app that has it."""

    def __init__(self, name: str) -> None:
        self.name = name
        self._answer: T | None = None

    def fill(self, answer: T) -> None:
        self._answer = answer

    def get(self) -> T:
        if self._answer is None:
            raise ImproperlyConfigured(f"{self.name}: no installed app answers it")
        return self._answer
