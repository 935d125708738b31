"""Claims: one runner at a time per row, with a compare-and-set UPDATE (the same on SQLite and PostgreSQL).

A row that runners take turns on (a staged update run, a CRP's rolling update) has a `<prefix>claimed_until`
and a `<prefix>claim_owner` column. `claimed(...)` takes the claim only when it is free or past its time
(its runner died), releases it when the work ends, and answers None to every other runner meanwhile, as
inventory.tasks.hub_lock does for hub syncs. No transaction is held while the work talks to a hub.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime, timedelta
from typing import Any

from django.db import models
from django.db.models import Q
from django.utils import timezone


def is_free(prefix: str, now: datetime) -> Q:
    """Rows nobody holds, or whose holder's claim ran out."""
    until = f"{prefix}claimed_until"
    return Q(**{f"{until}__isnull": True}) | Q(**{f"{until}__lt": now})


@contextmanager
def claimed(
    model: type[models.Model],
    pk: int,
    *,
    ttl: timedelta,
    prefix: str = "",
    now: datetime | None = None,
    scope: Q | None = None,
    **also: Any,
) -> Iterator[str | None]:
    """Claim row `pk` of `model` for `ttl` (rows outside `scope` are never claimed); yields the owner token,
    or None when another runner holds it. `also` are further columns set in the claiming UPDATE."""
    now = timezone.now() if now is None else now
    owner = uuid.uuid4().hex
    until, holder = f"{prefix}claimed_until", f"{prefix}claim_owner"
    rows = model._default_manager.filter(is_free(prefix, now), pk=pk)
    if scope is not None:
        rows = rows.filter(scope)
    if not rows.update(**{until: now + ttl, holder: owner}, **also):
        yield None
        return
    try:
        yield owner
    finally:
        model._default_manager.filter(pk=pk, **{holder: owner}).update(**{until: None, holder: ""})
