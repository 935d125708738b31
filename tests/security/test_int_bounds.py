"""Integers the hub holds as Go int32 or int64 (or in a narrower CRD range): one past either limit
answers 400 naming the field, at the API, in the new-placement form and in `manage.py schedule`
(exit 2); a value at the limit is accepted. Nothing is stored on a refusal."""

from pathlib import Path
from typing import Any

import pytest
from django.urls import reverse
from rest_framework.test import APIClient

from placement.forms import as_yaml
from placement.models import Placement, StagedUpdateStrategy
from tests.factories import HubFactory, UserFactory
from tests.security.bounded import run_command

pytestmark = pytest.mark.django_db

INT32_MAX, INT32_MIN = 2**31 - 1, -(2**31)
INT64_MAX, INT64_MIN = 2**63 - 1, -(2**63)
OCM, FLEET = Placement.Kind.PLACEMENT, Placement.Kind.CLUSTER_RESOURCE_PLACEMENT


def _pick_n(**policy: Any) -> dict[str, Any]:
    return {
        "resourceSelectors": [{"group": "", "version": "v1", "kind": "Namespace", "name": "web"}],
        "policy": {"placementType": "PickN", "numberOfClusters": 1, **policy},
    }


def _rolling(**rolling: Any) -> dict[str, Any]:
    return _pick_n() | {"strategy": {"type": "RollingUpdate", "rollingUpdate": rolling}}


def _preferred(weight: int) -> dict[str, Any]:
    term = {"weight": weight, "preference": {"labelSelector": {"matchLabels": {"env": "prod"}}}}
    return _pick_n(affinity={"clusterAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [term]}})


def _decisions(value: int) -> dict[str, Any]:
    return {"decisionStrategy": {"groupStrategy": {"clustersPerDecisionGroup": value}}}


# (kind, field named in the answer, spec builder, lowest accepted, highest accepted)
PLACEMENT_FIELDS = [
    (OCM, "spec.numberOfClusters", lambda v: {"numberOfClusters": v}, 0, INT32_MAX),
    (
        OCM,
        "spec.prioritizerPolicy.configurations[0].weight",
        lambda v: {
            "prioritizerPolicy": {"configurations": [{"scoreCoordinate": {"builtIn": "Steady"}, "weight": v}]}
        },
        -10,
        10,
    ),
    (
        OCM,
        "spec.tolerations[0].tolerationSeconds",
        lambda v: {"tolerations": [{"key": "a", "operator": "Exists", "tolerationSeconds": v}]},
        INT64_MIN,
        INT64_MAX,
    ),
    (
        OCM,
        "spec.spreadPolicy.spreadConstraints[0].maxSkew",
        lambda v: {
            "spreadPolicy": {
                "spreadConstraints": [{"topologyKey": "zone", "topologyKeyType": "Label", "maxSkew": v}]
            }
        },
        1,
        INT32_MAX,
    ),
    (OCM, "spec.decisionStrategy.groupStrategy.clustersPerDecisionGroup", _decisions, INT32_MIN, INT32_MAX),
    (FLEET, "spec.policy.numberOfClusters", lambda v: _pick_n(numberOfClusters=v), 0, INT32_MAX),
    (
        FLEET,
        "spec.policy.affinity.clusterAffinity.preferredDuringSchedulingIgnoredDuringExecution[0].weight",
        _preferred,
        -100,
        100,
    ),
    (
        FLEET,
        "spec.policy.topologySpreadConstraints[0].maxSkew",
        lambda v: _pick_n(topologySpreadConstraints=[{"maxSkew": v, "topologyKey": "zone"}]),
        1,
        INT32_MAX,
    ),
    (FLEET, "spec.strategy.rollingUpdate.maxUnavailable", lambda v: _rolling(maxUnavailable=v), 0, INT32_MAX),
    (FLEET, "spec.strategy.rollingUpdate.maxSurge", lambda v: _rolling(maxSurge=v), 0, INT32_MAX),
    (
        FLEET,
        "spec.strategy.rollingUpdate.unavailablePeriodSeconds",
        lambda v: _rolling(unavailablePeriodSeconds=v),
        0,
        INT32_MAX,
    ),
    (FLEET, "spec.revisionHistoryLimit", lambda v: _pick_n() | {"revisionHistoryLimit": v}, 1, 1000),
]
CASES = [
    pytest.param(kind, field, build(value), ok, id=f"{field}={value}")
    for kind, field, build, low, high in PLACEMENT_FIELDS
    for value, ok in ((low - 1, False), (low, True), (high, True), (high + 1, False))
]


@pytest.fixture
def api() -> APIClient:
    client = APIClient()
    client.force_authenticate(UserFactory(is_superuser=True, is_staff=True))
    return client


@pytest.mark.parametrize(("kind", "field", "spec", "accepted"), CASES)
def test_api_placement(api: APIClient, kind: str, field: str, spec: dict[str, Any], accepted: bool) -> None:
    hub = HubFactory(serves_fleet=True)
    namespace = "default" if kind == OCM else ""
    body = {"hub": hub.name, "kind": kind, "namespace": namespace, "name": "bounds", "spec": spec}

    response = api.post("/api/placements/", body, format="json")

    if accepted:
        assert response.status_code == 201, response.content
    else:
        assert response.status_code == 400 and field in str(response.json()), response.content
        assert not Placement.objects.exists()


@pytest.mark.parametrize(
    ("value", "accepted"), [(0, False), (1, True), (INT32_MAX, True), (INT32_MAX + 1, False)]
)
def test_api_strategy_max_concurrency(api: APIClient, value: int, accepted: bool) -> None:
    hub = HubFactory(serves_fleet=True)
    stage = {"name": "one", "labelSelector": {"matchLabels": {"env": "a"}}, "maxConcurrency": value}

    response = api.post(
        "/api/strategies/", {"hub": hub.name, "name": "s", "spec": {"stages": [stage]}}, format="json"
    )

    assert response.status_code == (201 if accepted else 400), response.content
    assert accepted or "spec.stages[0].maxConcurrency" in str(response.json())
    assert StagedUpdateStrategy.objects.exists() == accepted


def test_new_placement_form(client: Any) -> None:
    hub = HubFactory()
    client.force_login(UserFactory(is_superuser=True, is_staff=True))
    data = {
        "hub": hub.pk,
        "kind": OCM,
        "namespace": "default",
        "name": "big",
        "spec": "numberOfClusters: 99999999999",
    }

    response = client.post(reverse("placement:placement-create"), data)

    assert "spec.numberOfClusters" in str(response.context["form"].errors["spec"])
    assert "less than or equal to 2147483647" in str(response.context["form"].errors["spec"])
    assert not Placement.objects.exists()


def test_schedule_command(tmp_path: Path) -> None:
    manifest = tmp_path / "big.yaml"
    placement = {
        "apiVersion": "cluster.open-cluster-management.io/v1beta1",
        "kind": "Placement",
        "metadata": {"name": "big", "namespace": "default"},
        "spec": {"numberOfClusters": 99999999999},
    }
    manifest.write_text(as_yaml(placement))

    result = run_command("schedule", "-f", str(manifest))

    assert result.returncode == 2
    assert f"{manifest}: document 1: spec.numberOfClusters: Invalid value: 99999999999" in result.stderr
