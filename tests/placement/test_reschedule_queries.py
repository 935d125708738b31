"""One reschedule makes a pinned number of queries, whatever the placement selects: the stored state is
read once for the compare and set, and the result is written once. A run that would store what is
stored writes only its time, so a full reschedule with nothing changed costs the database almost
nothing. A bound that has to rise is a per-cluster or per-decision query creeping in, not a number to
bump."""

from collections import Counter
from datetime import timedelta
from typing import Any

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from inventory.models import Hub
from placement import service, tasks
from placement.models import DecisionChange, Owner, Placement
from tests.placement.conftest import NOW, WEB_SPEC

pytestmark = pytest.mark.django_db

# The inventory's name table the records refer to: looked up, and (stored by no run before) inserted,
# then tables unused for an hour pruned; a later run looks it up only.
NAMES_FIRST = 3
# The snapshot's version, the stored state (row with its newest history entry, decisions) twice (read,
# then under the lock, in a transaction: a savepoint in a test), then the run's rows: the decision
# pages, the events (insert, the oldest beyond those kept), the name table, the row, the history entry
# (one INSERT that skips a duplicate key).
FIRST_RUN = 12 + NAMES_FIRST
# The snapshot's version, the stored state (row, decisions) and the run's time.
UNCHANGED_RUN = 4
# A full reschedule's chunk with nothing changed, whatever its size: the hub, the snapshot's version
# and the hub's decisions, the chunk's placements and their decisions, the snapshot's version for the
# runs, and one UPDATE of their time.
UNCHANGED_CHUNK = 7
# A chunk's first runs, whatever its size: the 6 reads above, the stored state under the lock (rows,
# decisions) in a transaction (a savepoint in a test), then each kind of row in one statement: the
# decision pages, the name table, the placements, the events (insert, the oldest beyond those kept),
# the history.
FIRST_CHUNK = 6 + 2 + 2 + 5 + NAMES_FIRST


def placement(hub: Hub, name: str, spec: dict[str, Any]) -> Placement:
    return Placement.objects.create(
        hub=hub, owner=Owner.DASHBOARD, kind=Placement.Kind.PLACEMENT, namespace="web", name=name, spec=spec
    )


def statements(queries: CaptureQueriesContext) -> Counter[str]:
    return Counter(query["sql"].split()[0] for query in queries.captured_queries)


@pytest.mark.parametrize("number", [1, None])
def test_a_first_run_makes_the_same_queries_whatever_it_selects(
    manifests_hub: Hub, number: int | None
) -> None:
    service.hub_snapshot(manifests_hub, NOW)
    row = placement(manifests_hub, "shop", {**WEB_SPEC, "numberOfClusters": number})
    with CaptureQueriesContext(connection) as queries:
        service.reschedule(row, trigger="created", now=NOW)
    assert len(row.family.current_selection(row)) == (1 if number else 5)
    assert len(queries) == FIRST_RUN, statements(queries)


def test_a_run_that_changes_nothing_writes_only_its_time(manifests_hub: Hub) -> None:
    row = placement(manifests_hub, "shop", WEB_SPEC)
    service.reschedule(row, trigger="created", now=NOW)
    # the first run's events, and its decisions' Steady scores, are what the second changes
    service.reschedule(row, trigger="periodic resync", now=NOW)
    stored = Placement.objects.select_related("hub").get(pk=row.pk)
    later = NOW + timedelta(seconds=1)
    with CaptureQueriesContext(connection) as queries:
        service.reschedule(stored, trigger="periodic resync", now=later)
    assert len(queries) == UNCHANGED_RUN, statements(queries)
    [update] = [query["sql"] for query in queries.captured_queries if query["sql"].startswith("UPDATE")]
    assert update.split(" SET ")[1].startswith('"last_scheduled_at" =')
    again = Placement.objects.get(pk=row.pk)
    assert again.last_scheduled_at == later
    kept = ("updated", "run_digest", "status", "explanation")
    assert [getattr(again, name) for name in kept] == [getattr(stored, name) for name in kept]


def test_a_chunk_with_nothing_changed_reads_its_placements_and_decisions_once(manifests_hub: Hub) -> None:
    rows = [placement(manifests_hub, f"shop-{index}", WEB_SPEC) for index in range(6)]
    ids = [row.pk for row in rows]
    # each pass moves what the next one computes: events, Steady and Balance scores of decisions stored
    for _ in range(3):
        tasks.reschedule_chunk(manifests_hub.pk, ids)
    with CaptureQueriesContext(connection) as queries:
        tasks.reschedule_chunk(manifests_hub.pk, ids)
    assert len(queries) == UNCHANGED_CHUNK, statements(queries)
    assert statements(queries)["UPDATE"] == 1


@pytest.mark.parametrize("size", [2, 6])
def test_a_chunk_stores_its_runs_in_a_number_of_queries_that_does_not_grow_with_it(
    manifests_hub: Hub, size: int
) -> None:
    service.hub_snapshot(manifests_hub)
    ids = [placement(manifests_hub, f"shop-{index}", WEB_SPEC).pk for index in range(size)]
    with CaptureQueriesContext(connection) as queries:
        tasks.reschedule_chunk(manifests_hub.pk, ids)
    assert DecisionChange.objects.filter(placement__in=ids).count() == size
    assert len(queries) == FIRST_CHUNK, statements(queries)
