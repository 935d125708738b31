"""`/api/audit/`: read-only, token auth, the page's FilterSet and visibility, paginated, in the schema."""

from datetime import timedelta

import pytest
from django.contrib.auth.models import User
from django.core.exceptions import PermissionDenied
from django.utils import timezone
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from inventory import roles
from inventory.models import AuditEntry, ClusterSetRole
from tests.factories import AuditEntryFactory, HubFactory, ManagedClusterSetFactory, UserFactory

pytestmark = pytest.mark.django_db
URL = "/api/audit/"


def client_of(user: User) -> APIClient:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.create(user=user).key}")
    return client


def test_anonymous_is_refused_and_writes_are_not_offered(root: User) -> None:
    assert APIClient().get(URL).status_code == 401
    entry = AuditEntryFactory()
    api = client_of(root)
    assert api.post(URL, {"action": "forged"}, format="json").status_code == 405
    assert api.delete(f"{URL}{entry.pk}/").status_code == 405
    assert api.patch(f"{URL}{entry.pk}/", {"action": "x"}, format="json").status_code == 405


def test_an_entry_made_through_the_api_is_read_back_with_its_request(root: User) -> None:
    prod = ManagedClusterSetFactory(hub=HubFactory(name="east"), name="prod")
    bob = UserFactory(username="bob")
    api = client_of(root)
    granted = api.post(
        "/api/cluster-set-roles/",
        {"cluster_set": prod.pk, "role": "view", "user": "bob"},
        format="json",
        HTTP_X_REQUEST_ID="req-api-1",
        REMOTE_ADDR="10.9.8.7",
    )
    assert granted.status_code == 201

    body = api.get(URL).json()
    assert body["count"] == 1
    (entry,) = body["results"]
    assert entry == {
        "id": entry["id"],
        "at": entry["at"],
        "actor": "root",
        "actor_id": root.pk,
        "action": "role.grant",
        "target_type": "inventory.managedclusterset",
        "target_id": str(prod.pk),
        "target": str(prod),
        "hub": "east",
        "hub_id": prod.hub_id,
        "outcome": "ok",
        "before": None,
        "after": {"principal": "user:bob", "role": "view"},
        "hub_answer": "",
        "request_id": "req-api-1",
        "source_address": "10.9.8.7",
    }
    assert ClusterSetRole.objects.get(user=bob).role == "view"
    assert api.get(f"{URL}{entry['id']}/").json() == entry


def test_users_read_their_own_entries_and_superusers_all(root: User) -> None:
    alice, bob = UserFactory(username="alice"), UserFactory(username="bob")
    mine = AuditEntryFactory(actor=alice, action="role.grant")
    theirs = AuditEntryFactory(actor=bob, action="role.grant")
    system = AuditEntryFactory(actor=None, actor_name="manage.py sync", action="hub.sync")

    as_alice = client_of(alice)
    assert [e["id"] for e in as_alice.get(URL).json()["results"]] == [mine.pk]
    assert as_alice.get(f"{URL}{theirs.pk}/").status_code == 404
    assert as_alice.get(f"{URL}{system.pk}/").status_code == 404
    all_ids = [e["id"] for e in client_of(root).get(URL).json()["results"]]
    assert all_ids == [system.pk, theirs.pk, mine.pk]


def test_a_denied_attempt_is_logged_for_whoever_tried(db: None) -> None:
    prod = ManagedClusterSetFactory(hub=HubFactory(name="east"), name="prod")
    mallory = UserFactory(username="mallory")
    with pytest.raises(PermissionDenied):
        roles.grant(mallory, prod, "admin", mallory)
    (entry,) = client_of(mallory).get(URL, {"outcome": "denied"}).json()["results"]
    assert (entry["action"], entry["actor"], entry["after"]) == ("role.grant", "mallory", None)


def test_filters_are_the_pages(root: User) -> None:
    now = timezone.now()
    old = AuditEntryFactory(action="role.grant", at=now - timedelta(days=2), target="prod")
    denied = AuditEntryFactory(action="role.revoke", outcome=AuditEntry.Outcome.DENIED, target="prod-eu")
    AuditEntryFactory(action="cluster.taints", target="edge-1", hub=HubFactory(name="west"))
    api = client_of(root)

    def ids(**params: object) -> list[int]:
        response = api.get(URL, params)
        assert response.status_code == 200, response.json()
        return [e["id"] for e in response.json()["results"]]

    assert ids(action="role.grant") == [old.pk]
    assert ids(target="PROD") == [denied.pk, old.pk]
    assert ids(hub="east", outcome=["denied", "failed"]) == [denied.pk]
    assert ids(until=(now - timedelta(days=1)).isoformat()) == [old.pk]
    assert ids(actor="AUDIT", target_type="inventory.managedcluster", since=now.date().isoformat()) == [
        e.pk for e in AuditEntry.objects.exclude(pk=old.pk)
    ]


@pytest.mark.parametrize(
    ("params", "field", "reason"),
    [
        ({"since": "yesterday"}, "since", "Enter a valid date/time."),
        ({"since": "2026-05-02", "until": "2026-05-01"}, "until", "must not be before since"),
        ({"outcome": "fine"}, "outcome", "Select a valid choice"),
        ({"target_type": "auth.user"}, "target_type", "Select a valid choice"),
        ({"hub": "nowhere"}, "hub", "Select a valid choice"),
    ],
)
def test_bad_filters_answer_400_naming_the_field(root: User, params: dict, field: str, reason: str) -> None:
    response = client_of(root).get(URL, params)
    assert response.status_code == 400
    assert list(response.json()) == [field]
    assert reason in response.json()[field][0]


def test_pages_with_per_page(root: User) -> None:
    AuditEntryFactory.create_batch(5)
    body = client_of(root).get(URL, {"per_page": 2, "page": 2}).json()
    assert body["count"] == 5 and len(body["results"]) == 2
    assert "page=3" in body["next"] and "per_page=2" in body["next"]


@pytest.mark.parametrize("rows", [1, 150])
def test_query_count_does_not_grow_with_rows(root: User, django_assert_max_num_queries, rows: int) -> None:
    hubs = [HubFactory(name=f"hub-{index}") for index in range(3)]
    for index in range(rows):
        AuditEntryFactory(hub=hubs[index % 3], before={"n": index}, after={"n": index + 1})
    api = APIClient()
    api.force_authenticate(root)
    # count and the page of entries with their hubs
    with django_assert_max_num_queries(2):
        body = api.get(URL, {"per_page": 500}).json()
    assert len(body["results"]) == rows


def test_in_the_api_root_and_the_schema(root: User) -> None:
    api = client_of(root)
    assert api.get("/api/").json()["audit"].endswith(URL)
    schema = api.get("/api/schema/", {"format": "json"}).json()
    assert {"/api/audit/", "/api/audit/{id}/"} <= set(schema["paths"])
    assert set(schema["paths"]["/api/audit/"]) == {"get"}
    parameters = {p["name"] for p in schema["paths"]["/api/audit/"]["get"]["parameters"]}
    filters = {"actor", "action", "target_type", "target_id", "target", "hub", "outcome", "since", "until"}
    assert filters <= parameters
    assert schema["components"]["schemas"]["AuditOutcomeEnum"]["enum"] == ["ok", "no-op", "denied", "failed"]
