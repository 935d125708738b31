"""The requeue delay is a Go Duration: a toleration that runs out further away than about 292 years
requeues the placement after Go's longest Duration, as upstream's time.Until gives it."""

from datetime import timedelta

from placement.scheduler.ocm.schedule import schedule_placement
from tests.scheduler.ocm.builders import NOW, decision, hub, member, placement

GO_DURATION_SECONDS = 9_223_372_036  # whole seconds of Go's longest Duration (2**63 - 1 ns)


def _requeue(seconds: int, added_in: timedelta) -> float | None:
    added = (NOW + added_in).isoformat()
    clusters = [member("c1", taints=[{"key": "maintenance", "effect": "NoSelect", "timeAdded": added}])]
    tolerations = [{"key": "maintenance", "operator": "Exists", "tolerationSeconds": seconds}]
    result = schedule_placement(
        placement(tolerations=tolerations), hub(clusters, decisions=[decision("web", ["c1"])]), NOW
    )
    requeue: float | None = result.to_report()["requeueAfterSeconds"]
    return requeue


def test_an_expiry_beyond_the_longest_duration_requeues_after_the_longest_duration() -> None:
    assert _requeue(GO_DURATION_SECONDS, timedelta(hours=1)) == 9_223_372_036.854775


def test_an_expiry_within_the_longest_duration_requeues_when_it_falls() -> None:
    assert _requeue(GO_DURATION_SECONDS, timedelta(0)) == GO_DURATION_SECONDS
    assert _requeue(GO_DURATION_SECONDS - 3600, timedelta(minutes=30)) == GO_DURATION_SECONDS - 1800
