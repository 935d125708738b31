"""The inventory's columnar indexes agree with the scalar semantics they replace."""

import random

from placement.scheduler.labels import parse_label_selector
from tests.scheduler.ocm.builders import cluster, decision, hub


def test_label_index_matches_label_selector_semantics():
    rng = random.Random(3)
    clusters = [
        cluster(
            f"c{i}",
            labels={k: rng.choice("xyz") for k in rng.sample(["env", "zone", "tier"], rng.randint(0, 3))},
        )
        for i in range(200)
    ]
    inventory = hub(clusters)
    selectors = [
        {"matchLabels": {"env": "x"}},
        {"matchExpressions": [{"key": "zone", "operator": "In", "values": ["x", "y"]}]},
        {"matchExpressions": [{"key": "tier", "operator": "NotIn", "values": ["z"]}]},
        {
            "matchExpressions": [
                {"key": "env", "operator": "Exists"},
                {"key": "zone", "operator": "DoesNotExist"},
            ]
        },
        {},
    ]
    for raw in selectors:
        selector = parse_label_selector(raw)
        expected = [selector.matches(c.labels) for c in inventory.clusters]
        assert inventory.labels.selector_mask(selector).tolist() == expected


def test_balance_counts_exclude_only_the_placements_own_decisions():
    inventory = hub(
        [cluster("a"), cluster("b")],
        decisions=[
            decision("web", ["a", "b"]),
            decision("api", ["a"]),
            decision("web", ["a", "x"], namespace="other"),
        ],
    )
    counts, max_count = inventory.balance_counts("apps", "web")
    assert counts.tolist() == [2, 0] and max_count == 2
