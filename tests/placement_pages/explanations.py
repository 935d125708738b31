"""Hand-made scheduler reports (`to_report()` shape) whose weighted sums are computed by hand in tests."""

ADDON = "AddOn/resource-usage-score/cpuAvailable"
MEMORY = "ResourceAllocatableMemory"

# weights: Balance 1, Steady 1, memory 2, add-on 3; numberOfClusters 2
OCM_EXPLANATION = {
    "kind": "Placement",
    "selected": ["b", "c"],
    "weights": {"Balance": 1, "Steady": 1, MEMORY: 2, ADDON: 3},
    "clusters": [
        # 100 + 100 + 20×2 + 10×3 = 270
        {
            "name": "b",
            "selected": True,
            "filteredBy": None,
            "total": 270,
            "rank": 1,
            "scores": {"Balance": 100, "Steady": 100, MEMORY: 20, ADDON: 10},
        },
        # 0 + 0 + 100×2 + 0×3 = 200
        {
            "name": "c",
            "selected": True,
            "filteredBy": None,
            "total": 200,
            "rank": 2,
            "scores": {"Balance": 0, "Steady": 0, MEMORY: 100, ADDON: 0},
        },
        # 100 + 0 + 50×2 − 20×3 = 140
        {
            "name": "a",
            "selected": False,
            "filteredBy": None,
            "total": 140,
            "rank": 3,
            "scores": {"Balance": 100, "Steady": 0, MEMORY: 50, ADDON: -20},
        },
        {
            "name": "d",
            "selected": False,
            "filteredBy": "predicate: labelSelector region=us-east-1",
            "total": None,
            "rank": None,
            "scores": {},
        },
    ],
    "conditions": [
        {
            "type": "PlacementMisconfigured",
            "status": "False",
            "reason": "Succeedconfigured",
            "message": "Placement configurations check pass",
        },
        {
            "type": "PlacementSatisfied",
            "status": "True",
            "reason": "AllDecisionsScheduled",
            "message": "All cluster decisions scheduled",
        },
    ],
    "decisionGroups": [
        {"decisionGroupIndex": 0, "decisionGroupName": "", "clusterCount": 2, "decisions": ["p-decision-1"]}
    ],
}

FLEET_EXPLANATION = {
    "kind": "ClusterResourcePlacement",
    "selected": ["m2", "m3"],
    "clusters": [
        {"name": "m1", "selected": False, "filteredBy": None, "affinityScore": 40, "topologySpreadScore": 0},
        {"name": "m2", "selected": True, "filteredBy": None, "affinityScore": 20, "topologySpreadScore": 1},
        {"name": "m3", "selected": True, "filteredBy": None, "affinityScore": 60, "topologySpreadScore": 0},
        {
            "name": "m4",
            "selected": False,
            "filteredBy": "not in the required affinity",
            "affinityScore": None,
            "topologySpreadScore": None,
        },
        {"name": "m5", "selected": False, "filteredBy": None, "affinityScore": 40, "topologySpreadScore": 0},
    ],
    "conditions": [
        {
            "type": "Scheduled",
            "status": "True",
            "reason": "SchedulingPolicyFulfilled",
            "message": "found all cluster needed as specified by the scheduling policy",
        }
    ],
}


def ocm_explanation_for(count: int) -> dict:
    """`count` scored clusters c-0000.. with descending totals, every second one selected."""
    clusters = [
        {
            "name": f"c-{i:04d}",
            "selected": i % 2 == 0,
            "filteredBy": None,
            "rank": i + 1,
            "total": 2 * (count - i),
            "scores": {"Balance": count - i, "Steady": 0},
        }
        for i in range(count)
    ]
    return {
        "kind": "Placement",
        "selected": [c["name"] for c in clusters if c["selected"]],
        "weights": {"Balance": 2, "Steady": 1},
        "clusters": clusters,
        "conditions": [],
    }
