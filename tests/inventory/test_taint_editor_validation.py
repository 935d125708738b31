"""Taint input: Kubernetes' qualified-name and label-value rules and the kind's effects, in apimachinery's
wording, every problem named by its field path."""

import pytest
from django.core.exceptions import ValidationError

from inventory import editing
from inventory.models import ManagedCluster

OCM, FLEET = ManagedCluster.Kind.MANAGED_CLUSTER, ManagedCluster.Kind.MEMBER_CLUSTER
NAME_PART = (
    "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an "
    "alphanumeric character (at most 63 characters)"
)
LABEL_VALUE = (
    "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must "
    "start and end with an alphanumeric character (at most 63 characters)"
)


@pytest.mark.parametrize(
    ("kind", "taint", "field", "message"),
    [
        (OCM, {"key": "Bad Key", "effect": "NoSelect"}, "key", f'Invalid value: "Bad Key": {NAME_PART}'),
        (
            OCM,
            {"key": "Example.com/gpu", "effect": "NoSelect"},
            "key",
            'Invalid value: "Example.com/gpu": prefix part must be a lowercase RFC 1123 subdomain',
        ),
        (
            OCM,
            {"key": "/gpu", "effect": "NoSelect"},
            "key",
            'Invalid value: "/gpu": prefix part must be non-empty',
        ),
        (OCM, {"effect": "NoSelect"}, "key", "Required value"),
        (
            OCM,
            {"key": "gpu", "value": "a b", "effect": "NoSelect"},
            "value",
            f'Invalid value: "a b": {LABEL_VALUE}',
        ),
        (
            OCM,
            {"key": "gpu", "value": "x" * 64, "effect": "NoSelect"},
            "value",
            f'Invalid value: "{"x" * 64}": {LABEL_VALUE}',
        ),
        (OCM, {"key": "gpu"}, "effect", "Required value"),
        (
            OCM,
            {"key": "gpu", "effect": "NoSchedule"},
            "effect",
            'Unsupported value: "NoSchedule"'
            ': supported values: "NoSelect", "NoSelectIfNew", "PreferNoSelect"',
        ),
        (
            FLEET,
            {"key": "gpu", "effect": "NoSelect"},
            "effect",
            'Unsupported value: "NoSelect": supported values: "NoSchedule"',
        ),
        (OCM, {"key": 7, "effect": "NoSelect"}, "key", "Invalid value: 7: must be a string"),
        (
            OCM,
            {"key": "gpu", "effect": "NoSelect", "colour": "red"},
            "colour",
            "unknown field; a taint has key, value and effect",
        ),
    ],
)
def test_each_rule_names_the_field_with_apimachinery_wording(kind, taint, field, message) -> None:
    assert editing.taint_errors(kind, [{"key": "ok", "effect": editing.EFFECTS[kind][0]}, taint]) == {
        f"taints[1].{field}": message
    }


def test_valid_taints_of_both_kinds_pass() -> None:
    ocm = [
        {"key": "cluster.open-cluster-management.io/unreachable", "effect": "NoSelect"},
        {"key": "maintenance", "value": "node-pool_upgrade.2", "effect": "NoSelectIfNew"},
        {"key": "gpu", "value": "", "effect": "PreferNoSelect", "timeAdded": "2026-11-20T10:00:00Z"},
    ]
    assert editing.taint_errors(OCM, ocm) == {}
    spot = {"key": "example.com/spot", "value": "true", "effect": "NoSchedule"}
    assert editing.taint_errors(FLEET, [spot]) == {}


def test_keys_are_unique_and_the_list_must_be_a_list_of_objects() -> None:
    twice = [{"key": "gpu", "effect": "NoSelect"}, {"key": "gpu", "value": "a", "effect": "PreferNoSelect"}]
    assert editing.taint_errors(OCM, twice) == {"taints[1].key": 'Duplicate value: "gpu"'}
    assert editing.taint_errors(OCM, ["gpu"]) == {"taints[0]": "Invalid value: must be an object"}
    not_a_list = {"taints": "Invalid value: must be an array of taints"}
    assert editing.taint_errors(OCM, {"key": "gpu"}) == not_a_list
    assert editing.taint_errors(OCM, None) == not_a_list


def test_every_problem_of_every_row_is_reported_at_once() -> None:
    errors = editing.taint_errors(OCM, [{"key": "a b", "value": "-", "effect": "Never"}, {}])
    assert set(errors) == {
        "taints[0].key",
        "taints[0].value",
        "taints[0].effect",
        "taints[1].key",
        "taints[1].effect",
    }


def test_planned_taints_keep_time_added_only_where_key_value_and_effect_are_unchanged() -> None:
    cluster = ManagedCluster(
        kind=OCM,
        taints=[
            {"key": "kept", "value": "v", "effect": "NoSelect", "timeAdded": "2026-11-01T00:00:00Z"},
            {"key": "revalued", "value": "old", "effect": "NoSelect", "timeAdded": "2026-11-02T00:00:00Z"},
            {"key": "re-effected", "effect": "NoSelect", "timeAdded": "2026-11-03T00:00:00Z"},
            {"key": "removed", "effect": "NoSelect", "timeAdded": "2026-11-04T00:00:00Z"},
        ],
    )
    sent = [
        # clients echo what they read; a timeAdded they send is never taken
        {"key": "kept", "value": "v", "effect": "NoSelect", "timeAdded": "1999-01-01T00:00:00Z"},
        {"key": "revalued", "value": "new", "effect": "NoSelect"},
        {"key": "re-effected", "effect": "NoSelectIfNew"},
        {"key": "new", "value": "", "effect": "PreferNoSelect", "timeAdded": "2026-11-05T00:00:00Z"},
    ]
    assert editing.planned_taints(cluster, sent) == [
        {"key": "kept", "value": "v", "effect": "NoSelect", "timeAdded": "2026-11-01T00:00:00Z"},
        {"key": "revalued", "value": "new", "effect": "NoSelect"},
        {"key": "re-effected", "effect": "NoSelectIfNew"},
        {"key": "new", "effect": "PreferNoSelect"},
    ]


def test_planned_taints_refuse_invalid_input_with_every_field() -> None:
    with pytest.raises(ValidationError) as caught:
        editing.planned_taints(ManagedCluster(kind=FLEET), [{"key": "gpu", "effect": "NoSelect"}])
    assert caught.value.message_dict == {
        "taints[0].effect": ['Unsupported value: "NoSelect": supported values: "NoSchedule"']
    }
