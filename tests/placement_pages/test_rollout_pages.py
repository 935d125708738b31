"""The Rollout tab of Fleet CRP pages and the "Roll out a new resource snapshot" button."""

from typing import Any

import pytest
from django.contrib.auth.models import Permission
from django.test import Client
from django.urls import reverse

from inventory.models import AuditEntry, Hub
from placement import access
from placement.models import Owner, Placement
from placement.rollouts import rolling
from tests.factories import HubFactory, PlacementFactory, UserFactory, placement_role
from tests.placement.rollout_hub import AVAILABLE, SPEC
from tests.placement.rollout_hub import offline_crp as crp
from tests.placement_pages.access_support import ADMIN, VIEW, elsewhere_admin, grant

pytestmark = pytest.mark.django_db


def page(client: Client, placement: Placement) -> str:
    response = client.get(reverse("placement:placement-rollout", args=[placement.pk]))
    assert response.status_code == 200
    return response.content.decode()


@pytest.fixture
def offline(db: None) -> Hub:
    """The hub of `crp()`: it serves no Fleet API."""
    return HubFactory(name="offline", serves_fleet=False)


@pytest.fixture
def editor_client(client: Client, offline: Hub) -> Client:
    """As editor, admin of a populated set of hub offline: may roll out its CRPs."""
    client.force_login(placement_role(offline, username="editor"))
    return client


def test_the_page_shows_the_wave_budgets_and_each_cluster(
    editor_client: Client, tasks_in_process: None
) -> None:
    placement = crp()
    rolling.run_round(placement)
    html = page(editor_client, placement)
    assert 'id="rollout"' in html and "RollingUpdate: maxUnavailable 1, maxSurge 0" in html
    assert (
        "Wave 1 of <code>web-0-snapshot</code>" in html
        and 'bound <span class="wave-clusters">m1, m2, m3' in html
    )
    assert "N 3 · maxUnavailable 1 (min available 2)" in html and "maxToAdd 3" in html
    assert html.count('class="in-wave"') == 3 and 'id="rollout-button"' in html
    # the bindings are still applying: the section polls itself
    assert 'hx-trigger="every 5s"' in html


def test_the_button_rolls_out_a_new_snapshot_wave_by_wave_and_is_audited(
    editor_client: Client, tasks_in_process: None, django_capture_on_commit_callbacks: Any
) -> None:
    placement = crp()
    rolling.run_round(placement)
    placement.bindings.update(status=AVAILABLE)

    with django_capture_on_commit_callbacks(execute=True):
        response = editor_client.post(reverse("rollouts:placement-rollout", args=[placement.pk]))
    assert response.status_code == 302 and response.url == reverse(
        "placement:placement-rollout", args=[placement.pk]
    )
    placement.refresh_from_db()
    assert placement.status["resourceSnapshot"]["index"] == 1
    summary = placement.status["rollout"]
    # maxUnavailable 1 and no surge: one ready cluster at a time
    assert summary["updated"] == ["m1"] and summary["stale"] == ["m2", "m3"]
    entry = AuditEntry.objects.get(action="placement.rollout")
    assert (entry.actor_name, entry.before, entry.after) == (
        "editor",
        {"resourceSnapshotIndex": 0},
        {"resourceSnapshotIndex": 1},
    )
    html = page(editor_client, placement)
    assert "Wave 1 of <code>web-1-snapshot</code>" in html and html.count('class="in-wave"') == 1
    assert placement.events.filter(reason="ResourceSnapshotCreated").exists()


def test_viewers_see_no_button_and_may_not_roll_out(client: Client, offline: Hub) -> None:
    placement = crp()
    client.force_login(placement_role(offline, role=VIEW, username="viewer"))
    assert 'id="rollout-button"' not in page(client, placement)
    response = client.post(reverse("rollouts:placement-rollout", args=[placement.pk]))
    assert response.status_code == 403 and access.CHANGE_DENIED in response.content.decode()
    entry = AuditEntry.objects.get(action="placement.rollout")
    assert (entry.actor_name, entry.outcome) == ("viewer", AuditEntry.Outcome.DENIED)
    placement.refresh_from_db()
    assert "resourceSnapshot" not in placement.status


def test_users_without_a_role_on_the_hub_get_404(client: Client) -> None:
    """Staff with the model permission, or an admin of another hub's set: the CRP is not even visible."""
    placement = crp()
    staff = UserFactory(username="staff", is_staff=True)
    staff.user_permissions.add(Permission.objects.get(codename="change_placement"))
    for outsider in (staff, elsewhere_admin(username="elsewhere")):
        client.force_login(outsider)
        assert client.get(reverse("rollouts:rollout-section", args=[placement.pk])).status_code == 404
        assert client.post(reverse("rollouts:placement-rollout", args=[placement.pk])).status_code == 404
    assert not AuditEntry.objects.filter(outcome=AuditEntry.Outcome.OK).exists()
    placement.refresh_from_db()
    assert "resourceSnapshot" not in placement.status


def test_hub_mirrors_show_their_bindings_conditions_read_only(editor_client: Client) -> None:
    placement = crp(owner=Owner.HUB)
    placement.bindings.update(status=AVAILABLE)
    html = page(editor_client, placement)
    assert "the hub's rollout controller" in html and 'id="rollout-button"' not in html
    assert html.count("AllWorkAreAvailable") == 3
    response = editor_client.post(reverse("rollouts:placement-rollout", args=[placement.pk]))
    assert response.status_code == 403 and "roll it out there" in response.content.decode()


def test_staged_crps_show_that_runs_roll_them_out(editor_client: Client) -> None:
    placement = crp(spec={**SPEC, "strategy": {"type": "External"}})
    html = page(editor_client, placement)
    assert "staged update runs (strategy External)" in html and 'id="rollout-button"' in html


def test_ocm_placements_cannot_roll_out_snapshots(client: Client) -> None:
    placement = PlacementFactory(owner=Owner.DASHBOARD)
    client.force_login(grant(UserFactory(username="editor"), placement, role=ADMIN))
    response = client.post(reverse("rollouts:placement-rollout", args=[placement.pk]))
    assert response.status_code == 400 and "resource snapshots" in response.content.decode()


def test_the_section_alone_is_what_htmx_polls(editor_client: Client, tasks_in_process: None) -> None:
    placement = crp()
    rolling.run_round(placement)
    response = editor_client.get(reverse("rollouts:rollout-section", args=[placement.pk]))
    html = response.content.decode()
    assert response.status_code == 200 and html.strip().startswith("<section") and "Wave 1" in html
