"""`make run`'s first look: after its setup step on its demo hub, the site shows a staged update run
waiting at an approval, a rolling update in progress, an unavailable cluster and a placement short of
clusters, each on its own page; the setup runs twice to the same result, and the churn leaves them be."""

from collections.abc import Iterator

import pytest
from django.core.management import call_command
from django.test import Client
from django.urls import reverse

from demohub import DemoHub
from inventory.models import Hub, ManagedCluster
from placement.models import ApprovalRequest, Placement, StagedUpdateRun
from placement.rollouts import rolling
from tests.factories import UserFactory
from tests.first_look import (  # noqa: F401 - fixtures
    APPROVAL,
    RUN,
    SLOW_CLUSTERS,
    first_look_background_fixture,
    first_look_fixture,
    first_look_hub_fixture,
    rolling_placement,
    short_placement,
    wait_for,
)

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def admin(client: Client) -> Iterator[Client]:
    client.force_login(UserFactory(username="admin", is_superuser=True, is_staff=True))
    yield client


def rollout(placement: Placement) -> dict:
    placement.refresh_from_db()
    return (placement.status or {}).get("rollout") or {}


def decided(placement: Placement) -> int:
    return sum(len(row.decisions) for row in placement.decisions.all())


def satisfied(placement: Placement) -> tuple[str, str]:
    found = next(c for c in placement.status["conditions"] if c["type"] == "PlacementSatisfied")
    return found["status"], found["reason"]


def test_the_run_waits_at_its_approval_in_the_inbox(first_look: Hub, admin: Client) -> None:
    request = ApprovalRequest.objects.get(hub=first_look, name=APPROVAL)
    assert request.state == ApprovalRequest.State.PENDING
    run = StagedUpdateRun.objects.get(hub=first_look, name=RUN)
    assert request.run == run

    inbox = admin.get(reverse("rollouts:approval-list")).content.decode()
    assert APPROVAL in inbox and f'aria-label="Approve {APPROVAL}"' in inbox
    page = admin.get(reverse("rollouts:run-detail", args=[run.pk])).content.decode()
    assert "waiting for after-stage tasks in stage staging" in page


def test_a_rolling_update_is_in_progress(first_look: Hub, first_look_background: None, admin: Client) -> None:
    placement = rolling_placement(first_look)
    assert rolling.rolling_crp(placement) is not None
    # the rounds the watched reports bring see the fast members become available; the slow ones still apply
    fast = 4
    wait_for(
        lambda: len(rollout(placement).get("ready") or ()) == fast,
        "the fast members being ready",
        found=lambda: rollout(placement),
    )
    summary = rollout(placement)
    assert set(summary["wave"]["updated"]) >= set(SLOW_CLUSTERS)
    assert not set(SLOW_CLUSTERS) & set(summary["ready"]) and not summary["failed"]
    # nothing left to roll: no timed round, the slow members' reports bring the next one
    assert set(SLOW_CLUSTERS) <= set(summary["applying"]), "the rollout follows the slow members"

    page = admin.get(reverse("placement:placement-rollout", args=[placement.pk])).content.decode()
    for cluster in SLOW_CLUSTERS:
        row = page[page.index(f'data-cluster="{cluster}"') :]
        row = row[: row.index("</tr>")]
        # work under way reads as in progress, not in the failure colour
        assert "ApplyPending" in row and "status-running" in row and "status-failing" not in row


def test_an_unavailable_cluster_is_shown_so(first_look: Hub, admin: Client) -> None:
    down = ManagedCluster.objects.filter(hub=first_look).exclude(
        availability=ManagedCluster.Availability.AVAILABLE
    )
    assert down.exists()
    cluster = down.first()
    assert cluster is not None
    page = admin.get(reverse("inventory:cluster-detail", args=[cluster.pk])).content.decode()
    assert f'status-{cluster.availability.lower()}">{cluster.get_availability_display()}' in page


def test_a_placement_is_short_of_clusters(first_look: Hub, admin: Client) -> None:
    placement = short_placement(first_look)
    assert satisfied(placement) == ("False", "NotAllDecisionsScheduled")
    assert 0 < decided(placement) < placement.spec["numberOfClusters"]

    page = admin.get(reverse("placement:placement-detail", args=[placement.pk])).content.decode()
    assert "NotAllDecisionsScheduled" in page


def test_setting_up_again_gives_the_same_and_churn_leaves_it_be(
    first_look: Hub, first_look_hub: DemoHub
) -> None:
    def state() -> tuple:
        short = short_placement(first_look)
        return (
            sorted(Placement.objects.filter(hub=first_look).values_list("name", "owner")),
            ApprovalRequest.objects.get(name=APPROVAL).state,
            short.spec,
            satisfied(short),
            decided(short) < short.spec["numberOfClusters"],
            rolling_placement(first_look).spec,
        )

    before = state()
    for _ in range(60):  # five minutes of `make run`'s churn
        first_look_hub.churn.step()
    first_look_hub.reconcile()
    call_command("demo_setup", "--server", first_look_hub.url)
    assert state() == before
