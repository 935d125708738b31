"""The first look of `make run`, for tests: the demo hub with the same arguments, `demo_setup` on it,
and what runs beside the site (the hub watcher and the in-process periodic runner).

Fixtures (import their `*_fixture` functions into a test module): `first_look_hub`, `first_look` (the
Hub row after `demo_setup`), `first_look_background`; `wait_for` polls a condition.
"""

import threading
import time
from collections.abc import Callable, Iterator

import pytest
from django.core.management import call_command

from demohub import DemoHub
from demohub.management.commands.demo_setup import ROLLING_PLACEMENT, SHORT_PLACEMENT, WEIGHTED_PLACEMENT
from fleetui import periodic
from fleetui.celery import app
from inventory.models import Hub
from inventory.watch import watch_hubs
from placement.models import Placement

# `make run`: demo_hub --clusters 200 --fleet --churn-per-minute 12 (its default seed 1, heartbeats
# every 60 s, the hub's controllers applying bindings in 2 s and making them available 3 s later)
MAKE_RUN_HUB = {
    "clusters": 200,
    "fleet": True,
    "seed": 1,
    "controllers": True,
    "churn_per_minute": 12,
    "heartbeat_seconds": 60,
}
APPROVAL = "batch-jobs-rollout-1-after-staging"  # the demo hub's run waits for it after its staging stage
RUN = "batch-jobs-rollout-1"
SLOW_CLUSTERS = ("gke-europe-west1-dev-017", "gke-europe-west1-dev-128")  # reports-api's day-long applies


@pytest.fixture(name="first_look_hub")
def first_look_hub_fixture() -> Iterator[DemoHub]:
    with DemoHub(**MAKE_RUN_HUB) as hub:
        yield hub


@pytest.fixture(name="first_look")
def first_look_fixture(first_look_hub: DemoHub, tasks_in_process: None) -> Hub:
    """Hub "demo" after `make run`'s setup step (tasks in process, as `make run` has no broker)."""
    call_command("demo_setup", "--server", first_look_hub.url)
    return Hub.objects.get(name="demo")


@pytest.fixture(name="first_look_background")
def first_look_background_fixture(first_look: Hub) -> Iterator[None]:
    """What `make run` keeps running beside the site: the hub watcher and the periodic runner."""
    stop = threading.Event()
    watchers = watch_hubs([first_look], stop, timeout_seconds=5)
    runner = periodic.serve(app, stop, periodic.entries(app))
    yield
    stop.set()
    for thread in [*watchers, *runner]:
        thread.join(30)


def rolling_placement(hub: Hub) -> Placement:
    kind = Placement.Kind.CLUSTER_RESOURCE_PLACEMENT
    return Placement.objects.get(hub=hub, name=ROLLING_PLACEMENT, kind=kind)


def short_placement(hub: Hub) -> Placement:
    return ocm_placement(hub, *SHORT_PLACEMENT)


def weighted_placement(hub: Hub) -> Placement:
    return ocm_placement(hub, *WEIGHTED_PLACEMENT)


def ocm_placement(hub: Hub, namespace: str, name: str) -> Placement:
    return Placement.objects.get(hub=hub, namespace=namespace, name=name, kind=Placement.Kind.PLACEMENT)


def wait_for(
    condition: Callable[[], object], what: str, seconds: float = 60, found: Callable[[], object] = str
) -> None:
    """Poll `condition` until true; fails after `seconds` saying what `found()` answers then."""
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, f"{what} did not happen within {seconds:.0f} s: {found()}"
        time.sleep(0.25)
