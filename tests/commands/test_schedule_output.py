"""`schedule` results and the three outputs, on manifests shaped like the upstream docs' examples.

Every expected number is worked out by hand from upstream's formulas; the arithmetic is in the comments.
The fixtures are written for NOW = 2024-05-01T12:00:00Z.
"""

import json

import yaml

from tests.commands.conftest import FLEET_HUB, NOW, OCM_HUB, cluster_row, condition


def test_additive_placement_with_memory_and_addon_scores(schedule_json) -> None:
    report = schedule_json(OCM_HUB)["placement1"]

    # Candidates: members of "prod" (bound to ns1) = cluster1..5; cluster6 is in "staging".
    # Predicate vendor=OpenShift AND claim region In [us-west-1] drops cluster4 (us-east-1).
    # Taints: cluster3 unreachable since 11:58:20, tolerated 300 s -> until 12:03:20 > now: kept;
    # cluster5 dedicated=gpu:NoSelect has no toleration: filtered.
    # Weights: Balance 1 + Steady 1 (defaults) + ResourceAllocatableMemory 2 + AddOn 1.
    # Balance: web-decision-1 holds cluster1 -> count 1 = max -> 2*int(100*(0.5-1)) = -100; others 100.
    # Steady: placement1-decision-1 holds cluster3 -> 100; others 0.
    # Memory: allocatable 100Gi, 60Gi, 20Gi -> min 20, max 100 -> 100, (0.5-0.5)*2*100 = 0, -100.
    # AddOn default/cpuratio: 30, 80, and cluster3's score expired at 11:00 -> 0.
    # Totals: cluster1 -100+0+200+30 = 130; cluster2 100+0+0+80 = 180; cluster3 100+100-200+0 = 0.
    assert report["weights"] == {
        "AddOn/default/cpuratio": 1,
        "Balance": 1,
        "ResourceAllocatableMemory": 2,
        "Steady": 1,
    }
    assert cluster_row(report, "cluster1")["scores"] == {
        "Balance": -100,
        "Steady": 0,
        "ResourceAllocatableMemory": 100,
        "AddOn/default/cpuratio": 30,
    }
    assert {name: cluster_row(report, name)["total"] for name in ("cluster1", "cluster2", "cluster3")} == {
        "cluster1": 130,
        "cluster2": 180,
        "cluster3": 0,
    }
    # numberOfClusters 2 keeps cluster2 (180) and cluster1 (130); a decision lists them by name.
    assert report["selected"] == ["cluster1", "cluster2"]
    assert [row["name"] for row in report["clusters"] if row["selected"]] == ["cluster2", "cluster1"]
    assert cluster_row(report, "cluster3")["selected"] is False
    assert cluster_row(report, "cluster3")["filteredBy"] is None
    for filtered in ("cluster4", "cluster5"):
        assert cluster_row(report, filtered)["filteredBy"]
        assert cluster_row(report, filtered)["selected"] is False
    assert "dedicated" in cluster_row(report, "cluster5")["filteredBy"]
    # only clusters of the current decisions count for the requeue: cluster3 until 12:03:20 -> 200 s
    assert report["requeueAfterSeconds"] == 200
    assert condition(report, "PlacementSatisfied")["reason"] == "AllDecisionsScheduled"
    assert condition(report, "PlacementMisconfigured") == {
        "type": "PlacementMisconfigured",
        "status": "False",
        "reason": "Succeedconfigured",
        "message": "Placement configurations check pass",
    }
    (decision,) = report["decisions"]
    assert decision["metadata"]["name"] == "placement1-decision-1"
    assert decision["status"]["decisions"] == [
        {"clusterName": "cluster1", "reason": ""},
        {"clusterName": "cluster2", "reason": ""},
    ]
    # the existing decision changes: DecisionUpdate (a Warning: cluster3's add-on score expired), then
    # ScoreUpdate over every scored cluster by name, each "<name>:<total> "
    reasons = [event["reason"] for event in report["events"]]
    assert reasons == ["DecisionUpdate", "ScoreUpdate"]
    assert report["events"][0]["type"] == "Warning"
    assert "cluster3/default" in report["events"][0]["message"]
    assert report["events"][1]["message"] == "cluster1:130 cluster2:180 cluster3:0 "


def test_decision_groups_put_the_canary_group_first(schedule_json) -> None:
    report = schedule_json(OCM_HUB)["placement-canary"]

    # No tolerations: cluster3 (unreachable) and cluster5 (dedicated) are filtered -> cluster1, 2, 4.
    # Exact, Memory weight 1: allocatable 100Gi, 60Gi, 40Gi -> min 40, max 100:
    # cluster1 100; cluster2 int(((20/60 - 0.5) * 2.0) * 100.0) = int(-33.33) = -33; cluster4 -100.
    # numberOfClusters unset: all 3 selected. Group length ceil(50/100 * 3) = 2.
    # Group 0 "prod-canary-west" = [cluster4];
    # the rest by name in chunks of 2 -> group 1 "" = [cluster1, cluster2].
    assert {row["name"]: row["total"] for row in report["clusters"] if row["total"] is not None} == {
        "cluster1": 100,
        "cluster2": -33,
        "cluster4": -100,
    }
    assert report["selected"] == ["cluster4", "cluster1", "cluster2"]
    assert [
        (g["decisionGroupIndex"], g["decisionGroupName"], g["decisions"], g["clusterCount"])
        for g in report["decisionGroups"]
    ] == [
        (0, "prod-canary-west", ["placement-canary-decision-1"], 1),
        (1, "", ["placement-canary-decision-2"], 2),
    ]
    labels = [d["metadata"]["labels"] for d in report["decisions"]]
    assert [lbl["cluster.open-cluster-management.io/decision-group-index"] for lbl in labels] == ["0", "1"]
    assert "DecisionCreate" in [event["reason"] for event in report["events"]]


def test_pickn_property_sorters_interpolate_and_round_half_away_from_zero(schedule_json) -> None:
    report = schedule_json(FLEET_HUB)["pickn-sorters"]

    # node-count over ALL members with the property (member-4 is tainted but counts): min 3, max 12.
    # Descending weight 40: member-1 0; member-2 40*3/9 = 13.3 -> 13; member-3 40*6/9 = 26.7 -> 27.
    # per-cpu-core-cost (metricSorter read as propertySorter): min 0.050, max 0.200, Ascending weight 20:
    # member-1 20*(1 - 0.05/0.15) = 13.3 -> 13; member-2 20*1 = 20; member-3 20*0 = 0.
    # Affinity: member-1 13, member-2 33, member-3 27 -> PickN 2 = member-2, member-3.
    scored = ("member-1", "member-2", "member-3")
    assert {name: cluster_row(report, name)["affinityScore"] for name in scored} == {
        "member-1": 13,
        "member-2": 33,
        "member-3": 27,
    }
    assert sorted(report["selected"]) == ["member-2", "member-3"]
    assert "dedicated" in cluster_row(report, "member-4")["filteredBy"]
    assert cluster_row(report, "member-5")["filteredBy"]  # heartbeat 10 minutes old: not eligible
    scheduled = condition(report, "Scheduled")
    assert (scheduled["status"], scheduled["reason"]) == ("True", "SchedulingPolicyFulfilled")
    assert sorted(b["spec"]["targetCluster"] for b in report["bindings"]) == ["member-2", "member-3"]
    assert {b["spec"]["state"] for b in report["bindings"]} == {"Scheduled"}


def test_pickn_topology_spread_picks_one_cluster_per_cycle(schedule_json) -> None:
    report = schedule_json(FLEET_HUB)["pickn-topology"]

    # Domains by region over all members: east {member-1, member-2}, west {member-3, member-4, member-5}.
    # Cycle 1: counts 0/0, every domain equal -> change +1, skew 1 <= maxSkew 1; topology -1 for all.
    #   Affinity: premium member-1 and member-2 50, member-3 0. Tie -> the larger name: member-2.
    # Cycle 2: east 1, west 0. member-1 (east, largest) -> skew 1+1 = 2 > 1: DoNotSchedule filters it;
    #   member-3 (west, the only minimum) -> change -1, skew 0: allowed, picked.
    # Without the constraint the pick would be member-2 and member-1.
    assert sorted(report["selected"]) == ["member-2", "member-3"]
    assert condition(report, "Scheduled")["status"] == "True"


def test_pickfixed_reports_ineligible_and_missing_clusters(schedule_json) -> None:
    report = schedule_json(FLEET_HUB)["pickfixed"]

    assert report["selected"] == ["member-1"]
    assert [b["spec"]["targetCluster"] for b in report["bindings"]] == ["member-1"]
    reasons = {d["clusterName"]: d["reason"] for d in report["decisions"]}
    assert reasons["member-9"] == 'Specified cluster "member-9" is not found'
    assert reasons["member-5"].startswith('Cluster "member-5" is not eligible for resource placement yet: ')
    scheduled = condition(report, "Scheduled")
    assert (scheduled["status"], scheduled["reason"]) == ("False", "SchedulingPolicyUnfulfilled")


def test_pickall_requires_labels_and_exact_property_comparison(schedule_json) -> None:
    report = schedule_json(FLEET_HUB)["pickall-big-prod"]

    # env=prod AND node-count >= 5 AND allocatable memory > 16Gi:
    # member-1 has 3 nodes; member-3 has 16384Mi == 16Gi, not greater; member-4 matches but is tainted;
    # member-5 is staging. Only member-2 (6 nodes, 32Gi).
    assert report["selected"] == ["member-2"]
    assert report["namespace"] is None
    for name in ("member-1", "member-3", "member-4", "member-5"):
        assert cluster_row(report, name)["filteredBy"]


def test_json_lists_placements_in_input_order(run_schedule) -> None:
    stdout, _ = run_schedule("-f", str(OCM_HUB), "-f", str(FLEET_HUB), "--now", NOW, "-o", "json")

    placements = json.loads(stdout)["placements"]
    assert [(p["kind"], p["name"]) for p in placements] == [
        ("Placement", "placement1"),
        ("Placement", "placement-canary"),
        ("ClusterResourcePlacement", "pickn-sorters"),
        ("ClusterResourcePlacement", "pickn-topology"),
        ("ClusterResourcePlacement", "pickfixed"),
        ("ClusterResourcePlacement", "pickall-big-prod"),
    ]
    for item in placements:
        assert {"kind", "name", "selected", "clusters", "conditions", "decisions", "events"} <= item.keys()


def test_output_is_deterministic(run_schedule) -> None:
    args = ("-f", str(OCM_HUB), "-f", str(FLEET_HUB), "--now", NOW)

    assert run_schedule(*args, "-o", "json") == run_schedule(*args, "-o", "json")
    assert run_schedule(*args, "-o", "table") == run_schedule(*args, "-o", "table")


def test_now_changes_what_is_tolerated(schedule_json, run_schedule) -> None:
    # At 12:05 cluster3's unreachable taint (11:58:20 + 300 s = 12:03:20) is no longer tolerated.
    stdout, _ = run_schedule("-f", str(OCM_HUB), "--now", "2024-05-01T12:05:00Z", "-o", "json")
    later = {item["name"]: item for item in json.loads(stdout)["placements"]}["placement1"]

    assert cluster_row(schedule_json(OCM_HUB)["placement1"], "cluster3")["filteredBy"] is None
    assert "unreachable" in cluster_row(later, "cluster3")["filteredBy"]
    assert later["requeueAfterSeconds"] is None


def test_yaml_prints_the_decisions_and_bindings_to_apply(run_schedule) -> None:
    stdout, _ = run_schedule("-f", str(OCM_HUB), "-f", str(FLEET_HUB), "--now", NOW, "-o", "yaml")

    documents = list(yaml.safe_load_all(stdout))
    kinds = [(d["kind"], d["metadata"]["name"]) for d in documents]
    assert kinds[:3] == [
        ("PlacementDecision", "placement1-decision-1"),
        ("PlacementDecision", "placement-canary-decision-1"),
        ("PlacementDecision", "placement-canary-decision-2"),
    ]
    assert {kind for kind, _ in kinds[3:]} == {"ClusterResourceBinding"}
    assert documents[0]["metadata"]["namespace"] == "ns1"
    assert documents[0]["metadata"]["labels"]["cluster.open-cluster-management.io/placement"] == "placement1"
    assert stdout.startswith("---\n# Placement ns1/placement1\n")


def test_table_describes_each_placement_and_its_score_matrix(run_schedule) -> None:
    stdout, _ = run_schedule("-f", str(OCM_HUB), "-f", str(FLEET_HUB), "--now", NOW)

    block = stdout.split("\n\n")[0]
    lines = block.splitlines()
    assert lines[0].split() == ["Name:", "placement1"]
    assert "Namespace:" in lines[1] and lines[1].endswith("ns1")
    assert any(line.startswith("Number of selected clusters:") and line.endswith("2") for line in lines)
    assert any(line.split()[:3] == ["PlacementSatisfied", "True", "AllDecisionsScheduled"] for line in lines)
    assert any("ScoreUpdate" in line and "cluster1:130 cluster2:180 cluster3:0" in line for line in lines)
    matrix = lines[lines.index("Scores:") + 1 :]
    header = matrix[0].split()
    assert header[0] == "CLUSTER" and header[-5:] == ["TOTAL", "RANK", "SELECTED", "FILTERED", "BY"]
    cells = {line.split()[0]: dict(zip(header, line.split(), strict=False)) for line in matrix[1:]}
    assert cells["(weight)"]["ResourceAllocatableMemory"] == "2"
    assert cells["(weight)"]["Balance"] == "1"
    # the weights row, then clusters by rank: cluster2 (180) before cluster1 (130) and cluster3 (0)
    assert [line.split()[0] for line in matrix[1:5]] == ["(weight)", "cluster2", "cluster1", "cluster3"]
    top = cells["cluster2"]
    assert (top["TOTAL"], top["RANK"], top["SELECTED"]) == ("180", "1", "*")
    (cluster5,) = [line for line in matrix if line.split()[0] == "cluster5"]
    assert cluster5.endswith("taint dedicated=gpu:NoSelect is not tolerated")
    assert "\033[" not in stdout  # not a TTY: no colours
    assert "Kind:" in stdout and "ClusterResourcePlacement" in stdout
    assert "AFFINITY" in stdout and "TOPOLOGY SPREAD" in stdout


def test_stdin_is_read_with_dash(run_schedule) -> None:
    text = "\n---\n".join(path.read_text() for path in sorted(OCM_HUB.glob("*.yaml")))

    stdout, _ = run_schedule("-f", "-", "--now", NOW, "-o", "json", stdin=text)

    names = [item["name"] for item in json.loads(stdout)["placements"]]
    assert names == ["placement1", "placement-canary"]


def test_now_defaults_to_the_current_time(run_schedule) -> None:
    stdout, _ = run_schedule("-f", str(OCM_HUB), "-o", "json")

    # long after the fixtures' instant, every add-on score has expired: still a report, not an error
    report = {item["name"]: item for item in json.loads(stdout)["placements"]}["placement1"]
    assert cluster_row(report, "cluster2")["scores"]["AddOn/default/cpuratio"] == 0


def test_table_is_coloured_only_when_asked_or_on_a_tty(run_schedule) -> None:
    stdout, _ = run_schedule("-f", str(OCM_HUB), "--now", NOW, "--force-color")

    assert "\033[32m" in stdout  # selected clusters in green
    assert "\033[1mScores:\033[0m" in stdout
