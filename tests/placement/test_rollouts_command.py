"""`manage.py runs`: list (table and -o json), show (preview before the run starts, then its stages),
run / stop (audited as the command) and step (one reconcile now), with exit code 2 on bad input."""

import json

import pytest
from django.core.management import CommandError, call_command

from inventory.models import AuditEntry
from placement.models import StagedUpdateRun
from tests.placement.runs_support import (  # noqa: F401 - fixtures
    # noqa: F401 - fixtures,
    CANARY,
    PROD,
    checkout_fixture,
    editor_fixture,
    fleet_hub_fixture,
    hub_row_fixture,
    new_run,
    stepped_by_hand_fixture,
    strategy_fixture,
)

pytestmark = pytest.mark.django_db


def runs(capsys, *args: str) -> str:
    call_command("runs", *args)
    return capsys.readouterr().out


def test_list_show_run_stop_and_step(
    capsys, fleet_hub, hub_row, checkout, strategy, editor, stepped_by_hand
) -> None:
    new_run(hub_row, editor)
    table = runs(capsys, "list").splitlines()
    assert table[0].split() == [
        "HUB",
        "NAME",
        "OWNER",
        "PLACEMENT",
        "STRATEGY",
        "STATE",
        "INITIALIZED",
        "PROGRESSING",
        "SUCCEEDED",
        "STAGE",
        "APPROVALS",
    ]
    assert table[1].split() == [
        "demo",
        "batch-jobs-rollout-1",
        "hub",
        "batch-jobs",
        "staging-then-prod",
        "Run",
        "True",
        "False",
        "staging",
        "1",
    ]
    assert table[2].split() == [
        "demo",
        "checkout-1",
        "dashboard",
        "checkout",
        "canary-then-prod",
        "Initialize",
        "0",
    ]
    items = json.loads(runs(capsys, "list", "--owner", "dashboard", "-o", "json"))["items"]
    assert [(i["kind"], i["metadata"]["name"], i["spec"]["state"]) for i in items] == [
        ("ClusterStagedUpdateRun", "checkout-1", "Initialize")
    ]

    shown = runs(capsys, "show", "checkout-1")
    assert "Preview (before the run starts):" in shown
    assert "\n".join(f"    {i}. {name}: not started" for i, name in enumerate(PROD, 1)) in shown
    assert "after-stage Approval: not started checkout-1-after-canary" in shown

    assert "State:        Run" in runs(capsys, "run", "checkout-1")
    entry = AuditEntry.objects.get(action="run.state")
    assert (entry.actor_name, entry.before, entry.after) == ("manage.py runs", "Initialize", "Run")
    stepped = runs(capsys, "step", "checkout-1")
    assert stepped.startswith(
        "Initialized 2 stage(s) for 5 cluster(s), 0 to delete\n"
        f"Started updating cluster {CANARY[0]} in stage canary\n(next step in 0:00:15)\n"
    )
    assert f"    1. {CANARY[0]}: updating" in stepped
    assert "Progressing  True    UpdateRunProgressing" in stepped
    assert json.loads(runs(capsys, "show", "checkout-1", "-o", "json"))["metadata"]["generation"] == 2
    assert "State:        Stop" in runs(capsys, "stop", "checkout-1")
    assert StagedUpdateRun.objects.get(name="checkout-1").spec["state"] == "Stop"


def test_bad_input_exits_with_2(capsys, fleet_hub, hub_row) -> None:
    for args, message in (
        (("show", "nope"), 'ClusterStagedUpdateRun "nope" not found'),
        (("stop", "batch-jobs-rollout-1"), "belongs to hub demo"),
        (("step", "batch-jobs-rollout-1"), "belongs to hub demo; its controller runs it"),
    ):
        with pytest.raises(CommandError, match=message) as caught:
            call_command("runs", *args)
        assert caught.value.returncode == 2
