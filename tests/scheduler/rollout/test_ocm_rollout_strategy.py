"""RolloutStrategy manifests: CRD defaults and rejections, and the handler's own type error."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from placement.scheduler.errors import ManifestError
from placement.scheduler.rollout.ocm import (
    MandatoryDecisionGroup,
    RolloutError,
    RolloutStrategy,
    groups_from_decisions,
    parse_rollout_strategy,
    plan_rollout,
)

NOW = datetime(2022, 1, 1, tzinfo=UTC)
PATH = "spec.placementRefs[0].rolloutStrategy"


@pytest.mark.parametrize("raw", [None, {}, {"type": "All"}, {"type": "All", "all": {}}])
def test_missing_strategy_defaults_to_all_with_no_deadline(raw: dict[str, Any] | None) -> None:
    assert parse_rollout_strategy(raw, PATH) == RolloutStrategy(type="All", progress_deadline="None")


def test_progressive_config_is_read_in_full() -> None:
    raw = {
        "type": "Progressive",
        "progressive": {
            "minSuccessTime": "5m",
            "progressDeadline": "1h30m",
            "maxFailures": "10%",
            "maxConcurrency": 2,
            "mandatoryDecisionGroups": [{"groupName": "canary"}, {"groupIndex": 3}],
        },
    }
    assert parse_rollout_strategy(raw, PATH) == RolloutStrategy(
        type="Progressive",
        min_success_time=timedelta(minutes=5),
        progress_deadline="1h30m",
        max_failures="10%",
        mandatory_decision_groups=(
            MandatoryDecisionGroup(group_name="canary"),
            MandatoryDecisionGroup(group_index=3),
        ),
        max_concurrency=2,
    )


def test_only_the_config_of_the_chosen_type_is_used() -> None:
    raw = {
        "type": "ProgressivePerGroup",
        "progressive": {"maxConcurrency": 1},
        "progressivePerGroup": {"maxFailures": 1},
    }
    assert parse_rollout_strategy(raw, PATH) == RolloutStrategy(type="ProgressivePerGroup", max_failures=1)


def test_all_has_no_mandatory_groups() -> None:
    raw = {"type": "All", "all": {"mandatoryDecisionGroups": [{"groupName": "canary"}], "maxConcurrency": 1}}
    assert parse_rollout_strategy(raw, PATH) == RolloutStrategy(type="All")


@pytest.mark.parametrize(
    ("config", "field"),
    [
        ({"progressDeadline": "2d"}, "progressDeadline"),
        ({"progressDeadline": "0"}, "progressDeadline"),
        ({"progressDeadline": 90}, "progressDeadline"),
        ({"maxConcurrency": "101%"}, "maxConcurrency"),
        ({"maxConcurrency": "1.5"}, "maxConcurrency"),
        ({"maxConcurrency": 2.5}, "maxConcurrency"),
        ({"maxFailures": True}, "maxFailures"),
        ({"maxFailures": 2**31}, "maxFailures"),
        ({"minSuccessTime": "soon"}, "minSuccessTime"),
        ({"minSuccessTime": 60}, "minSuccessTime"),
        ({"mandatoryDecisionGroups": {"groupName": "canary"}}, "mandatoryDecisionGroups"),
        ({"mandatoryDecisionGroups": [{"groupIndex": "1"}]}, "mandatoryDecisionGroups[0].groupIndex"),
    ],
)
def test_crd_rejections_name_the_field(config: dict[str, Any], field: str) -> None:
    with pytest.raises(ManifestError) as raised:
        parse_rollout_strategy({"type": "Progressive", "progressive": config}, PATH)
    assert raised.value.field == f"{PATH}.progressive.{field}"


def test_config_blocks_of_other_types_are_validated_too() -> None:
    with pytest.raises(ManifestError) as raised:
        parse_rollout_strategy({"type": "All", "progressive": {"maxConcurrency": "lots"}}, PATH)
    assert raised.value.field == f"{PATH}.progressive.maxConcurrency"


def test_digit_strings_pass_the_crd_but_not_the_handler() -> None:
    strategy = parse_rollout_strategy({"type": "Progressive", "progressive": {"maxConcurrency": "5"}}, PATH)
    with pytest.raises(RolloutError, match="^failed to parse the provided maxConcurrency"):
        plan_rollout(strategy, groups_from_decisions([("", 0, ["eu-1"])]), [], NOW)


def test_deadline_past_the_regex_fails_in_the_handler() -> None:
    strategy = parse_rollout_strategy({"type": "All", "all": {"progressDeadline": "1hx"}}, PATH)
    with pytest.raises(RolloutError, match='^time: unknown unit "hx" in duration "1hx"$'):
        plan_rollout(strategy, [], [], NOW)


@pytest.mark.parametrize("rollout_type", ["", "Canary"])
def test_empty_or_unknown_type_is_the_handler_error(rollout_type: str) -> None:
    strategy = parse_rollout_strategy({"type": rollout_type}, PATH)
    with pytest.raises(RolloutError) as raised:
        plan_rollout(strategy, [], [], NOW)
    assert str(raised.value) == f"incorrect rollout strategy type {rollout_type}"
