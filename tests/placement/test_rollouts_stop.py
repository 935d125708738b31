"""Stop halts a dashboard-owned run once its in-flight clusters finish (Stopping, then Stopped); Run
resumes it where it stopped. Against the demo hub, with its frozen clock."""

import pytest

from placement.rollouts import runs as rollouts
from tests.placement.runs_support import (  # noqa: F401 - fixtures
    # noqa: F401 - fixtures,
    CANARY,
    Stepper,
    checkout_fixture,
    cluster_states,
    condition,
    editor_fixture,
    fleet_hub_fixture,
    hub_row_fixture,
    new_run,
    stage,
    stepped_by_hand_fixture,
    strategy_fixture,
)

pytestmark = pytest.mark.django_db


def test_stop_waits_for_the_cluster_in_flight_and_run_resumes(
    fleet_hub, hub_row, checkout, strategy, editor, stepped_by_hand
) -> None:
    stepper = Stepper(fleet_hub, new_run(hub_row, editor, state="Run"))
    stepper.step()
    assert cluster_states(stepper.run, "canary") == {CANARY[0]: ("Started",), CANARY[1]: ()}

    stepper.run = rollouts.set_run_state(stepper.run, "Stop", editor)
    step = stepper.step()
    run = stepper.run
    assert condition(run.status, "Progressing") == ("Unknown", "UpdateRunStopping")
    assert condition(stage(run, "canary"), "Progressing") == ("Unknown", "StageUpdatingStopping")
    assert step.requeue_after is not None  # it checks on the cluster still updating

    stepper.advance(0)
    stepper.advance(5)
    step = stepper.step()
    run = stepper.run
    assert condition(run.status, "Progressing") == ("False", "UpdateRunStopped")
    assert condition(stage(run, "canary"), "Progressing") == ("False", "StageUpdatingStopped")
    assert cluster_states(run, "canary") == {CANARY[0]: ("Started", "Succeeded"), CANARY[1]: ()}
    assert step.requeue_after is None and run.requeue_at is None
    stepper.advance(60)
    stepper.step()
    assert cluster_states(stepper.run, "canary")[CANARY[1]] == ()  # stopped means nothing starts

    stepper.run = rollouts.set_run_state(stepper.run, "Run", editor)
    stepper.step()
    run = stepper.run
    assert condition(run.status, "Progressing") == ("True", "UpdateRunProgressing")
    assert cluster_states(run, "canary") == {CANARY[0]: ("Started", "Succeeded"), CANARY[1]: ("Started",)}
    # every state change is a new generation, which every condition then observes
    assert run.generation == 3
    assert {c["observedGeneration"] for c in run.status["conditions"]} == {3}
