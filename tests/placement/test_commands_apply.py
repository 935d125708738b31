"""`manage.py apply`: dashboard-owned placements from manifests; exit 2 and nothing written on any problem."""

from pathlib import Path

import pytest
from django.core.management import CommandError, call_command

from inventory.models import Hub
from placement.models import Placement

pytestmark = pytest.mark.django_db

PLACEMENT = """\
apiVersion: cluster.open-cluster-management.io/v1beta1
kind: Placement
metadata:
  name: shop
  namespace: web
  labels: {{team: payments}}
spec:
  clusterSets: [prod-us, prod-eu]
  numberOfClusters: {number}
---
apiVersion: v1
kind: ConfigMap
metadata: {{name: ignored}}
"""


def write(tmp_path: Path, text: str, name: str = "shop.yaml") -> str:
    path = tmp_path / name
    path.write_text(text)
    return str(path)


def test_apply_creates_then_configures(
    manifests_hub: Hub, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = write(tmp_path, PLACEMENT.format(number=2))
    call_command("apply", "-f", path, "--hub", "manifests")
    out, err = capsys.readouterr()
    assert "Placement web/shop created on hub manifests (2 selected)" in out
    assert "document 2: kind ConfigMap (apiVersion v1) is not used by the scheduler; ignored" in err
    placement = Placement.objects.get(hub=manifests_hub, name="shop")
    assert (placement.owner, placement.labels, placement.spec["numberOfClusters"]) == (
        "dashboard",
        {"team": "payments"},
        2,
    )
    call_command("apply", "-f", write(tmp_path, PLACEMENT.format(number=3)), "--hub", "manifests")
    assert "configured" in capsys.readouterr().out
    placement.refresh_from_db()
    assert placement.status["numberOfSelectedClusters"] == 3
    assert placement.history.first().trigger.startswith("applied by ")


def test_a_bad_document_writes_nothing(manifests_hub: Hub, tmp_path: Path) -> None:
    good = write(tmp_path, PLACEMENT.format(number=2), "a.yaml")
    bad = write(tmp_path, PLACEMENT.format(number=-1).replace("shop", "other"), "b.yaml")
    with pytest.raises(CommandError) as raised:
        call_command("apply", "-f", good, "-f", bad, "--hub", "manifests")
    assert raised.value.returncode == 2
    assert f"{bad}: document 1: spec.numberOfClusters: Invalid value: -1" in str(raised.value)
    assert not Placement.objects.filter(owner="dashboard").exists()


def test_hub_owned_names_are_refused(manifests_hub: Hub, tmp_path: Path) -> None:
    path = write(tmp_path, PLACEMENT.format(number=2).replace("name: shop", "name: frontend"))
    with pytest.raises(CommandError) as raised:
        call_command("apply", "-f", path, "--hub", "manifests")
    assert "metadata.name: Placement frontend is a read-only mirror of hub manifests" in str(raised.value)


def test_an_unknown_hub_is_exit_2(manifests_hub: Hub, tmp_path: Path) -> None:
    with pytest.raises(CommandError) as raised:
        call_command("apply", "-f", write(tmp_path, PLACEMENT.format(number=2)), "--hub", "nope")
    assert raised.value.returncode == 2 and "--hub" in str(raised.value)
