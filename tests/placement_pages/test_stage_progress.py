"""Progress bars: on a staged update run's page one per stage, and on a CRP's Rollout section one for its
rolling update, each counting clusters updated, in progress, waiting and failed, in words as well."""

import re
from datetime import UTC, datetime

import pytest
from django.test import Client
from django.urls import reverse

from placement.models import Owner
from placement.rollouts import rolling, tables
from tests.factories import HubFactory, UserFactory, placement_role
from tests.placement.rollout_hub import AVAILABLE
from tests.placement.rollout_hub import offline_crp as crp
from tests.security.pages_support import started_run

NOW = datetime(2026, 11, 25, 12, 0, tzinfo=UTC)
T = "2026-11-25T11:00:00Z"


def cluster(name: str, *conditions: tuple[str, str]) -> dict:
    return {
        "clusterName": name,
        "conditions": [
            {"type": kind, "status": status, "lastTransitionTime": T} for kind, status in conditions
        ],
    }


def test_a_stage_counts_its_clusters_by_state() -> None:
    clusters = [
        cluster("done-1", ("Started", "True"), ("Succeeded", "True")),
        cluster("done-2", ("Started", "True"), ("Succeeded", "True")),
        cluster("moving", ("Started", "True")),
        cluster("broken", ("Started", "True"), ("Succeeded", "False")),
        cluster("next"),
    ]
    (stage,) = tables.stage_rows({"stagesStatus": [{"stageName": "canary", "clusters": clusters}]}, {}, NOW)
    progress = stage.progress
    assert (progress.updated, progress.in_progress, progress.waiting, progress.failed) == (2, 1, 1, 1)
    assert progress.text == "2 of 5 updated, 1 in progress, 1 waiting, 1 failed"
    assert [(part.key, part.count, part.x, part.width) for part in progress.parts] == [
        ("updated", 2, "0.00", "40.00"),
        ("in_progress", 1, "40.00", "20.00"),
        ("waiting", 1, "60.00", "20.00"),
        ("failed", 1, "80.00", "20.00"),
    ]


def test_an_empty_stage_has_no_parts() -> None:
    assert tables.Progress().parts == [] and tables.Progress().total == 0


def binding(snapshot: str, verdict: str = "", state: str = "Bound", **conditions: tuple[str, str]) -> dict:
    return {
        "cluster": "m",
        "state": state,
        "resourceSnapshot": snapshot,
        "verdict": verdict,
        "conditions": {kind: {"type": kind, "status": s, "reason": r} for kind, (s, r) in conditions.items()},
    }


def test_a_rolling_update_counts_its_bindings_against_the_latest_snapshot() -> None:
    started = ("True", "RolloutStarted")
    clusters = [
        binding("web-1-snapshot", Available=("True", "AllWorkAreAvailable"), RolloutStarted=started),
        binding("web-1-snapshot", RolloutStarted=started, Applied=("False", "ApplyPending")),
        binding("web-0-snapshot", "stale", Available=("True", "AllWorkAreAvailable")),
        binding("web-1-snapshot", "failed", RolloutStarted=started),
        binding("web-1-snapshot", Applied=("False", "ApplyFailed")),
        binding("web-0-snapshot", state="Unscheduled"),
    ]
    progress = tables.rollout_progress(clusters, "web-1-snapshot")
    assert progress.text == "1 of 5 updated, 1 in progress, 1 waiting, 2 failed"
    # a hub mirror: its conditions speak of the hub's latest snapshot
    assert (
        tables.rollout_progress(clusters[2:3], None).text
        == "1 of 1 updated, 0 in progress, 0 waiting, 0 failed"
    )


def progress_text(html: str, container: str) -> list[str]:
    block = re.search(rf'id="{container}".*?</ol>|id="{container}".*?</div>\s*</div>', html, re.S)[0]
    return [
        re.sub(r"<[^>]+>", "", text)
        for text in re.findall(r'<p class="progress-text">(.*?)</p>', block, re.S)
    ]


@pytest.mark.django_db
def test_the_run_page_shows_a_bar_per_stage(client: Client) -> None:
    client.force_login(UserFactory(username="root", is_superuser=True))
    run = started_run("canary", "edge-1")
    html = client.get(reverse("rollouts:run-detail", args=[run.pk])).content.decode()
    assert progress_text(html, "stages") == ["Progress of stage canary: 1 in progress1 cluster"]
    assert re.search(r'<svg class="progress-bar"[^>]*aria-hidden="true"', html)
    assert '<rect class="progress-in_progress" x="0.00" y="0" width="100.00" height="4"/>' in html


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("owner", "available", "expected"),
    [(Owner.DASHBOARD, False, "3 in progress"), (Owner.HUB, True, "3 updated")],
)
def test_the_rollout_section_shows_the_bar_of_its_bindings(
    client: Client, tasks_in_process: None, owner: str, available: bool, expected: str
) -> None:
    hub = HubFactory(name="offline", serves_fleet=False)
    client.force_login(placement_role(hub, username="editor"))
    placement = crp(owner=owner, hub=hub)
    if available:
        placement.bindings.update(status=AVAILABLE)
    else:
        rolling.run_round(placement)
    html = client.get(reverse("placement:placement-rollout", args=[placement.pk])).content.decode()
    (text,) = progress_text(html, "rollout-progress")
    assert text == f"Rollout progress: {expected}3 clusters"
