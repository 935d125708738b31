"""The list editors' tests: a formset's rows as the browser posts them, and placements one may edit."""

import copy
from typing import Any

from django.contrib.auth.base_user import AbstractBaseUser

from placement import service
from placement.models import Placement


def rows_data(prefix: str, rows: list[dict[str, Any]], *, initial: int, action: str, **extra: str) -> dict:
    """Form data for `rows` (each a field -> value dict; `DELETE: "on"` removes one) after `initial`
    stored rows were shown; `action` is the button pressed (add, preview or save)."""
    data = {
        f"{prefix}-TOTAL_FORMS": str(len(rows)),
        f"{prefix}-INITIAL_FORMS": str(initial),
        f"{prefix}-MIN_NUM_FORMS": "0",
        f"{prefix}-MAX_NUM_FORMS": "1000",
        "action": action,
        **extra,
    }
    for index, row in enumerate(rows):
        for name, value in row.items():
            data[f"{prefix}-{index}-{name}"] = "" if value is None else str(value)
    return data


def dashboard_copy(
    mirror_name: str, name: str, actor: AbstractBaseUser, *, drop: tuple[str, ...] = ()
) -> Placement:
    """A dashboard-owned copy of a hub-owned placement of the demo fleet (in its namespace, with `name`),
    its spec without the fields in `drop`: editable where the mirror is read-only."""
    mirror = Placement.objects.get(name=mirror_name)
    spec = {key: value for key, value in copy.deepcopy(mirror.spec).items() if key not in drop}
    return service.create_placement(
        kind=mirror.kind, hub=mirror.hub, namespace=mirror.namespace, name=name, spec=spec, actor=actor
    )
