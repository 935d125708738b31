"""The rejected hub objects in the API: a read-only list (filtered by hub, kind and sync run) for
superusers, hidden from everyone else, and the `rejected` count on each sync run."""

import pytest
from rest_framework.test import APIClient

from inventory import rejections
from inventory.models import ClusterSetRole, Hub, RejectedObject, SyncRun
from tests.factories import (
    ClusterSetRoleFactory,
    HubFactory,
    ManagedClusterSetFactory,
    SyncRunFactory,
    UserFactory,
)

pytestmark = pytest.mark.django_db
LONG_NAME = "n" * 300


def client_of(**fields: object) -> APIClient:
    client = APIClient()
    client.force_authenticate(UserFactory(**fields))
    return client


@pytest.fixture
def run() -> SyncRun:
    """A sync of hub east that refused a cluster with a 300-character name and a binding; hub west
    refused a set."""
    east, west = HubFactory(name="east"), HubFactory(name="west")
    run = SyncRunFactory(hub=east, state=SyncRun.State.SUCCEEDED, rejected=2)
    reason = "metadata.name: must be no more than 253 characters"
    rejections.record(
        east, "ManagedCluster", [rejections.Rejection("ManagedCluster", "", LONG_NAME, reason)], run
    )
    binding = rejections.Rejection(
        "ManagedClusterSetBinding", "team-a", "prod", "spec.clusterSet: expected a string"
    )
    rejections.record(east, "ManagedClusterSetBinding", [binding], run)
    rejections.record(west, "ManagedClusterSet", [rejections.Rejection("ManagedClusterSet", "", "x", "why")])
    return run


def test_superusers_list_them_with_their_reasons(run: SyncRun) -> None:
    answer = client_of(username="root", is_superuser=True).get("/api/rejected-objects/", {"hub": "east"})
    assert answer.status_code == 200
    rows = answer.json()["results"]
    assert [(row["kind"], row["namespace"], row["name"]) for row in rows] == [
        ("ManagedCluster", "", LONG_NAME[:253]),
        ("ManagedClusterSetBinding", "team-a", "prod"),
    ]
    assert rows[0]["hub"] == "east"
    assert rows[0]["sync_run"] == run.pk
    assert rows[0]["identity"] == rejections.identity("", LONG_NAME)
    assert rows[0]["reason"] == "metadata.name: must be no more than 253 characters"


@pytest.mark.parametrize(
    ("params", "count"), [({"kind": "ManagedClusterSet"}, 1), ({"sync_run": "RUN"}, 2), ({}, 3)]
)
def test_filters(run: SyncRun, params: dict, count: int) -> None:
    params = {key: run.pk if value == "RUN" else value for key, value in params.items()}
    answer = client_of(username="root", is_superuser=True).get("/api/rejected-objects/", params)
    assert answer.json()["count"] == count


def test_read_only(run: SyncRun) -> None:
    root = client_of(username="root", is_superuser=True)
    pk = RejectedObject.objects.first().pk
    assert root.post("/api/rejected-objects/", {}).status_code == 405
    assert root.delete(f"/api/rejected-objects/{pk}/").status_code == 405


def test_others_see_none_of_them(run: SyncRun) -> None:
    """Even an admin of a set of the hub (names of every team's objects are operator data) and staff."""
    admin = UserFactory(username="ops", is_staff=True)
    ClusterSetRoleFactory(
        cluster_set=ManagedClusterSetFactory(hub=Hub.objects.get(name="east"), name="prod"),
        role=ClusterSetRole.Role.ADMIN,
        user=admin,
    )
    client = APIClient()
    client.force_authenticate(admin)
    assert client.get("/api/rejected-objects/").json()["count"] == 0
    assert client.get(f"/api/rejected-objects/{RejectedObject.objects.first().pk}/").status_code == 404


def test_sync_runs_count_them(run: SyncRun) -> None:
    answer = client_of(username="root", is_superuser=True).get(f"/api/sync-runs/{run.pk}/")
    assert answer.json()["rejected"] == 2
