"""Inserting and updating many rows at once: PostgreSQL's COPY there, Django's bulk_create elsewhere.

On PostgreSQL Django's bulk_create sends each column as one array parameter, which the driver quotes
element by element in Python (client-side binding): about 6.4 s for 10,000 ManagedCluster rows, where
COPY of the same rows takes about 2 s. A sync's initial list inserts every row of the hub, so it takes
the COPY path, from the rows' field values without a model instance per row. The primary keys are
drawn from the table's sequence first. `update` writes some fields of many rows by pk the same way: COPY
into a temporary table, then one UPDATE from it.
"""

import json
from collections.abc import Callable, Collection, Sequence
from typing import Any

from django.db import connections, models, router, transaction

# bulk_create's batch elsewhere: SQLite's limit on the parameters of one statement allows about this many
BATCH = 500
# Fewer rows than this are updated by executemany on PostgreSQL too: creating, analysing and dropping
# the temporary table costs more than COPY saves on so few (a watch's small batches).
COPY_UPDATE_MIN = 50
# Values the driver writes as they are; a subclass (a TextChoices member is a str) goes through Django.
PLAIN = frozenset({str, int, float, bool, type(None)})
# A sync that inserted this many rows into a table refreshes the planner's statistics of it at once: a
# watch event's lookup of its few rows (by name or uid) is planned from them, and with the counts of the
# table before the load the planner scans every row of the hub for each (15 ms a batch at 10,000 members
# instead of 0.2 ms) until autovacuum gets round to the table.
ANALYZE_AFTER = 1000
# Field values of a new row by field name (a foreign key by its instance) or attname (by its id).
Values = dict[str, Any]


def insert(model: type[models.Model], rows: Sequence[Values]) -> list[int]:
    """Insert rows of `model` from their field values (fields left out take their defaults, fields that
    set themselves on save are set); answers their pks, in order. No instance is built on PostgreSQL."""
    if not rows:
        return []
    connection = connections[router.db_for_write(model)]
    if connection.vendor != "postgresql":
        instances = model._default_manager.bulk_create([model(**values) for values in rows], batch_size=BATCH)
        return [instance.pk for instance in instances]
    pk = model._meta.pk
    assert pk is not None  # every concrete model has one
    fields = [field for field in model._meta.concrete_fields if not field.primary_key]
    # one instance holds every default, and the time of the fields that set themselves on save
    template = model()
    written = [_Column(field, connection, template) for field in fields]
    quote = connection.ops.quote_name
    columns = ", ".join(quote(_column(field)) for field in (pk, *fields))
    table = model._meta.db_table
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT nextval(pg_get_serial_sequence(%s, %s)) FROM generate_series(1, %s)",
            [table, pk.column, len(rows)],
        )
        pks = [key for (key,) in cursor.fetchall()]
        # the driver's own cursor: Django's wrapper has no COPY, so its errors are translated here
        with (
            connection.wrap_database_errors,
            cursor.cursor.copy(f"COPY {quote(table)} ({columns}) FROM STDIN") as copy,
        ):
            for key, values in zip(pks, rows, strict=True):
                copy.write_row([key, *(column.value(values) for column in written)])
    return pks


def analyze(tables: Collection[type[models.Model]]) -> None:
    """Refresh PostgreSQL's statistics of these models' tables (ANALYZE samples a bounded number of rows);
    nothing elsewhere."""
    for model in sorted(tables, key=lambda model: model._meta.db_table):
        connection = connections[router.db_for_write(model)]
        if connection.vendor == "postgresql":
            with connection.cursor() as cursor:
                cursor.execute(f"ANALYZE {connection.ops.quote_name(model._meta.db_table)}")


def update(
    model: type[models.Model], fields: Sequence[str], rows: Sequence[tuple[Any, Sequence[Any]]]
) -> None:
    """Write `fields` (names or attnames) of rows of `model` from (pk, their values in the order of
    `fields`, a foreign key's as its id), no instance built: on PostgreSQL COPY into a temporary table and
    one UPDATE joining it (from COPY_UPDATE_MIN rows), otherwise one UPDATE sent for every row at once
    (`executemany`). Django's bulk_update would build a CASE of every row for every field, whose building
    costs more than the writes."""
    if not rows:
        return
    connection = connections[router.db_for_write(model)]
    columns = concrete(model, fields)
    if connection.vendor != "postgresql" or len(rows) < COPY_UPDATE_MIN:
        _update_each(model, columns, rows)
        return
    quote = connection.ops.quote_name
    pk = model._meta.pk
    assert pk is not None  # every concrete model has one
    table = quote(model._meta.db_table)
    prepared = [_preparer(field, connection) for field in columns]
    temporary = quote(f"{model._meta.db_table}_update")
    definitions = ", ".join(f"{quote(_column(field))} {field.db_type(connection)}" for field in columns)
    key = quote(_column(pk))
    assignments = ", ".join(f"{quote(_column(field))} = new.{quote(_column(field))}" for field in columns)
    # one transaction: the temporary table goes with a failure, as the rows' writes do
    with transaction.atomic(using=connection.alias), connection.cursor() as cursor:
        cursor.execute(
            f"CREATE TEMPORARY TABLE {temporary} ({key} {pk.rel_db_type(connection)}, {definitions})"
        )
        with (
            connection.wrap_database_errors,
            cursor.cursor.copy(f"COPY {temporary} FROM STDIN") as copy,
        ):
            for pk_value, values in rows:
                copy.write_row(
                    [pk_value, *(prepare(value) for prepare, value in zip(prepared, values, strict=True))]
                )
        # the planner's row count of the new table, so that it joins by the table's primary key index
        cursor.execute(f"ANALYZE {temporary}")
        cursor.execute(
            f"UPDATE {table} SET {assignments} FROM {temporary} new WHERE {table}.{key} = new.{key}"
        )
        cursor.execute(f"DROP TABLE {temporary}")


def update_instances(rows: Sequence[models.Model], fields: Sequence[str]) -> None:
    """Write `fields` of these instances (of one model) as they hold them: one UPDATE by primary key sent
    for every row at once (`executemany`), for the few rows of one step, where a temporary table would
    cost more statements than it saves."""
    if not rows:
        return
    model = type(rows[0])
    columns = concrete(model, fields)
    _update_each(
        model, columns, [(row.pk, [getattr(row, field.attname) for field in columns]) for row in rows]
    )


def _update_each(
    model: type[models.Model],
    columns: Sequence[models.Field[Any, Any]],
    rows: Sequence[tuple[Any, Sequence[Any]]],
) -> None:
    connection = connections[router.db_for_write(model)]
    quote = connection.ops.quote_name
    pk = model._meta.pk
    assert pk is not None  # every concrete model has one
    assignments = ", ".join(f"{quote(_column(field))} = %s" for field in columns)
    params = [
        [field.get_db_prep_save(value, connection) for field, value in zip(columns, values, strict=True)]
        + [key]
        for key, values in rows
    ]
    table = quote(model._meta.db_table)
    with connection.cursor() as cursor:
        cursor.executemany(f"UPDATE {table} SET {assignments} WHERE {quote(_column(pk))} = %s", params)


def take(
    model: type[models.Model], pks: Sequence[Any], values: Values, free: str, free_params: Sequence[Any] = ()
) -> set[Any]:
    """Write `values` (by field name) to those rows of `pks` that the SQL condition `free` (over the
    table's quoted columns, with `free_params`) holds for, and answer the pks written: one UPDATE ...
    RETURNING per BATCH pks, so of two callers racing for a row exactly one takes it (a queued marker)."""
    connection = connections[router.db_for_write(model)]
    quote = connection.ops.quote_name
    pk = model._meta.pk
    assert pk is not None  # every concrete model has one
    columns = concrete(model, list(values))
    assignments = ", ".join(f"{quote(_column(field))} = %s" for field in columns)
    prepared = [field.get_db_prep_save(values[field.name], connection) for field in columns]
    table, key = quote(model._meta.db_table), quote(_column(pk))
    taken: set[Any] = set()
    with connection.cursor() as cursor:
        for start in range(0, len(pks), BATCH):
            chunk = list(pks[start : start + BATCH])
            cursor.execute(
                f"UPDATE {table} SET {assignments} "
                f"WHERE {key} IN ({', '.join(['%s'] * len(chunk))}) AND ({free}) RETURNING {key}",
                [*prepared, *chunk, *free_params],
            )
            taken.update(row[0] for row in cursor.fetchall())
    return taken


def concrete(model: type[models.Model], names: Sequence[str]) -> list[models.Field[Any, Any]]:
    """The concrete fields of `model` by name or attname, in the order given."""
    fields = {name: field for field in model._meta.concrete_fields for name in (field.name, field.attname)}
    return [fields[name] for name in names]


_UNSET = object()


class _Column:
    """How one field is written: its value prepared for COPY, or its default when a row leaves it out
    (always the save time for a field that sets itself on save: auto_now, auto_now_add)."""

    def __init__(self, field: models.Field[Any, Any], connection: Any, template: models.Model) -> None:
        self.attname, self.name, self.relation = field.attname, field.name, field.is_relation
        self.prepare = _preparer(field, connection)
        self.automatic = bool(getattr(field, "auto_now", False) or getattr(field, "auto_now_add", False))
        default = field.pre_save(template, True) if self.automatic else getattr(template, field.attname)
        self.default = self.prepare(default)

    def value(self, values: Values) -> Any:
        if self.automatic:
            return self.default
        value = values.get(self.attname, _UNSET)
        if value is _UNSET:
            value = values.get(self.name, _UNSET)
            if value is _UNSET:
                return self.default
            if self.relation and value is not None:
                value = value.pk
        return self.prepare(value)


def _column(field: models.Field[Any, Any]) -> str:
    """The column of a concrete field (every one has a column)."""
    column = field.column
    assert column is not None
    return column


def _preparer(field: models.Field[Any, Any], connection: Any) -> Callable[[Any], Any]:
    """How a value of `field` is written: JSON as its text (COPY's text format needs no adapter, and
    Django's JSON adapter costs more than the encoding), None as NULL, a plain string, number or boolean
    as it is (what Django's preparation answers for them), the rest as Django prepares it."""
    if isinstance(field, models.JSONField) and field.encoder is None:
        encode = json.JSONEncoder().encode
        return lambda value: None if value is None else encode(value)
    prepare = field.get_db_prep_save
    return lambda value: value if type(value) in PLAIN else prepare(value, connection)
