"""Inserting many new rows at once: PostgreSQL's COPY there, Django's bulk_create elsewhere.

On PostgreSQL Django's bulk_create sends each column as one array parameter, which the driver quotes
element by element in Python (client-side binding): about 6.4 s for 10,000 ManagedCluster rows, where
COPY of the same rows takes about 2 s. A sync's initial list inserts every row of the hub, so it takes
the COPY path. The primary keys are drawn from the table's sequence first, so every instance holds its
pk afterwards, as after bulk_create.
"""

import json
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

from django.db import connections, models, router

M = TypeVar("M", bound=models.Model)
# bulk_create's batch elsewhere: SQLite's limit on the parameters of one statement allows about this many
BATCH = 500
# Values the driver writes as they are; a subclass (a TextChoices member is a str) goes through Django.
PLAIN = frozenset({str, int, float, bool, type(None)})


def insert(model: type[M], rows: Sequence[M]) -> None:
    """Insert these new instances of `model` (pk None); each holds its pk afterwards."""
    if not rows:
        return
    alias = router.db_for_write(model)
    connection = connections[alias]
    if connection.vendor != "postgresql":
        model._default_manager.bulk_create(rows, batch_size=BATCH)
        return
    pk = model._meta.pk
    assert pk is not None  # every concrete model has one
    fields = [field for field in model._meta.concrete_fields if not field.primary_key]
    # each field with how its value is written and whether it sets itself on save (auto_now, auto_now_add:
    # only those need their pre_save per row)
    written = [(field, _preparer(field, connection), _automatic(field)) for field in fields]
    quote = connection.ops.quote_name
    columns = ", ".join(quote(_column(field)) for field in (pk, *fields))
    table = model._meta.db_table
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT nextval(pg_get_serial_sequence(%s, %s)) FROM generate_series(1, %s)",
            [table, pk.column, len(rows)],
        )
        for row, (key,) in zip(rows, cursor.fetchall(), strict=True):
            row.pk = key
        # the driver's own cursor: Django's wrapper has no COPY, so its errors are translated here
        with (
            connection.wrap_database_errors,
            cursor.cursor.copy(f"COPY {quote(table)} ({columns}) FROM STDIN") as copy,
        ):
            for row in rows:
                copy.write_row(
                    [
                        row.pk,
                        *(
                            prepare(field.pre_save(row, True) if automatic else getattr(row, field.attname))
                            for field, prepare, automatic in written
                        ),
                    ]
                )
    for row in rows:
        row._state.adding, row._state.db = False, alias


def _column(field: models.Field[Any, Any]) -> str:
    """The column of a concrete field (every one has a column)."""
    column = field.column
    assert column is not None
    return column


def _automatic(field: models.Field[Any, Any]) -> bool:
    return bool(getattr(field, "auto_now", False) or getattr(field, "auto_now_add", False))


def _preparer(field: models.Field[Any, Any], connection: Any) -> Callable[[Any], Any]:
    """How a value of `field` is written: JSON as its text (COPY's text format needs no adapter, and
    Django's JSON adapter costs more than the encoding), None as NULL, a plain string, number or boolean
    as it is (what Django's preparation answers for them), the rest as Django prepares it."""
    if isinstance(field, models.JSONField) and field.encoder is None:
        encode = json.JSONEncoder().encode
        return lambda value: None if value is None else encode(value)
    prepare = field.get_db_prep_save
    return lambda value: value if type(value) in PLAIN else prepare(value, connection)
