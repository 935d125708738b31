"""Label selectors match and validate with Kubernetes semantics."""

import pytest

from placement.scheduler.labels import (
    SelectorError,
    parse_label_selector,
    parse_requirements,
    parse_selector_query,
)


def test_empty_selector_matches_everything() -> None:
    selector = parse_label_selector({})
    assert selector.is_empty
    assert selector.matches({})
    assert selector.matches({"cloud": "Amazon"})


def test_match_labels_and_expressions_are_anded() -> None:
    selector = parse_label_selector(
        {
            "matchLabels": {"cloud": "Amazon"},
            "matchExpressions": [{"key": "region", "operator": "In", "values": ["us-east-1", "us-west-2"]}],
        }
    )
    assert selector.matches({"cloud": "Amazon", "region": "us-east-1"})
    assert not selector.matches({"cloud": "Amazon", "region": "eu-west-1"})
    assert not selector.matches({"cloud": "Google", "region": "us-east-1"})


def test_not_in_passes_when_the_key_is_absent() -> None:
    (requirement,) = parse_requirements([{"key": "env", "operator": "NotIn", "values": ["dev"]}], "x")
    assert requirement.matches({})
    assert requirement.matches({"env": "prod"})
    assert not requirement.matches({"env": "dev"})


def test_exists_and_does_not_exist() -> None:
    exists, absent = parse_requirements(
        [{"key": "gpu", "operator": "Exists"}, {"key": "spot", "operator": "DoesNotExist"}], "x"
    )
    assert exists.matches({"gpu": ""}) and not exists.matches({})
    assert absent.matches({}) and not absent.matches({"spot": "true"})


def test_describe_reads_like_kubectl() -> None:
    selector = parse_label_selector(
        {
            "matchLabels": {"a": "1"},
            "matchExpressions": [{"key": "b", "operator": "NotIn", "values": ["x", "y"]}],
        }
    )
    assert selector.describe() == "a=1,b notin (x,y)"


@pytest.mark.parametrize(
    ("raw", "field", "message"),
    [
        (
            {"matchExpressions": [{"key": "a", "operator": "Foo"}]},
            "s.matchExpressions[0].operator",
            '"Foo" is not a valid label selector operator',
        ),
        (
            {"matchExpressions": [{"key": "a", "operator": "In"}]},
            "s.matchExpressions[0].values",
            "for 'In', 'NotIn' operators, values set can't be empty",
        ),
        (
            {"matchExpressions": [{"key": "a", "operator": "Exists", "values": ["x"]}]},
            "s.matchExpressions[0].values",
            "values set must be empty for 'Exists', 'DoesNotExist' operators",
        ),
        ({"matchLabels": {"a": 1}}, "s.matchLabels.a", "must be a string"),
    ],
)
def test_invalid_selectors_name_the_field(raw: dict, field: str, message: str) -> None:
    with pytest.raises(SelectorError) as excinfo:
        parse_label_selector(raw, "s")
    assert excinfo.value.field == field
    assert excinfo.value.message == message


def test_invalid_keys_and_values_are_rejected() -> None:
    with pytest.raises(SelectorError):
        parse_label_selector({"matchLabels": {"bad key": "x"}}, "s")
    with pytest.raises(SelectorError):
        parse_label_selector({"matchLabels": {"ok": "-bad-"}}, "s")
    assert parse_label_selector({"matchLabels": {"cluster.open-cluster-management.io/clusterset": "a"}})


def test_selector_query_syntax_like_kubectl() -> None:
    selector = parse_selector_query("region=us-west-1,vendor in (A, B),tier!=db,gpu,!spot")
    assert selector.matches({"region": "us-west-1", "vendor": "B", "gpu": "1"})
    assert not selector.matches({"region": "us-west-1", "vendor": "C", "gpu": "1"})
    assert not selector.matches({"region": "us-west-1", "vendor": "A", "gpu": "1", "spot": "true"})
    assert not selector.matches({"region": "us-west-1", "vendor": "A", "gpu": "1", "tier": "db"})
    assert parse_selector_query("").is_empty


@pytest.mark.parametrize("text", ["=x", "a,,b", "vendor in A", "bad key=x"])
def test_selector_query_rejects_malformed_requirements(text: str) -> None:
    with pytest.raises(SelectorError):
        parse_selector_query(text)
