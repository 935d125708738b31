"""`manage.py describe placement|crp`: what `oc describe` prints, from the stored placement."""

import pytest
from django.contrib.auth.models import User
from django.core.management import CommandError, call_command

from inventory.models import Hub
from placement import service
from placement.models import Placement

pytestmark = pytest.mark.django_db


def test_describe_placement(web_placement: Placement, capsys: pytest.CaptureFixture[str]) -> None:
    call_command("describe", "placement", "shop", "-n", "web")
    out = capsys.readouterr().out
    for line in (
        "Name:         shop",
        "Namespace:    web",
        "API Version:  cluster.open-cluster-management.io/v1beta1",
        "Kind:         Placement",
        "  numberOfClusters: 2",
        "  Number Of Selected Clusters:  2",
        "PlacementSatisfied",
        "AllDecisionsScheduled",
        "shop-decision-1",
    ):
        assert line in out
    events = out.split("Events:")[1].splitlines()
    assert events[1].split() == ["Type", "Reason", "Age", "From", "Message"]
    reasons = [line.split()[1] for line in events[3:]]
    assert reasons == ["DecisionCreate", "DecisionUpdate", "ScoreUpdate"]
    assert "placementController" in events[3]


def test_describe_crp(manifests_hub: Hub, editor: User, capsys: pytest.CaptureFixture[str]) -> None:
    service.create_placement(
        kind=Placement.Kind.CLUSTER_RESOURCE_PLACEMENT,
        hub=manifests_hub,
        namespace="",
        name="web-crp",
        spec={"resourceSelectors": [{"group": "", "version": "v1", "kind": "Namespace", "name": "web"}]},
        actor=editor,
    )
    call_command("describe", "crp", "web-crp")
    out = capsys.readouterr().out
    assert "Kind:         ClusterResourcePlacement" in out
    assert "ClusterResourcePlacementScheduled" in out and "Bindings:" in out
    assert "Events:  <none>" in out


def test_an_unknown_placement_is_exit_2(db: None) -> None:
    with pytest.raises(CommandError) as raised:
        call_command("describe", "placement", "nope", "-n", "web")
    assert raised.value.returncode == 2 and 'Placement "nope" not found in namespace web' in str(raised.value)
