"""spec.strategy defaulting and validation (SetPlacementDefaults, CRD pattern, webhook)."""

from __future__ import annotations

import pytest

from placement.scheduler.errors import ManifestError
from placement.scheduler.rollout.rolling import (
    EXTERNAL,
    ROLLING_UPDATE,
    RollingUpdateConfig,
    RolloutStrategy,
    parse_rollout_strategy,
)


def test_missing_strategy_defaults_to_rolling_update_with_upstream_values() -> None:
    strategy = parse_rollout_strategy(None)

    assert strategy == RolloutStrategy(ROLLING_UPDATE, RollingUpdateConfig("25%", "25%", 60))


def test_unavailable_period_defaults_to_60_not_the_documented_10() -> None:
    strategy = parse_rollout_strategy({"rollingUpdate": {"maxSurge": 2}})

    assert strategy.rolling_update == RollingUpdateConfig("25%", 2, 60)


def test_external_strategy_has_no_rolling_update() -> None:
    assert parse_rollout_strategy({"type": "External"}) == RolloutStrategy(EXTERNAL, None)


def test_external_strategy_rejects_a_rolling_update_block() -> None:
    with pytest.raises(ManifestError, match="rollingUpdate config is not valid for External"):
        parse_rollout_strategy({"type": "External", "rollingUpdate": {}})


def test_unknown_strategy_type_is_rejected() -> None:
    with pytest.raises(ManifestError) as caught:
        parse_rollout_strategy({"type": "BlueGreen"})

    assert caught.value.field == "spec.strategy.type"


@pytest.mark.parametrize("value", ["101%", "25.5%", "-1", "%25", "abc"])
def test_values_outside_the_crd_pattern_are_rejected(value: str) -> None:
    with pytest.raises(ManifestError) as caught:
        parse_rollout_strategy({"rollingUpdate": {"maxUnavailable": value}})

    assert caught.value.field == "spec.strategy.rollingUpdate.maxUnavailable"


def test_digit_string_passes_the_pattern_but_not_the_webhook() -> None:
    with pytest.raises(ManifestError, match="maxSurge `5` is invalid"):
        parse_rollout_strategy({"rollingUpdate": {"maxSurge": "5"}})


def test_negative_integer_is_rejected_by_the_webhook() -> None:
    with pytest.raises(ManifestError, match="maxUnavailable must be greater than or equal to 0"):
        parse_rollout_strategy({"rollingUpdate": {"maxUnavailable": -1}})


def test_negative_unavailable_period_is_rejected() -> None:
    with pytest.raises(ManifestError, match="unavailablePeriodSeconds must be greater than or equal to 0"):
        parse_rollout_strategy({"rollingUpdate": {"unavailablePeriodSeconds": -5}})


def test_zero_surge_and_zero_unavailable_are_accepted_despite_the_api_comment() -> None:
    strategy = parse_rollout_strategy({"rollingUpdate": {"maxUnavailable": 0, "maxSurge": "0%"}})

    assert strategy.rolling_update == RollingUpdateConfig(0, "0%", 60)
