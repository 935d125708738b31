"""spec.strategy defaulting and validation (SetPlacementDefaults, CRD pattern, webhook).

The one parser lives in `fleet.manifests`; the CRP parser and the rollout planners share it.
"""

from __future__ import annotations

import pytest

from placement.scheduler.errors import ManifestError
from placement.scheduler.fleet.manifests import parse_rollout_strategy
from placement.scheduler.fleet.types import EXTERNAL, ROLLING_UPDATE, RollingUpdateConfig, RolloutStrategy


def test_missing_strategy_defaults_to_rolling_update_with_upstream_values() -> None:
    strategy = parse_rollout_strategy(None)

    assert strategy == RolloutStrategy(ROLLING_UPDATE, RollingUpdateConfig("25%", "25%", 60))


def test_unavailable_period_defaults_to_60_not_the_documented_10() -> None:
    strategy = parse_rollout_strategy({"rollingUpdate": {"maxSurge": 2}})

    assert strategy.rolling_update == RollingUpdateConfig("25%", 2, 60)


def test_external_strategy_has_no_rolling_update() -> None:
    assert parse_rollout_strategy({"type": "External"}) == RolloutStrategy(EXTERNAL, None)


def test_external_strategy_rejects_a_rolling_update_block() -> None:
    # the upstream webhook's text, typos included
    with pytest.raises(
        ManifestError,
        match="^spec.strategy.rollingUpdate: rollingUpdateConifg is not valid for ExternalRollout",
    ) as caught:
        parse_rollout_strategy({"type": "External", "rollingUpdate": {}})

    assert caught.value.field == "spec.strategy.rollingUpdate"


def test_empty_type_is_defaulted_like_a_missing_one() -> None:
    # SetPlacementDefaults runs in the mutating webhook, before the CRD enum is checked
    assert parse_rollout_strategy({"type": ""}) == parse_rollout_strategy(None)


@pytest.mark.parametrize("raw", [[], "RollingUpdate", {"rollingUpdate": []}, {"type": 1}])
def test_wrongly_typed_strategy_fields_are_rejected(raw: object) -> None:
    with pytest.raises(ManifestError):
        parse_rollout_strategy(raw)


def test_field_path_names_where_the_strategy_sits() -> None:
    with pytest.raises(ManifestError) as caught:
        parse_rollout_strategy({"rollingUpdate": {"maxSurge": "x"}}, field_path="input.strategy")

    assert caught.value.field == "input.strategy.rollingUpdate.maxSurge"


def test_pattern_error_uses_the_api_server_wording() -> None:
    with pytest.raises(ManifestError) as caught:
        parse_rollout_strategy({"rollingUpdate": {"maxSurge": "101%"}})

    assert caught.value.message == (
        'Invalid value: "101%": spec.strategy.rollingUpdate.maxSurge in body should match '
        "'^((100|[0-9]{1,2})%|[0-9]+)$'"
    )


def test_apply_strategy_defaults_are_kept_and_overridable() -> None:
    strategy = parse_rollout_strategy({"type": "External", "applyStrategy": {"whenToApply": "IfNotDrifted"}})

    assert strategy.apply_strategy == {
        "type": "ClientSideApply",
        "comparisonOption": "PartialComparison",
        "whenToApply": "IfNotDrifted",
        "whenToTakeOver": "Always",
    }


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
    with pytest.raises(ManifestError, match="maxUnavailable must be greater than or equal to 0, got `-1`"):
        parse_rollout_strategy({"rollingUpdate": {"maxUnavailable": -1}})


def test_negative_unavailable_period_is_rejected() -> None:
    with pytest.raises(ManifestError, match="unavailablePeriodSeconds must be greater than or equal to 0"):
        parse_rollout_strategy({"rollingUpdate": {"unavailablePeriodSeconds": -5}})


def test_zero_surge_and_zero_unavailable_are_accepted_despite_the_api_comment() -> None:
    strategy = parse_rollout_strategy({"rollingUpdate": {"maxUnavailable": 0, "maxSurge": "0%"}})

    assert strategy.rolling_update == RollingUpdateConfig(0, "0%", 60)
