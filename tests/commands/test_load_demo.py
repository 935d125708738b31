"""`load_demo`: the shipped demo fleet loads idempotently; bad input exits 2 and writes nothing."""

import os
import subprocess
import sys
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command

from inventory.models import (
    AddOnPlacementScore,
    Hub,
    ManagedCluster,
    ManagedClusterSet,
    ManagedClusterSetBinding,
)
from placement.models import Placement, PlacementDecision

pytestmark = pytest.mark.django_db

BASE_DIR = Path(__file__).resolve().parents[2]
CLUSTER_HEADER = "apiVersion: cluster.open-cluster-management.io/v1\nkind: ManagedCluster\n"

MODELS = (
    Hub,
    ManagedCluster,
    ManagedClusterSet,
    ManagedClusterSetBinding,
    AddOnPlacementScore,
    Placement,
    PlacementDecision,
)


def snapshot() -> dict[str, list[tuple]]:
    """Every row of every loaded model, minus the timestamps a reload refreshes."""
    volatile = {"synced_at", "last_synced_at", "last_good_sync_at", "updated"}
    return {
        model.__name__: sorted(
            tuple(sorted((k, repr(v)) for k, v in row.items() if k not in volatile))
            for row in model.objects.values()
        )
        for model in MODELS
    }


def run(*args: str) -> tuple[str, str]:
    out, err = StringIO(), StringIO()
    call_command("load_demo", *args, stdout=out, stderr=err)
    return out.getvalue(), err.getvalue()


def test_loads_the_demo_fleet_as_hub_manifests() -> None:
    out, _ = run()
    hub = Hub.objects.get(name="manifests")
    assert hub.server_url == "http://127.0.0.1:8001"
    assert hub.last_synced_at is not None
    assert ManagedCluster.objects.filter(kind="ManagedCluster").count() == 12
    assert ManagedCluster.objects.filter(kind="MemberCluster").count() == 6
    assert ManagedClusterSet.objects.get(name="global").label_selector == {}
    assert Placement.objects.filter(kind="Placement").count() == 3
    assert Placement.objects.filter(kind="ClusterResourcePlacement").count() == 2
    assert PlacementDecision.objects.get(name="frontend-decision-1").placement.name == "frontend"
    assert "Loaded" in out


def test_hub_option_names_the_hub_and_bad_names_exit_2() -> None:
    run("--hub", "offline-fleet")
    assert set(Hub.objects.values_list("name", flat=True)) == {"offline-fleet"}
    assert ManagedCluster.objects.filter(hub__name="offline-fleet", kind="ManagedCluster").count() == 12
    with pytest.raises(CommandError, match="--hub 'no good'") as error:
        run("--hub", "no good")
    assert error.value.returncode == 2


def test_loaded_fields_keep_the_kubernetes_shapes() -> None:
    run()
    gpu = ManagedCluster.objects.get(name="prod-usw2-gpu")
    assert gpu.taints[0]["effect"] == "NoSelect" and gpu.taints[0]["timeAdded"]
    assert {"name": "platform.open-cluster-management.io", "value": "GCP"} in gpu.claims
    assert gpu.allocatable == {"cpu": "30", "memory": "300Gi"}
    assert ManagedCluster.objects.get(name="edge-store-042").availability == "Unknown"
    member = ManagedCluster.objects.get(name="aks-northeurope-prod-01")
    assert member.availability == "Unavailable"
    assert member.properties["kubernetes-fleet.io/node-count"]["value"] == "6"
    assert member.resource_usage["available"]["cpu"] == "30"
    score = AddOnPlacementScore.objects.get(namespace="prod-use1-a")
    assert score.valid_until is not None and score.scores[0] == {"name": "cpuAvailable", "value": 62}


def test_is_idempotent() -> None:
    run()
    first = snapshot()
    run()
    assert snapshot() == first


def test_unknown_kinds_warn_and_are_ignored(tmp_path: Path) -> None:
    (tmp_path / "mixed.yaml").write_text(
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: settings}\n---\n"
        "apiVersion: cluster.open-cluster-management.io/v1\nkind: ManagedCluster\nmetadata: {name: c1}\n"
    )
    _, err = run(str(tmp_path))
    where = f"{tmp_path / 'mixed.yaml'}: document 1"
    assert f"{where}: kind ConfigMap (apiVersion v1) is not used by the scheduler; ignored" in err
    assert list(ManagedCluster.objects.values_list("name", flat=True)) == ["c1"]


@pytest.mark.parametrize(
    ("content", "reason"),
    [
        ("apiVersion: v1\nkind: [unclosed\n", "document 1: invalid YAML"),
        (
            f"{CLUSTER_HEADER}metadata: {{name: ok}}\n---\n{CLUSTER_HEADER}metadata: {{labels: {{}}}}\n",
            "document 2: metadata.name: Required value: name is required",
        ),
        (
            "apiVersion: cluster.open-cluster-management.io/v1beta1\nkind: Placement\nmetadata: {name: p}\n",
            "document 1: missing metadata.namespace",
        ),
        (
            f"{CLUSTER_HEADER}metadata: {{name: c}}\nspec: {{taints: oops}}\n",
            'document 1: spec.taints: Invalid value: "string": spec.taints in body must be of type array',
        ),
    ],
)
def test_bad_input_exits_2_and_writes_nothing(tmp_path: Path, content: str, reason: str) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text(content)
    err = StringIO()
    with pytest.raises(CommandError) as raised:
        # The demo folder first: its valid documents must not be written either.
        call_command("load_demo", str(BASE_DIR / "demo"), str(bad), stdout=StringIO(), stderr=err)
    assert raised.value.returncode == 2
    assert f"{bad}: {reason}" in err.getvalue()
    assert not Hub.objects.exists()
    assert not ManagedCluster.objects.exists()


def test_exit_code_2_from_the_command_line(tmp_path: Path) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text("kind: ManagedCluster\nmetadata: {name: x}\n")
    result = subprocess.run(
        [sys.executable, "manage.py", "load_demo", str(bad)],
        cwd=BASE_DIR,
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, "DEBUG": "1", "DATABASE_URL": f"sqlite:///{tmp_path / 'db.sqlite3'}"},
    )
    assert result.returncode == 2
    assert f"{bad}: document 1: apiVersion: Required value" in result.stderr
