"""Chromium creates a staged update run with an approval stage and closes the page; with nobody viewing
anything, the periodic runner of `make run` takes the run to its approval gate. Approve in the inbox
then works while the hub watcher is busy with churn and heartbeats, and the run moves on to the next
stage by itself."""

import re
import threading
import time
from collections.abc import Callable, Iterator

import pytest

from demohub import DemoHub
from fleetui import periodic
from fleetui.celery import app
from inventory.models import Hub, ManagedCluster
from inventory.watch import watch_hubs
from placement.models import ApprovalRequest, StagedUpdateRun
from tests.factories import placement_role
from tests.placement.runs_support import (  # noqa: F401 - fixtures
    CANARY,
    STAGING,
    checkout_fixture,
    cluster_states,
    editor_fixture,
    hub_row_fixture,
    role_holder,
    strategy_fixture,
)

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


@pytest.fixture(name="fleet_hub")
def live_fleet_hub(tasks_in_process: None) -> Iterator[DemoHub]:
    """The demo hub as `make run` has it, faster: its controllers apply bindings within a second, and
    labels, conditions and heartbeats change many times a second."""
    with DemoHub(
        clusters=24,
        fleet=True,
        seed=7,
        controllers=True,
        apply_seconds=0.5,
        available_seconds=0.5,
        churn_per_minute=600,
        heartbeat_seconds=1,
        bookmark_seconds=0.2,
    ) as hub:
        yield hub


@pytest.fixture
def background(hub_row: Hub) -> Iterator[None]:
    """What `make run` keeps running beside the site: the hub watcher and the periodic runner."""
    stop = threading.Event()
    watchers = watch_hubs([hub_row], stop, timeout_seconds=5)
    runner = periodic.serve(app, stop, periodic.entries(app))
    yield
    stop.set()
    for watcher in watchers:
        watcher.join(10)
    for thread in runner:
        thread.join(30)


def wait_for(condition: Callable[[], object], what: str, seconds: float = 60) -> None:
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, f"{what} did not happen within {seconds:.0f} s"
        time.sleep(0.25)


def test_a_run_made_in_the_browser_reaches_its_gate_unattended_and_approve_works_while_watching(
    browser, live_server, password, hub_row: Hub, checkout, strategy, background: None
) -> None:
    ops = role_holder(hub_row, STAGING, username="ops")  # may approve the canary stage's clusters
    placement_role(hub_row, user=ops)  # may create runs of the hub's CRPs
    session = browser.new_context()  # one login for both visits
    session.set_default_timeout(15_000)
    page = session.new_page()
    page.goto(f"{live_server.url}/accounts/login/")
    page.fill("#id_username", ops.username)
    page.fill("#id_password", password)
    page.click("button[type=submit]")
    page.wait_for_url(re.compile(r".*/$"))
    page.goto(f"{live_server.url}/runs/new/")
    page.fill("#id_name", "checkout-unattended")
    page.select_option("#id_state", "Run")
    page.fill("#id_placement_name", checkout.name)
    page.fill("#id_strategy_name", strategy.name)
    page.click("#run-form button[type=submit]")
    page.wait_for_url(re.compile(r".*/runs/\d+/$"))
    page.close()  # from here on nobody looks at the run

    run = StagedUpdateRun.objects.get(name="checkout-unattended")
    wait_for(lambda: ApprovalRequest.objects.filter(run=run).exists(), "the run reaching its approval gate")
    request = ApprovalRequest.objects.get(run=run)
    assert (request.stage_name, request.state) == ("canary", ApprovalRequest.State.PENDING)
    run.refresh_from_db()
    assert all(states[-1] == "Succeeded" for states in cluster_states(run, "canary").values())
    assert set(cluster_states(run, "canary")) == set(CANARY)

    versions = dict(ManagedCluster.objects.filter(hub=hub_row).values_list("name", "resource_version"))
    page = session.new_page()
    page.goto(f"{live_server.url}/approvals/")
    row = page.locator("#approvals tbody tr", has_text=request.name)
    row.get_by_role("button", name=f"Approve {request.name}").click()
    page.wait_for_url(re.compile(r".*/approvals/$"))
    assert page.inner_text("#notices .notice-success").startswith(f"{request.name}: ")
    session.close()
    changed = ManagedCluster.objects.filter(hub=hub_row).exclude(resource_version__in=list(versions.values()))
    assert changed.exists(), "the watcher wrote the hub's churn meanwhile"

    # the run accepts the approval and updates the next stage, again with nobody viewing it
    def prod() -> dict[str, tuple[str, ...]]:
        return cluster_states(StagedUpdateRun.objects.get(pk=run.pk), "prod")

    wait_for(lambda: any(prod().values()), "the prod stage starting")
    request.refresh_from_db()
    assert request.state == ApprovalRequest.State.ACCEPTED
