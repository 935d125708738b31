"""Binding a cluster set while the watcher inserts the same ManagedClusterSetBinding row (real threads,
each in its own PostgreSQL transaction): the editor's insert waits for the watcher's, meets its row once
it commits and writes again as an update, so the request answers 201 (not a 500) with one row and one
audit entry. The audit entry commits with the row: when it cannot be written, no row is stored either."""

import threading
from collections.abc import Callable, Iterator

import pytest
from django.contrib.auth.models import User
from django.db import DataError, connection, transaction
from django.test import RequestFactory
from django.urls import reverse
from rest_framework.test import APIClient

from demohub import DemoHub
from inventory import editing, sync
from inventory.hubclient import KINDS_BY_NAME
from inventory.models import AuditEntry, Hub, ManagedClusterSet, ManagedClusterSetBinding, NamespaceRole
from tests.factories import ClusterSetRoleFactory, NamespaceRoleFactory, UserFactory, synced_demo_hub_row

pytestmark = [pytest.mark.services, pytest.mark.django_db(transaction=True)]
NAMESPACE = "team-race"
# whether another connection's insert of a binding row (the sync inserts with COPY) waits on a lock; read
# afresh each time, as PostgreSQL otherwise keeps one snapshot of the activity for the whole transaction
WAITING_ON_A_LOCK = (
    "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() "
    "AND wait_event_type = 'Lock' AND (query LIKE 'INSERT INTO \"inventory_managedclustersetbinding\"%%' "
    "OR query LIKE 'COPY \"inventory_managedclustersetbinding\"%%')"
)
# generous: the test machine may be busy, and the watcher commits as soon as the editor waits
SECONDS = 60
# the uid of the row the watcher inserts; the editor's write replaces it with the hub's answer
WATCHED_UID = "00000000-0000-4000-8000-000000000001"


@pytest.fixture(name="hub")
def hub_fixture(demo_hub: DemoHub, database_url: str) -> Hub:
    if connection.vendor != "postgresql":
        pytest.skip("DATABASE_URL is not a PostgreSQL database")
    return synced_demo_hub_row(demo_hub)


@pytest.fixture(name="staging")
def staging_fixture(hub: Hub) -> ManagedClusterSet:
    return ManagedClusterSet.objects.get(hub=hub, name="staging")


@pytest.fixture(name="binder")
def binder_fixture(hub: Hub, staging: ManagedClusterSet) -> User:
    """Admin of the set staging and admin in NAMESPACE: may bind one into the other."""
    user = UserFactory(username="binder")
    ClusterSetRoleFactory(cluster_set=staging, role="admin", user=user)
    NamespaceRoleFactory(hub=hub, namespace=NAMESPACE, role=NamespaceRole.Role.ADMIN, user=user)
    return user


def waited_for(condition: Callable[[], bool]) -> bool:
    """Whether `condition` came true within SECONDS (checked every 20 ms)."""
    done = threading.Event()
    for _ in range(SECONDS * 50):
        if condition():
            return True
        done.wait(0.02)
    return False


class Watcher(threading.Thread):
    """What the watcher does when it sees the binding first: insert its row, in a transaction of its
    own connection that commits only once the editor's insert of the same row waits on it."""

    def __init__(self, hub: Hub, inserted: threading.Event) -> None:
        super().__init__(daemon=True)
        self.hub, self.inserted = hub, inserted
        self.saw_a_waiter = False
        self.error: BaseException | None = None

    def run(self) -> None:
        row = {
            "apiVersion": "cluster.open-cluster-management.io/v1beta2",
            "kind": "ManagedClusterSetBinding",
            "metadata": {
                "name": "staging",
                "namespace": NAMESPACE,
                "uid": WATCHED_UID,
                "resourceVersion": "1",
            },
            "spec": {"clusterSet": "staging"},
        }
        try:
            with transaction.atomic():
                sync.apply_event(self.hub, KINDS_BY_NAME["ManagedClusterSetBinding"], "ADDED", row)
                self.inserted.set()
                with connection.cursor() as cursor:

                    def editor_waits() -> bool:
                        cursor.execute("SELECT pg_stat_clear_snapshot()")
                        cursor.execute(WAITING_ON_A_LOCK)
                        return cursor.fetchone()[0] > 0

                    self.saw_a_waiter = waited_for(editor_waits)
        except BaseException as exc:  # reported by the test, which runs in another thread
            self.error = exc
            self.inserted.set()
        finally:
            connection.close()


@pytest.fixture(name="watcher")
def watcher_fixture(hub: Hub) -> Iterator[Watcher]:
    inserted = threading.Event()
    watcher = Watcher(hub, inserted)
    watcher.start()
    assert inserted.wait(SECONDS)
    yield watcher
    watcher.join(SECONDS)


def test_a_bind_racing_the_watchers_insert_answers_201_with_one_row_and_one_entry(
    hub: Hub, staging: ManagedClusterSet, binder: User, watcher: Watcher, demo_hub: DemoHub
) -> None:
    client = APIClient()
    client.force_authenticate(binder)
    response = client.post(
        reverse("inventory-api:cluster-set-binding-list"),
        {"cluster_set": staging.pk, "namespace": NAMESPACE},
        format="json",
    )
    watcher.join(SECONDS)

    assert watcher.error is None and watcher.saw_a_waiter  # the editor's insert did wait for the watcher's
    assert response.status_code == 201, response.content[:300]
    on_hub = demo_hub.store.get("ManagedClusterSetBinding", "staging", NAMESPACE)
    rows = ManagedClusterSetBinding.objects.filter(hub=hub, namespace=NAMESPACE)
    assert [(row.name, row.uid) for row in rows] == [("staging", on_hub["metadata"]["uid"])]
    entries = AuditEntry.objects.filter(action=editing.BIND_ACTION)
    assert list(entries.values_list("outcome", "after")) == [
        (AuditEntry.Outcome.OK, {"namespace": NAMESPACE, "clusterSet": "staging"})
    ]


def test_an_audit_entry_that_cannot_be_written_leaves_no_row(
    hub: Hub, staging: ManagedClusterSet, binder: User
) -> None:
    request = RequestFactory().post("/")
    request.request_id = "r" * 65  # longer than the column: PostgreSQL refuses the entry
    with pytest.raises(DataError):
        editing.bind(staging, NAMESPACE, actor=binder, request=request)
    assert not ManagedClusterSetBinding.objects.filter(hub=hub, namespace=NAMESPACE).exists()
    assert not AuditEntry.objects.filter(action=editing.BIND_ACTION).exists()
