"""`ClusterRecord`: what one scheduler run computed per cluster, as packed arrays.

A reschedule stores this record instead of the per-cluster explanation: building 10,000 dicts or lists of
Python values and encoding them as JSON cost several times the scheduler run itself. The record keeps
each explanation column as an array (names joined as one text, filter reasons as codes into their
distinct texts, scores as integers with a mask of the clusters that have one) and packs them into one
zstd-compressed byte string. Pages read the arrays directly (sorting and filtering with numpy, building
only the rows they show); the explanation rows of `schedule -o json` and the API are built from it on
demand (`columns`, `row`), equal to what the scheduler's report lists.

Every run on one inventory lists its cluster names, or some of them, in its own order: a run's name
column holds positions into the inventory's `NameTable` (its names joined and compressed once, by
whichever run needs them first), so a run packs a small array of positions instead of joining and
compressing 10,000 names again. The record refers to the table by its key (a digest of its packed
bytes) and the table is stored once, apart (`ClusterRecord.name_table`): at 50,000 clusters the table
is about 87 kB, and records that held the names of their 20,000 candidates took 144 kB on average.
Unpacking finds the table among those this process packed or read lately, else asks the caller's
`tables` for its bytes. A record packed before tables were stored apart carries its table's bytes after
its own, or its names themselves, and still reads.

Each family's columns are keyed as its report's cluster entries: `name` (text), `selected` (flag),
`filteredBy` (reason or None); any other key holds integers or None, or (OCM `scores`) a mapping of
such integer columns, which a row shows as a dict of the values present.

A ranked run lists its clusters by `total` descending, ties by inventory position, then the unranked
ones by position (OCM's sort). Packed in rank order, the positions are a permutation that barely
compresses (about 18 kB of a 62 kB record at 10,000 clusters); when the rows follow that rule, the
record is packed in position order instead (which clusters are listed as a bitmap over the inventory,
every column in the same order, `rank` as the row numbers it is) and unpacking sorts the rows back.
An unranked run listed in position order (a Fleet run lists every member cluster by name, which is
inventory order) packs its names as the same bitmap.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import os
import threading
import zlib
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property, lru_cache
from typing import Any

import numpy as np
import zstandard

NAME, SELECTED, FILTERED_BY = "name", "selected", "filteredBy"
# The column a ranked run's rows are sorted by (descending, ties by position), and its rank column.
TOTAL, RANK = "total", "rank"
# Records are zstd frames at level 1: at 50,000 clusters a run's 200 kB of arrays pack in 0.4 ms and
# unpack in 0.2, where zlib (level 1, as records were first packed, and still read) took 2.5 and 0.7 ms
# for a slightly larger result; a full reschedule packs thousands, and pages unpack one per view.
_COMPRESSOR = zstandard.ZstdCompressor(level=1)
_ZSTD_MAGIC = b"\x28\xb5\x2f\xfd"
# the integer types a packed column may take, smallest first
_INT_TYPES = (np.int8, np.int16, np.int32, np.int64)


@dataclass(frozen=True, eq=False)
class Ints:
    """An integer column with None where `present` is False (its value there is 0)."""

    values: np.ndarray  # int64
    present: np.ndarray  # bool

    @classmethod
    def of(cls, items: Sequence[int | None]) -> Ints:
        present = np.fromiter((item is not None for item in items), dtype=bool, count=len(items))
        values = np.fromiter((item or 0 for item in items), dtype=np.int64, count=len(items))
        return cls(values, present)

    def tolist(self) -> list[int | None]:
        values: list[int | None] = self.values.tolist()
        if self.present.all():
            return values
        return [v if p else None for v, p in zip(values, self.present.tolist(), strict=True)]


@dataclass(frozen=True, eq=False)
class Reasons:
    """A text-or-None column as codes into its distinct texts (-1: None)."""

    texts: list[str]
    codes: np.ndarray  # int64

    @classmethod
    def of(cls, items: Iterable[str | None]) -> Reasons:
        """The column of `items`, texts numbered in first-seen order. The items are grouped by object
        first, as arrays: a column of a large fleet is mostly a few shared text objects (one per filter),
        so the texts are compared per distinct object, not per cluster."""
        listed = items if isinstance(items, list) else list(items)
        objects = np.fromiter(map(id, listed), dtype=np.uint64, count=len(listed))
        _, first, inverse = np.unique(objects, return_index=True, return_inverse=True)
        seen = np.argsort(first, kind="stable")  # the distinct objects in the order first listed
        index: dict[str, int] = {}
        codes = np.empty(len(first), dtype=np.int64)
        codes[seen] = [
            -1 if item is None else index.setdefault(item, len(index))
            for item in map(listed.__getitem__, first[seen].tolist())
        ]
        return cls(list(index), codes[inverse.reshape(-1)])

    @classmethod
    def numbered(cls, texts: Sequence[str], keys: np.ndarray) -> Reasons:
        """The column whose rows hold `texts[key]` (key -1: None), the texts renumbered in the order their
        first row lists them, as `of` numbers them; a text no row holds is left out. Each text's first
        row is found without sorting the rows."""
        listed = np.flatnonzero(keys >= 0)
        first_rows = np.full(len(texts), len(keys), dtype=np.int64)
        np.minimum.at(first_rows, keys[listed], listed)
        used = np.flatnonzero(first_rows < len(keys))
        firsts = used[np.argsort(first_rows[used])]
        renumbered = np.full(len(texts) + 1, -1, dtype=np.int64)  # the last entry: None stays -1
        renumbered[firsts] = np.arange(len(firsts))
        return cls([texts[k] for k in firsts.tolist()], renumbered[keys])

    def tolist(self) -> list[str | None]:
        texts: list[str | None] = [*self.texts, None]  # code -1 reads the last entry
        return [texts[code] for code in self.codes.tolist()]


class ReasonColumn:
    """A reason column being filled in, filter after filter: per row a code into the texts written so
    far (-1: None). A run over a large fleet writes small integers, one text per filter or per distinct
    cause, and its record's column (`reasons`) needs no look at each row's text."""

    def __init__(self, size: int) -> None:
        self.codes = np.full(size, -1, dtype=np.int64)
        self._texts: list[str] = []
        self._codes: dict[str, int] = {}

    def code(self, text: str | None) -> int:
        if text is None:
            return -1
        code = self._codes.get(text)
        if code is None:
            code = self._codes[text] = len(self._texts)
            self._texts.append(text)
        return code

    def __setitem__(self, where: Any, text: str | None) -> None:
        """`text` for the rows at `where` (an index, a mask or a slice)."""
        self.codes[where] = self.code(text)

    def put(self, where: Any, texts: Sequence[str | None], keys: np.ndarray) -> None:
        """For each row at `where`, the text its entry in `keys` picks from `texts`."""
        codes = np.fromiter(map(self.code, texts), dtype=np.int64, count=len(texts))
        self.codes[where] = codes[keys]

    def __getitem__(self, index: Any) -> str | None:
        code = int(self.codes[index])
        return None if code < 0 else self._texts[code]

    def reasons(self) -> Reasons:
        return Reasons.numbered(self._texts, self.codes)


@dataclass(frozen=True, eq=False)
class NameTable:
    """The cluster names of one inventory in its order, and their packed form (joined by newlines and
    compressed), which every record of a run on that inventory carries."""

    names: tuple[str, ...]
    packed: bytes

    @cached_property
    def digest(self) -> bytes:
        """A digest of the packed table: every record of a run on the inventory hashes the table, once."""
        return hashlib.blake2b(self.packed, digest_size=16).digest()

    @property
    def key(self) -> str:
        """The digest as the text a record refers to the table by."""
        return self.digest.hex()

    @cached_property
    def ascending(self) -> bool:
        """Whether the names are distinct and in order, as an inventory lists them: positions into the
        table then sort as the names do."""
        names = self.names
        return all(a < b for a, b in itertools.pairwise(names))


# The first character of a front-coded table's text; a table written before starts with a name.
FRONT_CODED = "\0"


class MissingNameTable(LookupError):
    """A record refers to a name table that neither this process nor the caller's `tables` holds."""


# How many name tables a process keeps by key: those of the few inventories its runs and pages use.
_KEPT_TABLES = 8
_tables: dict[str, NameTable] = {}
_tables_lock = threading.Lock()


def _keep(table: NameTable) -> NameTable:
    """Keep `table` by key (the most recently used last), dropping the least recently used beyond
    _KEPT_TABLES."""
    with _tables_lock:
        _tables.pop(table.key, None)
        _tables[table.key] = table
        while len(_tables) > _KEPT_TABLES:
            del _tables[next(iter(_tables))]
    return table


def _table_by_key(key: str, tables: Callable[[str], bytes | None] | None) -> NameTable:
    """The table a record refers to by `key`: kept by this process, else read from `tables` (checked
    against its key, as a table read from elsewhere should be)."""
    with _tables_lock:
        found = _tables.get(key)
    if found is not None:
        return _keep(found)
    packed = tables(key) if tables is not None else None
    if packed is None:
        raise MissingNameTable(f"the name table {key} of this record is not stored")
    table = _unpacked_table(bytes(packed))
    if table.key != key:
        raise MissingNameTable(f"the name table stored as {key} has the digest {table.key}")
    return _keep(table)


@lru_cache(maxsize=8)
def _packed_table(names: tuple[str, ...]) -> NameTable:
    """The table of these names, packed: an inventory patched in place may list the same names in a new
    tuple, which then finds the table packed for the old one. An inventory lists its names sorted, so
    each is written as the length of the prefix it shares with the one before and the rest ("front
    coding"): a fifth to a half of the compressed size of the names themselves."""
    lines, previous = [FRONT_CODED], ""
    for name in names:
        shared = len(os.path.commonprefix((previous, name)))
        lines.append(f"{shared} {name[shared:]}")
        previous = name
    return NameTable(names, zlib.compress("\n".join(lines).encode(), 9))


@lru_cache(maxsize=8)
def _unpacked_table(packed: bytes) -> NameTable:
    """The table of a packed name table (front-coded, or joined by newlines as tables were first
    written); the few recent tables a process's pages read are decoded once."""
    text = zlib.decompress(packed).decode()
    if not text.startswith(FRONT_CODED):
        return NameTable(tuple(text.split("\n")), packed)
    names, previous = [], ""
    for line in text.split("\n")[1:]:
        shared, rest = line.split(" ", 1)
        previous = previous[: int(shared)] + rest
        names.append(previous)
    return NameTable(tuple(names), packed)


@dataclass(frozen=True, eq=False)
class Positions:
    """A name column as positions into a `NameTable`."""

    table: NameTable
    order: np.ndarray  # int64

    def __len__(self) -> int:
        return len(self.order)

    def tolist(self) -> list[str]:
        names = self.table.names
        return [names[position] for position in self.order.tolist()]


def name_column(names: tuple[str, ...], order: np.ndarray) -> Positions:
    """The names at positions `order` of an inventory's `names`, as positions into the inventory's table
    (stored apart from the record, so a record listing a few of a large hub's clusters stays small too)."""
    return Positions(name_table(names), order)


# How many inventories' tables a process keeps by their name tuple: a run's inventory is shared by every
# run until the hub changes, so the few most recent are all it needs.
_KEPT_INVENTORIES = 8
# id of the tuple -> (the tuple, its table): the table's own tuple may be an equal, older one
_inventories: dict[int, tuple[tuple[str, ...], NameTable]] = {}
# a web process's threads build records at once: the eviction must not interleave with another insert
_inventories_lock = threading.Lock()


def name_table(names: tuple[str, ...]) -> NameTable:
    """The table of the inventory that lists `names`, packed once per inventory and found by the tuple's
    identity: every run on one inventory passes the same tuple, and hashing 50,000 names per run to find
    the table cost more than the rest of building a record's name column. The entry holds the tuple, so
    its identity is not reused while it is kept."""
    with _inventories_lock:
        found = _inventories.get(id(names))
    if found is not None and found[0] is names:
        return found[1]
    table = _packed_table(names)  # outside the lock: packing a large inventory takes a while
    with _inventories_lock:
        _inventories[id(names)] = (names, table)
        while len(_inventories) > _KEPT_INVENTORIES:
            del _inventories[next(iter(_inventories))]
    return table


Column = list[str] | Positions | np.ndarray | Reasons | Ints | dict[str, Ints]


@dataclass(frozen=True, eq=False)
class ClusterRecord:
    """The explanation columns of one scheduler run, keyed and ordered as the report's cluster entries."""

    columns: dict[str, Column]

    def __len__(self) -> int:
        names = self.columns.get(NAME, [])
        assert isinstance(names, list | Positions)
        return len(names)

    @cached_property
    def names(self) -> list[str]:
        names = self.columns.get(NAME, [])
        if isinstance(names, Positions):
            return names.tolist()
        assert isinstance(names, list)
        return names

    @property
    def name_table(self) -> NameTable | None:
        """The inventory's name table the name column holds positions into (None: it holds the names),
        which the packed record refers to by key and whoever stores the record stores once."""
        names = self.columns.get(NAME)
        return names.table if isinstance(names, Positions) else None

    @property
    def selected(self) -> np.ndarray:
        flags = self.columns.get(SELECTED)
        return np.zeros(len(self), dtype=bool) if not isinstance(flags, np.ndarray) else flags

    @property
    def reasons(self) -> Reasons:
        reasons = self.columns.get(FILTERED_BY)
        return reasons if isinstance(reasons, Reasons) else Reasons([], np.full(len(self), -1))

    def ints(self, key: str) -> Ints | None:
        column = self.columns.get(key)
        return column if isinstance(column, Ints) else None

    def group(self, key: str) -> dict[str, Ints]:
        column = self.columns.get(key)
        return column if isinstance(column, dict) else {}

    def names_at(self, rows: np.ndarray) -> list[str]:
        """The names of these rows, without building the names of the others (a page of a large run)."""
        names = self.columns.get(NAME, [])
        if isinstance(names, Positions):
            table = names.table.names
            return [table[position] for position in names.order[rows].tolist()]
        assert isinstance(names, list)
        return [names[row] for row in rows.tolist()]

    def name_keys(self, rows: np.ndarray) -> np.ndarray:
        """Keys that sort these rows as their names sort (numpy compares code points, as Python's str
        does): their positions into the table of an inventory's sorted names, else the names."""
        names = self.columns.get(NAME)
        if isinstance(names, Positions) and names.table.ascending:
            keys: np.ndarray = names.order[rows]
            return keys
        return np.asarray(self.names_at(rows), dtype=str)

    @cached_property
    def name_order(self) -> np.ndarray:
        """Row positions in name order."""
        return np.argsort(self.name_keys(np.arange(len(self))), kind="stable")

    @cached_property
    def name_rank(self) -> np.ndarray:
        """Each row's place in name order: a sort key that breaks ties by name."""
        ranks = np.empty(len(self), dtype=np.int64)
        ranks[self.name_order] = np.arange(len(self))
        return ranks

    # --- as the report lists it

    def columns_as_lists(self) -> dict[str, Any]:
        """Every column as a list of plain values (a mapping column as a dict of lists)."""
        return {key: _as_list(column) for key, column in self.columns.items()}

    def row(self, index: int) -> dict[str, Any]:
        """Row `index` as the report's cluster entry (a mapping column: a dict of the values present)."""
        item: dict[str, Any] = {}
        for key, column in self.columns.items():
            if isinstance(column, dict):
                item[key] = {
                    name: int(ints.values[index]) for name, ints in column.items() if ints.present[index]
                }
            elif isinstance(column, Ints):
                item[key] = int(column.values[index]) if column.present[index] else None
            elif isinstance(column, Reasons):
                code = int(column.codes[index])
                item[key] = None if code < 0 else column.texts[code]
            elif isinstance(column, np.ndarray):
                item[key] = bool(column[index])
            elif isinstance(column, Positions):
                item[key] = column.table.names[int(column.order[index])]
            else:
                item[key] = column[index]
        return item

    def rows(self) -> list[dict[str, Any]]:
        """Every row, built from the columns as lists (one pass per column, not one per cell)."""
        lists = self.columns_as_lists()
        rows: list[dict[str, Any]] = [{} for _ in range(len(self))]
        for key, values in lists.items():
            if isinstance(values, dict):
                cells = [
                    {name: column[i] for name, column in values.items() if column[i] is not None}
                    for i in range(len(rows))
                ]
            else:
                cells = values
            for row, cell in zip(rows, cells, strict=True):
                row[key] = cell
        return rows

    @classmethod
    def from_columns(cls, columns: Mapping[str, Any]) -> ClusterRecord:
        """The record of explanation columns (one list per key, as `columns_as_lists` gives them)."""
        record: dict[str, Column] = {}
        for key, values in columns.items():
            if key == NAME:
                record[key] = [str(name) for name in values]
            elif key == SELECTED:
                record[key] = np.asarray([bool(flag) for flag in values], dtype=bool)
            elif key == FILTERED_BY:
                record[key] = Reasons.of(values)
            elif isinstance(values, Mapping):
                record[key] = {name: Ints.of(column) for name, column in values.items()}
            else:
                record[key] = Ints.of(values)
        return cls(record)

    @classmethod
    def from_rows(cls, items: Sequence[Mapping[str, Any]]) -> ClusterRecord:
        """The record of report rows (an explanation stored as rows before explanations were columns)."""
        if not items:
            return cls({})
        columns: dict[str, Any] = {}
        for key, value in items[0].items():
            if isinstance(value, Mapping):
                names = list(dict.fromkeys(name for item in items for name in item.get(key) or {}))
                columns[key] = {name: [(item.get(key) or {}).get(name) for item in items] for name in names}
            else:
                columns[key] = [item.get(key) for item in items]
        return cls.from_columns(columns)

    # --- stored

    def digest(self) -> str:
        """A short digest of the columns themselves, equal for two records that pack to the same bytes
        and cheap next to packing (no compression): a run whose digest is the stored one's need not be
        packed at all. Each column adds its key, its layout and its arrays' bytes with their dtypes, as
        packing shrinks them (integers in their smallest type, flags as bits): hashing is the cost."""
        hashed = hashlib.blake2b(digest_size=16)

        def add(*parts: object) -> None:
            for part in parts:
                if isinstance(part, np.ndarray):
                    small = np.packbits(part) if part.dtype == bool else _smallest(part)
                    hashed.update(f"{part.dtype.str}{small.dtype.str}:{len(part)};".encode())
                    hashed.update(small.tobytes())
                else:
                    hashed.update(json.dumps(part).encode() + b";")

        for key, column in self.columns.items():
            if isinstance(column, dict):
                add(key, "group", list(column))
                for ints in column.values():
                    add(ints.values, ints.present)
            elif isinstance(column, Ints):
                add(key, "ints", column.values, column.present)
            elif isinstance(column, Reasons):
                add(key, "reasons", column.texts, column.codes)
            elif isinstance(column, np.ndarray):
                add(key, "flags", column)
            elif isinstance(column, Positions):
                add(key, "table", column.order)
                hashed.update(column.table.digest)
            else:
                # the names as their lengths and their concatenation: unambiguous whatever they hold, and
                # a fraction of their JSON's cost
                add(key, "names", np.fromiter(map(len, column), dtype=np.int64, count=len(column)))
                hashed.update("".join(column).encode() + b";")
        return hashed.hexdigest()

    def pack(self) -> bytes:
        """The record as compressed bytes: a JSON header naming each column's layout, then the arrays. A
        column that holds positions names its table by key (`name_table`, kept by this process so that
        it unpacks here without being read back). Rows that follow the ranked order are packed in
        position order (`_position_order`)."""
        placed = self._position_order()
        columns = self.columns
        if placed is not None:
            columns = {key: _permuted(column, placed) for key, column in columns.items()}
        layout: list[list[Any]] = []
        body: list[bytes] = []
        for key, column in columns.items():
            if isinstance(column, dict):
                layout.append([key, "group", [_pack_ints(name, ints, body) for name, ints in column.items()]])
            elif key == RANK and placed is not None and isinstance(column, Ints):
                body.append(np.packbits(column.present).tobytes())
                layout.append([key, "row numbers"])
            elif isinstance(column, Ints):
                layout.append([key, "ints", _pack_ints(key, column, body)])
            elif isinstance(column, Reasons):
                codes = _smallest(column.codes)
                body.append(codes.tobytes())
                layout.append([key, "reasons", column.texts, codes.dtype.str])
            elif isinstance(column, np.ndarray):
                body.append(np.packbits(column).tobytes())
                layout.append([key, "flags"])
            elif isinstance(column, Positions):
                table = _keep(column.table)
                if placed is None and not _in_position_order(column, columns):
                    order = _smallest(column.order)
                    body.append(order.tobytes())
                    layout.append([key, "table", order.dtype.str, len(table.names), table.key])
                else:
                    listed = np.zeros(len(table.names), dtype=bool)
                    listed[column.order] = True
                    body.append(np.packbits(listed).tobytes())
                    layout.append([key, "listed", len(table.names), table.key])
            else:
                text = "\n".join(column).encode()
                body.append(text)
                layout.append([key, "names", len(text)])
        header = json.dumps({"rows": len(self), "columns": layout}, separators=(",", ":")).encode()
        return _COMPRESSOR.compress(len(header).to_bytes(4, "big") + header + b"".join(body))

    def _position_order(self) -> np.ndarray | None:
        """The row indices in inventory-position order, when the rows are listed as a ranked run lists
        them: those with a `total` first, by total descending and then by position, then the others by
        position, and `rank` (if any) numbering the ranked rows. None otherwise (the record is packed
        in its own order)."""
        names, total = self.columns.get(NAME), self.columns.get(TOTAL)
        if not isinstance(names, Positions) or not isinstance(total, Ints) or not len(names):
            return None
        positions, count = names.order, int(total.present.sum())
        if not total.present[:count].all():
            return None
        totals = total.values[:count]
        falls, ties = np.diff(totals) < 0, np.diff(totals) == 0
        if not (falls | (ties & (np.diff(positions[:count]) > 0))).all():
            return None
        if count < len(positions) and not (np.diff(positions[count:]) > 0).all():
            return None
        rank = self.columns.get(RANK)
        if rank is not None:
            numbers = np.arange(1, count + 1)
            if not isinstance(rank, Ints) or not np.array_equal(rank.present, total.present):
                return None
            if not np.array_equal(rank.values[:count], numbers):
                return None
        row_at = np.full(len(names.table.names), -1, dtype=np.int64)
        row_at[positions] = np.arange(len(positions))
        placed = row_at[row_at >= 0]
        # each cluster is listed once; a record listing one twice keeps its own order
        return placed if len(placed) == len(positions) else None

    @classmethod
    def unpack(cls, packed: bytes, tables: Callable[[str], bytes | None] | None = None) -> ClusterRecord:
        """The record of `pack`'s bytes; `tables` answers the packed bytes of a name table by key (None:
        not stored) when this process does not hold it. MissingNameTable if neither does."""
        data, inline = decompressed(packed)
        size = int.from_bytes(data[:4], "big")
        header = json.loads(data[4 : 4 + size])
        reader = _Reader(data, 4 + size, header["rows"])
        columns: dict[str, Column] = {}
        placed = False
        for key, kind, *detail in header["columns"]:
            if kind == "group":
                columns[key] = {name: reader.ints(*spec) for name, *spec in detail[0]}
            elif kind == "ints":
                columns[key] = reader.ints(*detail[0][1:])
            elif kind == "row numbers":
                present = reader.flags()
                columns[key] = Ints(np.zeros(len(present), dtype=np.int64), present)
            elif kind == "reasons":
                columns[key] = Reasons(detail[0], reader.array(detail[1]).astype(np.int64))
            elif kind == "flags":
                columns[key] = reader.flags()
            elif kind in ("table", "listed"):
                *shape, count, where = detail
                if isinstance(where, str):
                    unpacked = _table_by_key(where, tables)
                else:  # packed before tables were stored apart: the table's bytes follow the record's
                    table, inline = inline[:where], inline[where:]
                    unpacked = _unpacked_table(table) if count else NameTable((), table)
                if kind == "table":
                    order = reader.array(shape[0]).astype(np.int64)
                else:
                    order, placed = np.flatnonzero(reader.flags(count)), True
                columns[key] = Positions(unpacked, order)
            else:
                text = reader.take(detail[0]).decode()
                columns[key] = text.split("\n") if reader.rows else []
        return cls(_ranked_order(columns) if placed and TOTAL in columns else columns)


def decompressed(packed: bytes) -> tuple[bytes, bytes]:
    """A packed record's header and arrays, and what follows them (the inline name table of a record
    packed before tables were stored apart: zlib streams, as every record then was)."""
    if packed.startswith(_ZSTD_MAGIC):
        return zstandard.ZstdDecompressor().decompress(packed), b""
    stream = zlib.decompressobj()
    return stream.decompress(packed) + stream.flush(), stream.unused_data


def _in_position_order(names: Positions, columns: Mapping[str, Column]) -> bool:
    """Whether an unranked record (no `total`) lists its clusters in inventory order, as a Fleet run
    lists every member: its names then pack as a bitmap over the inventory (6 kB at 50,000 clusters,
    where their positions took 200 kB that barely compress) and unpack in that order."""
    return TOTAL not in columns and bool((np.diff(names.order) > 0).all())


def descending(values: np.ndarray) -> np.ndarray:
    """Indices of the integer `values` from the largest down, equal values in their own order (a stable
    sort). Values that fit 16 bits, as scores and their weighted totals do, sort by radix: 0.3 ms for
    25,000 values where sorting them as 64-bit integers took 1.5 to 4."""
    keys = -values
    small = np.iinfo(np.int16)
    if len(keys) and small.min <= int(keys.min()) and int(keys.max()) <= small.max:
        keys = keys.astype(np.int16)
    order: np.ndarray = np.argsort(keys, kind="stable")
    return order


def _ranked_order(columns: dict[str, Column]) -> dict[str, Column]:
    """Columns packed in position order, put back in the order of a ranked run: rows with a `total` by
    total descending (a stable sort keeps position order among ties), then the others; `rank` numbers
    the ranked rows."""
    total = columns[TOTAL]
    assert isinstance(total, Ints)
    ranked = np.flatnonzero(total.present)
    order = np.concatenate([ranked[descending(total.values[ranked])], np.flatnonzero(~total.present)])
    rows = {key: _permuted(column, order) for key, column in columns.items()}
    rank = rows.get(RANK)
    if isinstance(rank, Ints):
        numbers = np.arange(1, len(order) + 1)
        rows[RANK] = Ints(np.where(rank.present, numbers, 0), rank.present)
    return rows


def _permuted(column: Column, index: np.ndarray) -> Column:
    """The column's rows taken in the order of `index`."""
    if isinstance(column, dict):
        return {name: Ints(ints.values[index], ints.present[index]) for name, ints in column.items()}
    if isinstance(column, Ints):
        return Ints(column.values[index], column.present[index])
    if isinstance(column, Reasons):
        return Reasons(column.texts, column.codes[index])
    if isinstance(column, Positions):
        return Positions(column.table, column.order[index])
    if isinstance(column, np.ndarray):
        flags: np.ndarray = column[index]
        return flags
    return [column[i] for i in index.tolist()]


def _as_list(column: Column) -> Any:
    if isinstance(column, dict):
        return {name: ints.tolist() for name, ints in column.items()}
    if isinstance(column, Ints | Reasons | Positions | np.ndarray):
        return column.tolist()
    return list(column)


def _smallest(values: np.ndarray) -> np.ndarray:
    """`values` in the smallest integer type that holds them (scores fit a byte, ranks two)."""
    if not len(values):
        return values.astype(np.int8)
    low, high = int(values.min()), int(values.max())
    for kind in _INT_TYPES:
        info = np.iinfo(kind)
        if info.min <= low and high <= info.max:
            return values.astype(kind)
    return values


def _pack_ints(name: str, ints: Ints, body: list[bytes]) -> list[Any]:
    """[name, dtype, whether a mask follows] of one integer column, its bytes appended to `body`."""
    values = _smallest(ints.values)
    body.append(values.tobytes())
    masked = not bool(ints.present.all())
    if masked:
        body.append(np.packbits(ints.present).tobytes())
    return [name, values.dtype.str, masked]


class _Reader:
    """Reads the packed arrays of a record one after the other."""

    def __init__(self, data: bytes, offset: int, rows: int) -> None:
        self.data, self.offset, self.rows = data, offset, rows

    def take(self, size: int) -> bytes:
        chunk = self.data[self.offset : self.offset + size]
        self.offset += size
        return chunk

    def array(self, dtype: str) -> np.ndarray:
        kind = np.dtype(dtype)
        return np.frombuffer(self.take(kind.itemsize * self.rows), dtype=kind)

    def flags(self, count: int | None = None) -> np.ndarray:
        """A bitmap of `count` flags (default: one per row)."""
        count = self.rows if count is None else count
        packed = np.frombuffer(self.take((count + 7) // 8), dtype=np.uint8)
        return np.unpackbits(packed, count=count).astype(bool)

    def ints(self, dtype: str, masked: bool) -> Ints:
        values = self.array(dtype).astype(np.int64)
        present = self.flags() if masked else np.ones(self.rows, dtype=bool)
        return Ints(values, present)
