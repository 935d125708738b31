"""The inventories' name tables that stored cluster records refer to, written once and pruned when unused.

A run's record refers to its inventory's name table by key (`ClusterRecord.name_table`); the runs that
store records write the tables they refer to (`store`, a few statements per chunk of runs whatever its
size) and pages read a table back by key when their process does not hold it (`packed`).

A table no placement refers to is kept for UNUSED after its last use, then deleted when a new table is
stored (a hub's clusters joined or left). A run that refers to a table older than REFRESH marks it used
first, so a table being pruned is either deleted before the run looks (and the run stores it again) or
kept: the prune's condition no longer holds once the mark is written.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime, timedelta

from django.db import connections, router

from placement.models import InventoryNames, Placement
from placement.scheduler.record import NameTable

UNUSED = timedelta(hours=1)
REFRESH = timedelta(minutes=10)


def store(tables: Iterable[NameTable], now: datetime) -> None:
    """Make sure the tables are stored and marked used within REFRESH of `now`, in the caller's
    transaction (the one that stores the records referring to them)."""
    by_key = {table.key: table for table in tables}
    if not by_key:
        return
    stored = dict(InventoryNames.objects.filter(pk__in=list(by_key)).values_list("pk", "used"))
    stale = [key for key, used in stored.items() if used < now - REFRESH]
    if stale:
        # a prune that got to a row first deleted it: the update finds it gone, and it is stored again
        marked = InventoryNames.objects.filter(pk__in=stale, used__lt=now - REFRESH).update(used=now)
        if marked < len(stale):
            stored = dict(InventoryNames.objects.filter(pk__in=list(by_key)).values_list("pk", "used"))
    missing = [
        InventoryNames(digest=key, packed=table.packed, count=len(table.names), used=now)
        for key, table in by_key.items()
        if key not in stored
    ]
    if missing:
        # a run of another worker may store the same table at once: one of the two inserts it
        InventoryNames.objects.bulk_create(missing, ignore_conflicts=True)
        prune(now)


def prune(now: datetime) -> int:
    """Delete the tables no placement refers to that were last used before UNUSED; answers how many.
    One DELETE whose own condition holds the mark: PostgreSQL checks it again on a row a run marked
    meanwhile, and skips that row (a delete of rows selected first would not)."""
    connection = connections[router.db_for_write(InventoryNames)]
    quote = connection.ops.quote_name
    names, placements = quote(InventoryNames._meta.db_table), quote(Placement._meta.db_table)
    digest, used = quote("digest"), quote("used")
    field = InventoryNames._meta.get_field("used")
    with connection.cursor() as cursor:
        cursor.execute(
            f"DELETE FROM {names} WHERE {used} < %s AND NOT EXISTS "
            f"(SELECT 1 FROM {placements} WHERE {quote('name_table_id')} = {names}.{digest})",
            [field.get_db_prep_save(now - UNUSED, connection)],
        )
        return int(cursor.rowcount)


def packed(key: str) -> bytes | None:
    """The packed bytes of the table stored under `key` (None: not stored)."""
    found = InventoryNames.objects.filter(pk=key).values_list("packed", flat=True).first()
    return None if found is None else bytes(found)
