"""The PlacementDecisions a placement holds once its bind plan's API calls are done."""

from placement.scheduler.ocm.decisions import (
    DECISION_GROUP_INDEX_LABEL,
    DECISION_GROUP_NAME_LABEL,
    PLACEMENT_LABEL,
    DecisionPage,
    ExistingDecision,
    held_decisions,
    plan_bind,
)
from placement.scheduler.ocm.status import ScheduleStatus

CANARY = {PLACEMENT_LABEL: "placement1", DECISION_GROUP_NAME_LABEL: "canary", DECISION_GROUP_INDEX_LABEL: "0"}
PLAIN = {PLACEMENT_LABEL: "placement1", DECISION_GROUP_NAME_LABEL: "", DECISION_GROUP_INDEX_LABEL: "0"}


def _held(pages: list[DecisionPage], existing: list[ExistingDecision]) -> list[ExistingDecision]:
    plan = plan_bind("ns1", "placement1", pages, existing, ScheduleStatus(), [])
    return held_decisions(existing, plan)


def test_a_new_page_is_held_with_its_labels_and_clusters() -> None:
    page = DecisionPage("placement1-decision-1", 0, "", ("c1", "c2"))

    assert _held([page], []) == [ExistingDecision("placement1-decision-1", PLAIN, ("c1", "c2"))]


def test_an_empty_new_page_is_held_without_a_status_patch() -> None:
    page = DecisionPage("placement1-decision-1", 0, "", ())

    assert _held([page], []) == [ExistingDecision("placement1-decision-1", PLAIN, ())]


def test_new_clusters_are_written_but_the_old_labels_stay_until_the_next_reconcile() -> None:
    existing = ExistingDecision("placement1-decision-1", CANARY, ("c1",))
    page = DecisionPage("placement1-decision-1", 0, "", ("c2",))

    assert _held([page], [existing]) == [ExistingDecision("placement1-decision-1", CANARY, ("c2",))]


def test_same_clusters_under_other_labels_get_the_new_labels() -> None:
    existing = ExistingDecision("placement1-decision-1", CANARY, ("c1",))
    page = DecisionPage("placement1-decision-1", 0, "", ("c1",))

    assert _held([page], [existing]) == [ExistingDecision("placement1-decision-1", PLAIN, ("c1",))]


def test_decisions_no_page_names_are_deleted() -> None:
    kept = ExistingDecision("placement1-decision-1", PLAIN, ("c1",))
    extra = ExistingDecision("placement1-decision-2", PLAIN, ("c2",))
    page = DecisionPage("placement1-decision-1", 0, "", ("c1",))

    assert _held([page], [kept, extra]) == [kept]


def test_without_a_plan_the_existing_decisions_are_held_in_name_order() -> None:
    second = ExistingDecision("placement1-decision-2", PLAIN, ("c2",))
    first = ExistingDecision("placement1-decision-1", CANARY, ("c1",))

    assert held_decisions([second, first], None) == [first, second]
