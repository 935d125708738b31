"""The bind step: API calls and events per PlacementDecision (upstream `bind`)."""

from placement.scheduler.ocm.decisions import (
    DECISION_GROUP_INDEX_LABEL,
    DECISION_GROUP_NAME_LABEL,
    PLACEMENT_LABEL,
    BindPlan,
    DecisionPage,
    ExistingDecision,
    plan_bind,
    score_event_message,
)
from placement.scheduler.ocm.status import WARNING, ScheduleStatus

_LABELS = {PLACEMENT_LABEL: "placement1", DECISION_GROUP_NAME_LABEL: "", DECISION_GROUP_INDEX_LABEL: "0"}


def _page(*clusters: str, number: int = 1) -> DecisionPage:
    return DecisionPage(f"placement1-decision-{number}", 0, "", clusters)


def _plan(pages: list[DecisionPage], existing: list[ExistingDecision], **kwargs: object) -> BindPlan:
    scores = kwargs.pop("total_scores", [("cluster1", 200), ("cluster2", 100)])
    status = kwargs.pop("status", ScheduleStatus())
    return plan_bind("ns1", "placement1", pages, existing, status, scores, **kwargs)  # type: ignore[arg-type]


def _steps(plan: BindPlan) -> list[tuple[str, str]]:
    return [(action.verb, action.name) for action in plan.actions]


def _reasons(plan: BindPlan) -> list[str]:
    return [event["reason"] for event in plan.events]


def test_real_api_server_create_is_followed_by_a_status_patch() -> None:
    plan = _plan([_page("cluster1", "cluster2")], [])
    assert _steps(plan) == [("create", "placement1-decision-1"), ("patch-status", "placement1-decision-1")]
    assert _reasons(plan) == ["DecisionCreate", "DecisionUpdate", "ScoreUpdate"]
    assert plan.events[0] == {
        "type": "Normal",
        "reason": "DecisionCreate",
        "action": "DecisionCreated",
        "message": "Decision placement1-decision-1 is created with placement placement1 in namespace ns1",
        "related": "placement1-decision-1",
    }
    assert plan.events[2]["message"] == "cluster1:200 cluster2:100 "


def test_fake_client_create_emits_only_decision_create() -> None:
    plan = _plan([_page("cluster1")], [], real_api_server=False)
    assert _steps(plan) == [("create", "placement1-decision-1")]
    assert _reasons(plan) == ["DecisionCreate"]


def test_empty_decision_created_without_status_patch() -> None:
    # nil and empty decision lists are equal, so nothing is patched after the create
    plan = _plan([_page()], [])
    assert _steps(plan) == [("create", "placement1-decision-1")]


def test_status_change_patches_status_and_leaves_labels_for_the_next_reconcile() -> None:
    existing = [ExistingDecision("placement1-decision-1", {PLACEMENT_LABEL: "placement1"}, ("cluster1",))]
    plan = _plan([_page("cluster1", "cluster2")], existing)
    assert _steps(plan) == [("patch-status", "placement1-decision-1")]
    assert _reasons(plan) == ["DecisionUpdate", "ScoreUpdate"]


def test_labels_only_change_is_patched_without_events() -> None:
    labels = {**_LABELS, DECISION_GROUP_NAME_LABEL: "fakegroup"}
    plan = _plan([_page("cluster1")], [ExistingDecision("placement1-decision-1", labels, ("cluster1",))])
    assert _steps(plan) == [("patch-labels", "placement1-decision-1")]
    assert plan.events == ()


def test_unchanged_decision_makes_no_call() -> None:
    plan = _plan([_page("cluster1")], [ExistingDecision("placement1-decision-1", _LABELS, ("cluster1",))])
    assert plan == BindPlan((), ())


def test_warning_status_turns_the_update_event_into_a_warning() -> None:
    status = ScheduleStatus(WARNING, "AddOn/demo/score", "AddOnPlacementScores cluster1/demo expired")
    plan = _plan([_page("cluster1")], [ExistingDecision("placement1-decision-1", _LABELS, ())], status=status)
    assert plan.events[0]["type"] == "Warning"
    assert plan.events[0]["message"] == (
        "Decision placement1-decision-1 is updated with placement placement1 in namespace ns1: "
        "AddOnPlacementScores cluster1/demo expired in plugin AddOn/demo/score"
    )


def test_no_score_event_without_scores() -> None:
    plan = _plan(
        [_page("cluster1")], [ExistingDecision("placement1-decision-1", _LABELS, ())], total_scores=[]
    )
    assert _reasons(plan) == ["DecisionUpdate"]


def test_leftover_decisions_of_the_placement_are_deleted() -> None:
    existing = [
        ExistingDecision("placement1-decision-1", _LABELS, tuple(f"cluster{i}" for i in range(100))),
        ExistingDecision("placement1-decision-2", _LABELS, ("cluster100",)),
        ExistingDecision("unlabelled", {}, ("cluster100",)),
        ExistingDecision("placement2-decision-1", {PLACEMENT_LABEL: "placement2"}, ()),
    ]
    plan = _plan([_page("cluster1")], existing, total_scores=[])
    assert _steps(plan) == [("patch-status", "placement1-decision-1"), ("delete", "placement1-decision-2")]
    assert plan.events[-1]["message"] == (
        "Decision placement1-decision-2 is deleted with placement placement1 in namespace ns1"
    )


def test_score_message_lists_every_scored_cluster_by_name() -> None:
    assert score_event_message([("a", 0), ("b", -100)]) == "a:0 b:-100 "


def test_score_message_is_cut_at_1000_bytes() -> None:
    scores = [(f"cluster{i:03}", 100) for i in range(100)]  # 15 bytes each
    message = score_event_message(scores)
    assert message.endswith("......")
    assert len(message) == 66 * 15 + 6
