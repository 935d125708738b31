"""The audit log page: who sees which entries, the filters and their 400s, rows and paging, query counts,
and the "Recent changes" of the cluster, cluster set and placement pages that link into it."""

from datetime import timedelta

import pytest
from django.contrib.auth.models import AnonymousUser, User
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from inventory import roles
from inventory.models import AuditEntry, ManagedCluster, ManagedClusterSet
from tests.factories import (
    AuditEntryFactory,
    HubFactory,
    ManagedClusterFactory,
    ManagedClusterSetFactory,
    PlacementFactory,
    StagedUpdateStrategyFactory,
    UserFactory,
)
from tests.pages import shown

pytestmark = pytest.mark.django_db
HTMX = {"HTTP_HX_REQUEST": "true"}
URL = "/audit/"


def actions(response) -> list[str]:
    return [entry.action for entry in shown(response)]


def seed_log(alice: User) -> ManagedClusterSet:
    """Four entries, oldest first: alice grants and is denied on prod, bob edits taints, sync runs."""
    now = timezone.now()
    prod = ManagedClusterSetFactory(hub=HubFactory(name="east"), name="prod")
    cluster = ManagedClusterFactory(hub=HubFactory(name="west"), name="edge-1")
    bob = UserFactory(username="bob")
    AuditEntryFactory(
        actor=alice,
        action="role.grant",
        of=prod,
        at=now - timedelta(hours=3),
        after={"principal": "user:carol", "role": "view"},
    )
    AuditEntryFactory(
        actor=alice,
        action="role.revoke",
        of=prod,
        at=now - timedelta(hours=2),
        outcome=AuditEntry.Outcome.DENIED,
    )
    AuditEntryFactory(
        actor=bob,
        action="cluster.taints",
        of=cluster,
        at=now - timedelta(hours=1),
        before=[],
        after=[{"key": "gpu", "effect": "NoSelect"}],
        hub_answer="taints: [gpu]",
        request_id="req-7",
        source_address="10.0.0.9",
    )
    AuditEntryFactory(
        actor=None, actor_name="manage.py sync", action="hub.sync", of=cluster.hub, hub=cluster.hub, at=now
    )
    return prod


def test_the_log_needs_a_login_and_is_in_the_navigation(client: Client, user: User) -> None:
    response = client.get(URL)
    assert response.status_code == 302 and response.url.startswith(reverse("login"))
    client.force_login(user)
    home = client.get(reverse("home")).content.decode()
    assert f'href="{reverse("inventory:audit-list")}"' in home and ">Audit log</a>" in home


def test_a_superuser_reads_every_entry_newest_first(root_client: Client, user: User) -> None:
    seed_log(user)
    response = root_client.get(URL)
    assert response.status_code == 200
    assert actions(response) == ["hub.sync", "cluster.taints", "role.revoke", "role.grant"]
    assert 'id="result-count">4<' in response.content.decode()


def test_other_users_read_only_the_entries_they_made(logged_in_client: Client, user: User) -> None:
    seed_log(user)
    response = logged_in_client.get(URL)
    assert actions(response) == ["role.revoke", "role.grant"]
    assert "edge-1" not in response.content.decode()
    # the filters narrow what they may see, never widen it
    assert actions(logged_in_client.get(URL, {"actor": "bob"})) == []
    assert list(response.context["actions"]) == ["role.grant", "role.revoke"]


def test_visible_entries_of_anonymous_and_inactive_users_are_none(user: User) -> None:
    seed_log(user)
    assert not roles.restrict(AuditEntry.objects.all(), AnonymousUser()).exists()
    user.is_active = False
    assert not roles.restrict(AuditEntry.objects.all(), user).exists()


@pytest.mark.parametrize(
    ("params", "expected"),
    [
        ({"actor": "ALI"}, ["role.revoke", "role.grant"]),
        ({"actor": "manage.py"}, ["hub.sync"]),
        ({"action": "role.grant"}, ["role.grant"]),
        ({"action": "role"}, []),  # exact, not contains
        ({"target_type": "inventory.managedclusterset"}, ["role.revoke", "role.grant"]),
        ({"target": "EDGE"}, ["cluster.taints"]),
        ({"hub": "west"}, ["hub.sync", "cluster.taints"]),
        ({"hub": ["east", "west"], "outcome": "denied"}, ["role.revoke"]),
        ({"outcome": ["ok", "denied"], "actor": "alice"}, ["role.revoke", "role.grant"]),
    ],
)
def test_filters(root_client: Client, user: User, params: dict, expected: list[str]) -> None:
    seed_log(user)
    response = root_client.get(URL, params, **HTMX)
    assert response.status_code == 200
    assert actions(response) == expected


def test_since_and_until_bound_the_time(root_client: Client, user: User) -> None:
    seed_log(user)
    now = timezone.now()
    since = (now - timedelta(hours=2, minutes=30)).strftime("%Y-%m-%d %H:%M:%S")
    until = (now - timedelta(minutes=30)).isoformat()
    assert actions(root_client.get(URL, {"since": since})) == ["hub.sync", "cluster.taints", "role.revoke"]
    between = root_client.get(URL, {"since": since, "until": until})
    assert actions(between) == ["cluster.taints", "role.revoke"]


@pytest.mark.parametrize(
    ("params", "error", "kept"),
    [
        ({"since": "yesterday"}, "since: Enter a valid date/time.", 'value="yesterday"'),
        ({"until": "2026-13-01 10:00"}, "until: Enter a valid date/time.", 'value="2026-13-01 10:00"'),
        (
            {"since": "2026-05-02", "until": "2026-05-01"},
            "until: must not be before since",
            'value="2026-05-01"',
        ),
        ({"target_type": "inventory.nothing"}, "target_type: Select a valid choice.", ""),
        ({"outcome": "fine"}, "outcome: Select a valid choice.", ""),
        ({"hub": "nowhere"}, "hub: Select a valid choice.", ""),
        ({"action": "x" * 65, "actor": "alice"}, "action: Ensure this value has at most 64", 'value="alice"'),
    ],
)
def test_bad_filter_values_answer_400_naming_the_field(
    root_client: Client, user: User, params: dict, error: str, kept: str
) -> None:
    seed_log(user)
    for headers in ({}, HTMX):
        response = root_client.get(URL, params, **headers)
        html = response.content.decode()
        assert response.status_code == 400
        assert error in html
        assert kept in html  # what was typed stays in the form
        assert 'id="audit-entries"' not in html
    assert "<html" not in html  # the htmx answer is the fragment


def test_rows_link_their_targets_and_open_before_after_and_the_hub_answer(
    root_client: Client, user: User
) -> None:
    prod = seed_log(user)
    strategy = StagedUpdateStrategyFactory(hub=prod.hub, name="waves")
    AuditEntryFactory(actor=user, action="strategy.create", of=strategy)
    response = root_client.get(URL)
    html = response.content.decode()
    cluster = ManagedCluster.objects.get(name="edge-1")
    assert f'<a href="/clustersets/{prod.pk}/">prod</a>' in html
    assert f'<a href="/clusters/{cluster.pk}/">edge-1</a>' in html
    # a strategy and a hub have no page of their own: their names, unlinked
    links = {entry.action: entry.target_url for entry in shown(response)}
    assert links["strategy.create"] == links["hub.sync"] == ""
    taints = root_client.get(URL, {"action": "cluster.taints"}).content.decode()
    assert "<details" in taints and "<summary>Before / after</summary>" in taints
    assert "&quot;key&quot;: &quot;gpu&quot;" in taints and "taints: [gpu]" in taints
    assert "<code>req-7</code>" in taints and "10.0.0.9" in taints
    # an entry with nothing to open has no <details>
    assert "<details" not in root_client.get(URL, {"action": "hub.sync"}).content.decode()


def test_htmx_gets_the_fragment_and_pages_keep_the_filters(root_client: Client, user: User) -> None:
    for index in range(5):
        AuditEntryFactory(actor=user, action="role.grant", target=f"set-{index}")
    AuditEntryFactory(actor=user, action="role.change")
    first = root_client.get(URL, {"action": "role.grant", "per_page": 2})
    assert [e.target for e in shown(first)] == ["set-4", "set-3"]
    assert "action=role.grant&amp;per_page=2&amp;page=2" in first.content.decode()
    third = root_client.get(URL, {"action": "role.grant", "per_page": 2, "page": 3}, **HTMX)
    html = third.content.decode()
    assert [e.target for e in shown(third)] == ["set-0"]
    assert "<html" not in html and "Page 3 of 3" in html
    assert '<option value="role.change">' in html  # the datalist of logged actions


@pytest.mark.parametrize("rows", [1, 120])
@pytest.mark.parametrize("superuser", [True, False])
def test_query_count_does_not_grow_with_rows(
    client: Client, django_assert_max_num_queries, rows: int, superuser: bool
) -> None:
    reader = UserFactory(username="reader", is_superuser=superuser)
    hubs = [HubFactory(name=f"hub-{index}") for index in range(3)]
    for index in range(rows):
        AuditEntryFactory(
            actor=reader,
            hub=hubs[index % 3],
            action=f"action.{index % 7}",
            before={"n": index},
            after={"n": index + 1},
            hub_answer="ok",
        )
    client.force_login(reader)
    # session, user, count, the page of entries with their hubs, hub choices, the actions datalist,
    # the approvals badge of the nav bar
    with django_assert_max_num_queries(7):
        response = client.get(URL, {"per_page": 500})
    assert len(shown(response)) == rows


def target_log(client: Client, response) -> list[int]:
    """The entries the page's "All changes in the audit log" link lists."""
    url = response.context["audit_log_url"]
    assert f'href="{url.replace("&", "&amp;")}"' in response.content.decode()
    return [entry.pk for entry in shown(client.get(url))]


def test_object_pages_show_their_recent_changes_and_link_the_full_log(root_client: Client) -> None:
    hub = HubFactory(name="east")
    # the three share an id, so each page's list and link tell them apart by type too
    shared = 4242
    cluster_set = ManagedClusterSetFactory(pk=shared, hub=hub, name="prod")
    cluster = ManagedClusterFactory(pk=shared, hub=hub, name="c-1")
    placement = PlacementFactory(pk=shared, hub=hub, name="web")
    for target, detail in (
        (cluster, "inventory:cluster-detail"),
        (cluster_set, "inventory:clusterset-detail"),
        (placement, "placement:placement-history"),  # its History tab
    ):
        entries = [AuditEntryFactory(of=target, action=f"change.{index}").pk for index in range(12)]
        response = root_client.get(reverse(detail, args=[target.pk]))
        html = response.content.decode()
        assert 'id="recent-changes"' in html
        assert [entry.pk for entry in response.context["recent_changes"]] == entries[::-1][:10]
        assert "<strong>change.11</strong>" in html and "<strong>change.1</strong>" not in html
        assert target_log(root_client, response) == entries[::-1]
