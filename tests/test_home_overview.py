"""The home page's overview: each card counts what needs attention (or is in progress), lists its first
rows with links, and links to the list filtered to exactly the counted rows; only what the roles show; a
fixed number of queries; a calm state when nothing needs attention and a first-run hint without hubs."""

from collections.abc import Callable
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from fleetui.overview import SHOWN
from inventory.models import ClusterSetRole, Hub, ManagedCluster
from placement.models import ApprovalRequest, Owner, Placement, StagedUpdateRun
from tests.factories import (
    ClusterSetMembershipFactory,
    ClusterSetRoleFactory,
    HubFactory,
    ManagedClusterFactory,
    ManagedClusterSetFactory,
    PlacementFactory,
    StagedUpdateRunFactory,
    SyncRunFactory,
    UserFactory,
)
from tests.placement.runs_support import approval_request

pytestmark = pytest.mark.django_db

Availability = ManagedCluster.Availability
CRP = Placement.Kind.CLUSTER_RESOURCE_PLACEMENT


def condition(kind: str, status: str, reason: str = "", message: str = "") -> dict[str, str]:
    return {"type": kind, "status": status, "reason": reason, "message": message}


def placement(hub: Hub, name: str, *conditions: dict[str, str], **fields: Any) -> Placement:
    return PlacementFactory(hub=hub, name=name, status={"conditions": list(conditions)}, **fields)


# A CRP whose scheduling is fine: only its rollout is of interest.
SCHEDULED = {"conditions": [condition("ClusterResourcePlacementScheduled", "True", "Scheduled")]}


def rolling(hub: Hub, name: str, **rollout: Any) -> Placement:
    summary = {"at": "2026-01-01T00:00:00Z", "round": 3, "needRoll": False, "requeueAt": None, "error": ""}
    status = {**SCHEDULED, "rollout": {**summary, "failed": [], **rollout}}
    return PlacementFactory(hub=hub, name=name, kind=CRP, namespace="", owner=Owner.DASHBOARD, status=status)


def run(hub: Hub, name: str, *conditions: dict[str, str], **fields: Any) -> StagedUpdateRun:
    status = {"conditions": list(conditions)}
    return StagedUpdateRunFactory(
        placement__hub=hub, placement__status=SCHEDULED, name=name, status=status, **fields
    )


PROGRESSING = condition("Progressing", "True", "UpdateRunProgressing", "The update run is making progress")


def seed(hub: Hub, prefix: str = "") -> None:
    """Of every kind: rows a card counts (names ending in `-yes`) and rows it must not (`-no`)."""
    ManagedClusterFactory(hub=hub, name=f"{prefix}down-yes", availability=Availability.UNAVAILABLE)
    ManagedClusterFactory(hub=hub, name=f"{prefix}silent-yes", availability=Availability.UNKNOWN)
    ManagedClusterFactory(hub=hub, name=f"{prefix}stale-yes", stale=True)
    ManagedClusterFactory(hub=hub, name=f"{prefix}fine-no")
    satisfied = "PlacementSatisfied"
    placement(hub, f"{prefix}short-yes", condition(satisfied, "False", "NotAllDecisionsScheduled", "2 of 3"))
    # no condition yet: new, or not scheduled by its hub yet; whether it is short is not known
    placement(hub, f"{prefix}unreported-no")
    placement(
        hub,
        f"{prefix}misconfigured-yes",
        condition(satisfied, "False", "NoManagedClusterMatched"),
        condition("PlacementMisconfigured", "True", "Misconfigured", "TaintToleration:bad operator"),
    )
    placement(hub, f"{prefix}satisfied-no", condition(satisfied, "True", "AllDecisionsScheduled"))
    rolling(hub, f"{prefix}rolling-yes", needRoll=True, requeueAt="2026-01-01T00:00:05Z")
    rolling(hub, f"{prefix}polling-yes", requeueAt="2026-01-01T00:00:05Z")
    rolling(hub, f"{prefix}round-failed-yes", error="hub unreachable", requeueAt="2026-01-01T00:00:30Z")
    rolling(hub, f"{prefix}bindings-failed-yes", failed=["c1"])
    rolling(hub, f"{prefix}rolled-no")
    run(hub, f"{prefix}run-progressing-yes", PROGRESSING)
    run(hub, f"{prefix}run-waiting-yes", condition("Progressing", "False", "UpdateRunWaiting", "approval"))
    run(hub, f"{prefix}run-stuck-yes", condition("Progressing", "False", "UpdateRunStuck", "c1 stuck"))
    run(hub, f"{prefix}run-failed-yes", condition("Progressing", "False", "UpdateRunFailed"))
    run(hub, f"{prefix}run-init-failed-yes", condition("Initialized", "False", "UpdateRunInitializedFailed"))
    run(hub, f"{prefix}run-retrying-yes", PROGRESSING, last_error="hub unreachable", owner=Owner.DASHBOARD)
    run(hub, f"{prefix}run-done-no", condition("Progressing", "False", "UpdateRunSucceeded"))
    run(hub, f"{prefix}run-new-no")
    approval_request(hub, f"{prefix}approval-yes", placement__status=SCHEDULED)
    approval_request(
        hub, f"{prefix}accepted-no", state=ApprovalRequest.State.ACCEPTED, placement__status=SCHEDULED
    )


# card key -> the names it counts in one seeded hub
EXPECTED = {
    "unavailable-clusters": {"down-yes"},
    "silent-clusters": {"silent-yes", "stale-yes"},
    "short-placements": {"default/short-yes"},
    "misconfigured-placements": {"default/misconfigured-yes"},
    "pending-approvals": {"approval-yes"},
    "stuck-runs": {"run-stuck-yes", "run-failed-yes", "run-init-failed-yes", "run-retrying-yes"},
    "stuck-rolling-updates": {"round-failed-yes", "bindings-failed-yes"},
    "active-runs": {"run-progressing-yes", "run-waiting-yes"},
    "active-rolling-updates": {"rolling-yes", "polling-yes"},
}


def cards(client: Client) -> dict[str, Any]:
    response = client.get(reverse("home"))
    assert response.status_code == 200
    return {card.key: card for card in response.context["overview"].cards}


def listed_count(client: Client, url: str) -> int:
    """The rows of the list page at `url` (a filtered list), as its own count says."""
    response = client.get(url)
    assert response.status_code == 200, url
    if "table" in response.context:
        return int(response.context["table"].paginator.count)
    return len(response.context["rows"])  # the hub list is not paged


@pytest.fixture(name="root")
def root_fixture(client: Client) -> Client:
    client.force_login(UserFactory(username="root", is_superuser=True))
    return client


def test_each_card_counts_exactly_its_rows_and_the_filtered_list_agrees(root: Client) -> None:
    seed(HubFactory(name="east", last_synced_at=timezone.now()))
    HubFactory(name="broken", last_synced_at=timezone.now(), last_sync_error="connection refused")
    HubFactory(name="new")
    found = cards(root)
    for key, names in EXPECTED.items():
        card = found[key]
        assert {item.name for item in card.items} == names, key
        assert card.count == len(names) == listed_count(root, card.url), key
    failing = found["failing-hubs"]
    assert [item.name for item in failing.items] == ["broken"]
    assert failing.count == 1 == listed_count(root, failing.url)
    assert failing.url == "/hubs/?state=failing"


def test_cards_link_to_the_filtered_lists_and_the_objects(root: Client) -> None:
    hub = HubFactory(name="east", last_synced_at=timezone.now())
    seed(hub)
    html = root.get(reverse("home")).content.decode()
    for url in (
        "/clusters/?availability=Unavailable",
        "/clusters/?reporting=false",
        "/placements/?satisfied=false&amp;reported=true&amp;misconfigured=false",
        "/placements/?misconfigured=true",
        "/approvals/?state=pending",
        "/runs/?progress=stuck",
        "/runs/?progress=active",
        "/placements/?rollout=stuck",
        "/placements/?rollout=active",
    ):
        assert f'href="{url}"' in html, url
    down = ManagedCluster.objects.get(name="down-yes")
    assert f'<a href="/clusters/{down.pk}/">down-yes</a>' in html
    stuck = StagedUpdateRun.objects.get(name="run-stuck-yes")
    assert f'<a href="/runs/{stuck.pk}/">run-stuck-yes</a>' in html
    misconfigured = Placement.objects.get(name="misconfigured-yes")
    assert f'<a href="/placements/{misconfigured.pk}/">default/misconfigured-yes</a>' in html
    assert "TaintToleration:bad operator" in html  # why, from its condition
    assert '<a href="/approvals/?q=approval-yes">approval-yes</a>' in html


def test_a_card_lists_a_handful_and_links_the_rest(root: Client) -> None:
    hub = HubFactory(last_synced_at=timezone.now())
    for index in range(SHOWN + 3):
        ManagedClusterFactory(hub=hub, name=f"down-{index:02d}", availability=Availability.UNAVAILABLE)
    card = cards(root)["unavailable-clusters"]
    assert card.count == SHOWN + 3 and len(card.items) == SHOWN and card.more == 3
    assert "and 3 more" in root.get(reverse("home")).content.decode()


def test_the_overview_shows_only_what_the_roles_show(client: Client, user: User) -> None:
    mine, theirs = HubFactory(name="mine"), HubFactory(name="theirs")
    seed(mine)
    seed(theirs, prefix="hidden-")
    team = ManagedClusterSetFactory(hub=mine, name="team")
    for cluster in ManagedCluster.objects.filter(hub=mine):
        ClusterSetMembershipFactory(cluster=cluster, cluster_set=team)
    ClusterSetRoleFactory(cluster_set=team, user=user, role=ClusterSetRole.Role.VIEW)
    client.force_login(user)
    found = cards(client)
    for key in ("unavailable-clusters", "silent-clusters"):
        assert {item.name for item in found[key].items} == EXPECTED[key]
        assert found[key].count == listed_count(client, found[key].url)
    html = client.get(reverse("home")).content.decode()
    assert "hidden-" not in html and "theirs" not in html


def test_a_hub_sync_error_is_shown_to_superusers_only(client: Client, user: User) -> None:
    hub = HubFactory(name="broken", last_synced_at=timezone.now(), last_sync_error="token expired at 12:00")
    team = ManagedClusterSetFactory(hub=hub)
    ClusterSetMembershipFactory(cluster=ManagedClusterFactory(hub=hub), cluster_set=team)
    ClusterSetRoleFactory(cluster_set=team, user=user, role=ClusterSetRole.Role.VIEW)
    client.force_login(user)
    html = client.get(reverse("home")).content.decode()
    assert 'href="/hubs/?state=failing"' in html and "the last sync failed" in html
    assert "token expired" not in html
    client.force_login(UserFactory(username="root", is_superuser=True))
    assert "token expired at 12:00" in client.get(reverse("home")).content.decode()


def test_last_sync_per_hub(root: Client) -> None:
    synced = HubFactory(name="east", last_synced_at=timezone.now())
    HubFactory(name="west")
    SyncRunFactory(hub=synced, state="running")
    html = root.get(reverse("home")).content.decode()
    table = html[html.index('id="hub-syncs"') :]
    assert f'<a href="/hubs/{synced.pk}/">east</a>' in table
    assert "syncing now" in table
    assert "status-ok" in table and "status-never" in table


def test_all_clear_when_nothing_needs_attention(root: Client) -> None:
    hub = HubFactory(last_synced_at=timezone.now())
    ManagedClusterFactory(hub=hub)
    html = root.get(reverse("home")).content.decode()
    assert "All clear: nothing needs attention." in html
    assert all(card.count == 0 for card in cards(root).values())


def test_the_all_clear_is_not_shown_while_something_needs_attention(root: Client) -> None:
    ManagedClusterFactory(
        hub=HubFactory(last_synced_at=timezone.now()), availability=Availability.UNAVAILABLE
    )
    assert "All clear" not in root.get(reverse("home")).content.decode()


def test_first_run_hint_without_hubs(root: Client, client: Client) -> None:
    html = root.get(reverse("home")).content.decode()
    assert "No hubs yet" in html and "python manage.py load_demo" in html
    assert "Needs attention" not in html
    client.force_login(UserFactory(username="nobody"))
    assert "Your roles show no hub yet" in client.get(reverse("home")).content.decode()


@pytest.mark.parametrize("copies", [1, 12])
def test_the_overview_answers_in_a_fixed_number_of_queries(
    client: Client, user: User, django_assert_max_num_queries: Callable[..., Any], copies: int
) -> None:
    hub = HubFactory(name="east", last_synced_at=timezone.now())
    for index in range(copies):
        seed(hub, prefix=f"c{index:02d}-")
    team = ManagedClusterSetFactory(hub=hub, name="team")
    for cluster in ManagedCluster.objects.filter(hub=hub):
        ClusterSetMembershipFactory(cluster=cluster, cluster_set=team)
    ClusterSetRoleFactory(cluster_set=team, user=user, role=ClusterSetRole.Role.VIEW)
    client.force_login(user)
    # session + user + the approvals badge + at most two per card (its first rows, then its count) + the
    # hubs' last sync (one, two with more hubs than it lists)
    with django_assert_max_num_queries(3 + 2 * 10 + 2):
        response = client.get(reverse("home"))
    assert response.status_code == 200
