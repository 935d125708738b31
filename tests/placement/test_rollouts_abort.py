"""A run that cannot finish: a cluster that never becomes available makes it Stuck after 5 minutes
(it keeps trying); a new scheduling policy under a running run aborts it (UpdateRunFailed). Against the
demo hub, whose MemberCluster label `demo.fleetui.io/apply-fails` makes apply fail there."""

import pytest

from demohub.fleetsim import APPLY_FAILS_LABEL
from placement import service
from tests.placement.runs_support import (  # noqa: F401 - fixtures
    # noqa: F401 - fixtures,
    CANARY,
    PROD,
    Stepper,
    checkout_fixture,
    cluster_states,
    condition,
    crp_spec,
    editor_fixture,
    fleet_hub_fixture,
    hub_row_fixture,
    new_run,
    stepped_by_hand_fixture,
    strategy_fixture,
)

pytestmark = pytest.mark.django_db


def test_a_cluster_that_never_becomes_available_makes_the_run_stuck_after_five_minutes(
    fleet_hub, hub_row, checkout, strategy, editor, stepped_by_hand
) -> None:
    fleet_hub.store.patch("MemberCluster", CANARY[0], {"metadata": {"labels": {APPLY_FAILS_LABEL: "true"}}})
    stepper = Stepper(fleet_hub, new_run(hub_row, editor, state="Run"))
    stepper.step()
    stepper.advance(0)
    stepper.advance(5 * 60)  # applied (and failed) 2 s after it started
    step = stepper.step()
    assert condition(stepper.run.status, "Progressing") == ("True", "UpdateRunProgressing")
    assert step.events == (
        "the cluster updating encountered an error at stage `canary`, updateRun := `checkout-1`",
    )
    stepper.advance(1)
    step = stepper.step()
    progressing = next(c for c in stepper.run.status["conditions"] if c["type"] == "Progressing")
    assert (progressing["status"], progressing["reason"]) == ("False", "UpdateRunStuck")
    assert CANARY[0] in progressing["message"]
    assert step.requeue_after is not None  # it keeps checking
    assert cluster_states(stepper.run, "canary") == {CANARY[0]: ("Started",), CANARY[1]: ()}


def test_a_new_scheduling_policy_aborts_a_running_run(
    fleet_hub, hub_row, checkout, strategy, editor, stepped_by_hand
) -> None:
    stepper = Stepper(fleet_hub, new_run(hub_row, editor, state="Run"))
    stepper.step()
    service.apply_spec(checkout, crp_spec([*CANARY, *PROD[:2]]), actor=editor)
    step = stepper.step()
    run = stepper.run
    assert condition(run.status, "Succeeded") == ("False", "UpdateRunFailed")
    assert condition(run.status, "Progressing") == ("False", "UpdateRunFailed")
    failed = next(c for c in run.status["conditions"] if c["type"] == "Succeeded")
    assert failed["message"] == (
        "cannot continue the updateRun: the policy snapshot index used in the updateRun is outdated, "
        "latest: 1, recorded: 0"
    )
    assert step.requeue_after is None and run.requeue_at is None
