"""A placement's explanation: stored compact by every reschedule, built per cluster only when asked.

A reschedule stores the scheduler's report without its per-cluster entries (`Placement.explanation`:
selection, weights, conditions, decisions, events) and what the scheduler computed per cluster as a
packed `ClusterRecord` (`Placement.cluster_record`: names, flags, reason codes and scores as arrays;
the names as positions into the inventory's name table, stored once for every record that refers to
it, `placement.nametables`).
Packing arrays costs a small part of the scheduler run; the per-cluster rows (10,000 dicts at 10,000
clusters, the report's JSON) are built when the API asks for them, and cached under a digest of the
record, so a new run is a new key and a cached entry is never stale. The score table reads the arrays
themselves and builds only the rows of the page it shows (`placement.tables.ScoreTable`).

An explanation that still lists its clusters (stored before the record existed, or made by a test) is
read the same way: its `clusters`, as rows or as columns, become the record.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cached_property
from typing import Any

from django.core.cache import cache

from placement import nametables
from placement.models import Placement
from placement.scheduler.fleet.report import FleetScheduleResult
from placement.scheduler.ocm.report import OcmScheduleResult
from placement.scheduler.record import ClusterRecord, NameTable

# How long built explanation rows stay cached; the key changes with every run that changes them.
ROWS_TIMEOUT = 600


@dataclass(eq=False)
class Explained:
    """What a run stores: the report without its clusters, and the per-cluster record (None: a run that
    failed, stored with an empty record). The record is packed only when the run is written: a run whose
    digest is the stored one's is not written, and packing costs more than building the record."""

    report: dict[str, Any]
    record: ClusterRecord | None = None

    @cached_property
    def packed(self) -> bytes:
        return b"" if self.record is None else self.record.pack()

    @property
    def name_table(self) -> NameTable | None:
        """The inventory's name table the packed record refers to, stored with it."""
        return None if self.record is None else self.record.name_table

    @cached_property
    def digest(self) -> str:
        """The report and the record's columns (`ClusterRecord.digest`) as a short digest: two runs
        that store the same have the same digest, so a run equal to the stored one need not be written
        again."""
        report = json.dumps(self.report, sort_keys=True, default=str).encode()
        hashed = hashlib.blake2b(report, digest_size=16)
        hashed.update(b"" if self.record is None else self.record.digest().encode())
        return hashed.hexdigest()


def stored(result: OcmScheduleResult | FleetScheduleResult) -> Explained:
    """What a run stores: the report without its clusters, and the per-cluster record."""
    return Explained(*result.to_explanation())


def record(placement: Placement) -> ClusterRecord:
    """The per-cluster record of the placement's last run (empty before its first)."""
    packed = placement.cluster_record
    if packed:
        return ClusterRecord.unpack(bytes(packed), nametables.packed)
    return record_of(placement.explanation or {})


def record_of(explanation: Mapping[str, Any]) -> ClusterRecord:
    """The record of an explanation that lists its clusters, as rows or as columns."""
    clusters = explanation.get("clusters") or {}
    if isinstance(clusters, Mapping):
        return ClusterRecord.from_columns(clusters)
    return ClusterRecord.from_rows(clusters)


def full(placement: Placement) -> dict[str, Any]:
    """The whole explanation as the scheduler's report has it, `clusters` as rows (the API's contract)."""
    explanation = dict(placement.explanation or {})
    packed = bytes(placement.cluster_record or b"")
    if not packed:
        if "clusters" in explanation:
            explanation["clusters"] = record_of(explanation).rows()
        return explanation
    key = f"placement-explanation-rows:{placement.pk}:{hashlib.blake2b(packed, digest_size=16).hexdigest()}"
    rows = cache.get(key)
    if rows is None:
        rows = ClusterRecord.unpack(packed, nametables.packed).rows()
        cache.set(key, rows, ROWS_TIMEOUT)
    # the report lists its clusters right after the selection
    answer: dict[str, Any] = {}
    for name, value in explanation.items():
        answer[name] = value
        if name == "selected":
            answer["clusters"] = rows
    answer.setdefault("clusters", rows)
    return answer
