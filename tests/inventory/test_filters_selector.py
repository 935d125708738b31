"""The label-selector filter `q` selects in SQL exactly what the scheduler's LabelSelector.matches selects."""

import pytest

from inventory.filtersets import ClusterFilterSet
from inventory.models import ManagedCluster
from placement.scheduler.labels import parse_selector_query
from tests.factories import HubFactory, ManagedClusterFactory

pytestmark = pytest.mark.django_db

OCM_SET_LABEL = "cluster.open-cluster-management.io/clusterset"
LABELS = {
    "west-a": {"region": "us-west-1", "vendor": "OpenShift", OCM_SET_LABEL: "prod", "gpu": ""},
    "west-b": {"region": "us-west-1", "vendor": "AKS", "spot": "true"},
    "east-a": {"region": "us-east-1", "vendor": "EKS", OCM_SET_LABEL: "dev", "team.example.com/owner": "a"},
    "bare": {},
    "double": {"app__tier": "web", "region": "eu-central-1", "vendor": "OpenShift"},
}


@pytest.fixture
def clusters() -> dict[str, ManagedCluster]:
    hub = HubFactory(name="filters")
    return {name: ManagedClusterFactory(hub=hub, name=name, labels=labels) for name, labels in LABELS.items()}


def selected(expression: str) -> set[str]:
    filterset = ClusterFilterSet({"q": expression}, queryset=ManagedCluster.objects.all())
    assert filterset.is_valid(), filterset.errors
    return set(filterset.qs.values_list("name", flat=True))


@pytest.mark.parametrize(
    "expression",
    [
        "region=us-west-1",
        "region==us-west-1",
        "region!=us-west-1",
        "vendor in (AKS,EKS)",
        "vendor notin (AKS,EKS)",
        "spot",
        "!spot",
        "region=us-west-1,!spot",
        "region=us-west-1,vendor in (OpenShift,AKS),!spot",
        f"{OCM_SET_LABEL}=prod",
        f"{OCM_SET_LABEL} notin (prod)",
        f"!{OCM_SET_LABEL}",
        "team.example.com/owner",
        "team.example.com/owner=a",
        "app__tier=web",
        "gpu=",
        "gpu",
        "region in (nowhere)",
    ],
)
def test_selector_matches_the_scheduler(clusters: dict[str, ManagedCluster], expression: str) -> None:
    selector = parse_selector_query(expression)
    expected = {name for name, labels in LABELS.items() if selector.matches(labels)}
    assert selected(expression) == expected


def test_empty_expression_selects_everything(clusters: dict[str, ManagedCluster]) -> None:
    assert selected("") == set(LABELS)


@pytest.mark.parametrize(
    ("expression", "reason"),
    [
        ("region in (a", "unable to parse requirement"),
        ("region=us-west-1,", "empty requirement"),
        ("Bad_Prefix/x=1", "prefix part must be a lowercase RFC 1123 subdomain"),
        ("region=not a value", "invalid value"),
        ("=x", "unable to parse requirement"),
    ],
)
def test_bad_expression_is_a_form_error_on_q(
    clusters: dict[str, ManagedCluster], expression: str, reason: str
) -> None:
    filterset = ClusterFilterSet({"q": expression}, queryset=ManagedCluster.objects.all())
    assert not filterset.is_valid()
    assert list(filterset.errors) == ["q"]
    assert reason in filterset.errors["q"][0]
    assert filterset.errors["q"][0].startswith("invalid label selector: ")
