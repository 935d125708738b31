"""What-if: overrides merged onto the stored spec, evaluated on the hub's inventory, never saved."""

from datetime import UTC, datetime
from typing import Any

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from placement import service, whatif
from placement.models import DecisionChange, Placement, PlacementDecision, PlacementEvent
from placement.scheduler.errors import ManifestError

pytestmark = pytest.mark.django_db

# the demo MemberClusters' heartbeats are from 11:59:30 that day
DEMO_NOW = datetime(2026, 11, 20, 12, tzinfo=UTC)
FRONTEND_DECISIONS = ["prod-euw1-a", "prod-use1-a"]
ADDON = "AddOn/resource-usage-score/cpuAvailable"
MEMORY = "ResourceAllocatableMemory"


@pytest.fixture
def frontend(demo_fleet: None) -> Placement:
    return Placement.objects.get(name="frontend")


def configurations(memory: int, addon: int) -> list[dict]:
    return [
        {"scoreCoordinate": {"type": "BuiltIn", "builtIn": MEMORY}, "weight": memory},
        {
            "scoreCoordinate": {
                "type": "AddOn",
                "addOn": {"resourceName": "resource-usage-score", "scoreName": "cpuAvailable"},
            },
            "weight": addon,
        },
    ]


def test_the_diff_compares_the_new_selection_with_the_stored_decisions(frontend: Placement) -> None:
    answer = whatif.preview(frontend, {"numberOfClusters": 1}, now=DEMO_NOW)
    assert answer["numberOfSelectedClusters"] == 1 == len(answer["selected"])
    diff = answer["diff"]
    assert sorted(diff["kept"] + diff["removed"]) == FRONTEND_DECISIONS
    assert diff["kept"] + diff["added"] == answer["selected"]
    # the same as evaluating the merged spec directly
    direct = service.evaluate(frontend, spec={**frontend.spec, "numberOfClusters": 1}, now=DEMO_NOW)
    assert answer["selected"] == list(direct.selected)


def test_ranking_rows_carry_raw_scores_weighted_contributions_totals_and_ranks(frontend: Placement) -> None:
    answer = whatif.preview(
        frontend,
        {"prioritizerPolicy": {"mode": "Additive", "configurations": configurations(-3, 7)}},
        now=DEMO_NOW,
    )
    assert answer["weights"] == {"Balance": 1, "Steady": 1, MEMORY: -3, ADDON: 7}
    totals = []
    for row in answer["ranking"]:
        weights = answer["weights"]
        assert row["contributions"] == {name: raw * weights[name] for name, raw in row["scores"].items()}
        assert row["total"] == sum(row["contributions"].values())
        totals.append((-row["total"], row["name"]))
    assert totals == sorted(totals)  # by total descending, then name
    assert [row["rank"] for row in answer["ranking"]] == list(range(1, len(answer["ranking"]) + 1))
    assert [row["name"] for row in answer["ranking"] if row["selected"]] == answer["selected"]
    chart = answer["chart"]
    assert [trace["name"] for trace in chart["data"]] == sorted(answer["weights"])
    first = answer["ranking"][0]
    assert [trace["y"][0] for trace in chart["data"]] == [
        first["contributions"][name] for name in sorted(answer["weights"])
    ]


def test_exact_mode_uses_only_the_configured_prioritizers(frontend: Placement) -> None:
    answer = whatif.preview(
        frontend,
        {"prioritizerPolicy": {"mode": "Exact", "configurations": configurations(2, 0)}},
        now=DEMO_NOW,
    )
    assert answer["weights"] == {MEMORY: 2}


def test_turning_a_toleration_off_filters_the_tainted_cluster(demo_fleet: None) -> None:
    gpu = Placement.objects.get(name="gpu-inference")
    every = {"numberOfClusters": None}
    with_both = whatif.preview(gpu, every, now=DEMO_NOW)
    without_gpu = whatif.preview(gpu, {**every, "tolerations": gpu.spec["tolerations"][1:]}, now=DEMO_NOW)
    assert "prod-usw2-gpu" in with_both["selected"]
    assert "prod-usw2-gpu" not in without_gpu["selected"]
    assert "numberOfClusters" not in without_gpu["spec"]


def test_a_misconfigured_prioritizer_is_shown_as_upstream_shows_it_not_refused(frontend: Placement) -> None:
    spread = [{"scoreCoordinate": {"type": "BuiltIn", "builtIn": "Spread"}, "weight": 1}]
    answer = whatif.preview(frontend, {"prioritizerPolicy": {"configurations": spread}}, now=DEMO_NOW)
    misconfigured = next(c for c in answer["conditions"] if c["type"] == "PlacementMisconfigured")
    assert misconfigured["status"] == "True" and "Spread" in misconfigured["message"]
    assert answer["selected"] == []
    assert answer["diff"]["removed"] == FRONTEND_DECISIONS


@pytest.mark.parametrize(
    ("override", "field", "reason"),
    [
        (
            {"prioritizerPolicy": {"configurations": configurations(11, 1)}},
            "spec.prioritizerPolicy.configurations[0].weight",
            "less than or equal to 10",
        ),
        (
            {"prioritizerPolicy": {"configurations": [{"scoreCoordinate": {"type": "Magic"}, "weight": 1}]}},
            "spec.prioritizerPolicy.configurations[0].scoreCoordinate.type",
            "Magic",
        ),
        (
            {"prioritizerPolicy": {"configurations": [{"scoreCoordinate": {"type": "AddOn", "addOn": {}}}]}},
            "spec.prioritizerPolicy.configurations[0].scoreCoordinate.addOn.resourceName",
            "Required",
        ),
        (
            {"tolerations": [{"key": "gpu", "operator": "Sometimes"}]},
            "spec.tolerations[0].operator",
            "Sometimes",
        ),
        ({"tolerations": ["gpu"]}, "spec.tolerations[0]", "must be an object"),
        ({"numberOfClusters": -1}, "spec.numberOfClusters", "greater than or equal to 0"),
        ({"numberOfClusters": "three"}, "spec.numberOfClusters", "integer"),
        ({"colour": "blue"}, "colour", "unknown field"),
    ],
)
def test_invalid_overrides_name_the_field_and_the_reason(
    frontend: Placement, override: dict, field: str, reason: str
) -> None:
    with pytest.raises(ManifestError) as caught:
        whatif.preview(frontend, override, now=DEMO_NOW)
    assert caught.value.field == field
    assert reason in caught.value.message


def test_a_preview_writes_nothing(frontend: Placement) -> None:
    spec, status = dict(frontend.spec), dict(frontend.status)
    models = (PlacementDecision, DecisionChange, PlacementEvent)
    counts = [model.objects.count() for model in models]
    service.hub_snapshot(frontend.hub)  # built once; a preview then only reads
    with CaptureQueriesContext(connection) as captured:
        whatif.preview(frontend, {"numberOfClusters": 1, "tolerations": []}, now=DEMO_NOW)
    writes = [q["sql"] for q in captured if q["sql"].split()[0].upper() in {"INSERT", "UPDATE", "DELETE"}]
    assert writes == []
    frontend.refresh_from_db()
    assert (frontend.spec, frontend.status) == (spec, status)
    assert counts == [model.objects.count() for model in models]


def test_fleet_preferred_weights_and_number_of_clusters(demo_fleet: None) -> None:
    web_app = Placement.objects.get(name="web-app")
    base = whatif.preview(web_app, {}, now=DEMO_NOW)
    flipped = whatif.preview(
        web_app, {"preferred": [{"index": 0, "weight": -40}], "numberOfClusters": 2}, now=DEMO_NOW
    )
    terms = flipped["spec"]["policy"]["affinity"]["clusterAffinity"][
        "preferredDuringSchedulingIgnoredDuringExecution"
    ]
    assert [term["weight"] for term in terms] == [-40, 20]
    assert flipped["spec"]["policy"]["numberOfClusters"] == 2
    assert web_app.spec["policy"]["numberOfClusters"] == 3  # the stored spec is untouched
    assert flipped["numberOfSelectedClusters"] <= 2
    assert flipped["ranking"] != base["ranking"]
    for row in flipped["ranking"]:
        assert row["total"] == row["scores"]["Affinity"] + row["scores"]["TopologySpread"]
    assert flipped["conditions"][0]["type"] == "Scheduled"


@pytest.mark.parametrize(
    ("override", "field"),
    [
        (
            {"preferred": [{"index": 0, "weight": 101}]},
            "spec.policy.affinity.clusterAffinity.preferredDuringSchedulingIgnoredDuringExecution[0].weight",
        ),
        ({"preferred": [{"index": 7, "weight": 1}]}, "preferred[0].index"),
        ({"preferred": [{"index": 0, "weight": 1, "colour": "x"}]}, "preferred[0].colour"),
        ({"numberOfClusters": -2}, "spec.policy.numberOfClusters"),
        ({"prioritizerPolicy": {}}, "prioritizerPolicy"),
    ],
)
def test_invalid_fleet_overrides_name_the_field(demo_fleet: None, override, field) -> None:
    web_app = Placement.objects.get(name="web-app")
    with pytest.raises(ManifestError) as caught:
        whatif.preview(web_app, override, now=DEMO_NOW)
    assert caught.value.field == field


def controls_of(name: str) -> dict[str, Any]:
    placement = Placement.objects.get(name=name)
    return placement.family.whatif_controls(placement)


def test_controls_read_weights_mode_count_and_tolerations_from_the_spec(demo_fleet: None) -> None:
    controls = controls_of("frontend")
    assert controls["mode"] == "Additive" and controls["numberOfClusters"] == 3
    assert [(c["label"], c["weight"]) for c in controls["configurations"]] == [(MEMORY, 2), (ADDON, 1)]
    gpu = controls_of("gpu-inference")
    assert [t["label"] for t in gpu["tolerations"]] == [
        "nvidia.com/gpu Exists:NoSelect",
        "cluster.open-cluster-management.io/unreachable Exists for 600s",
    ]
    fleet = controls_of("web-app")
    assert fleet["placementType"] == "PickN" and [t["weight"] for t in fleet["preferred"]] == [40, 20]
    assert fleet["preferred"][0]["label"] == "sort by kubernetes-fleet.io/node-count Descending"
