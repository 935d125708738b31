"""Hostile objects the demo hub can serve beside its fleet (`DemoHub(hostile=True)`, `demo_hub --hostile`):
what a broken or malicious hub could hold, for the dashboard to refuse one by one without harm.

Each is stored as the API server would store it, with no validation: a real hub with a lax webhook (or
none) or a tampered etcd can serve any of them.
"""

from typing import Any

from demohub.store import Store

OCM_GROUP = "cluster.open-cluster-management.io"
# A YAML "billion laughs": nine levels of ten aliases each expand to 10^9 strings when loaded naively.
ALIAS_BOMB = "\n".join(
    [
        'a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol","lol"]',
        *(
            f"{level}: &{level} [{', '.join([f'*{previous}'] * 10)}]"
            for previous, level in zip("abcdefgh", "bcdefghi", strict=True)
        ),
        "type: *i",
    ]
)
LONG_NAME = "hostile-" + "n" * 292  # 300 characters: over the 253 of a DNS-1123 subdomain
TAINT_KEY = "example.com/" + "k" * 1988  # 2,000 characters
LABEL_VALUE = "v" * 100_000
MANY_LABELS = 10_000
NUL_NAME = "hostile-nul\x00name"  # PostgreSQL refuses a NUL character in any text, even in a query


def _cluster(name: str, *, labels: dict[str, Any] | None = None, spec: Any = None) -> dict[str, Any]:
    return {
        "apiVersion": f"{OCM_GROUP}/v1",
        "kind": "ManagedCluster",
        "metadata": {"name": name, "labels": labels or {"hostile": "true"}},
        "spec": {"hubAcceptsClient": True} if spec is None else spec,
    }


def hostile_objects() -> dict[str, dict[str, Any]]:
    """Every hostile object by what makes it hostile. The OCM Placement with the alias bomb is within
    every limit (only parsing its annotation would hurt), so it is stored; the others are refused."""
    return {
        "300-character name": _cluster(LONG_NAME),
        "2,000-character taint key": _cluster(
            "hostile-taint-key", spec={"taints": [{"key": TAINT_KEY, "effect": "NoSelect"}]}
        ),
        "100 KB label value": _cluster("hostile-label-value", labels={"hostile": LABEL_VALUE}),
        "wrong-typed spec": _cluster("hostile-wrong-types", spec={"taints": "NoSelect"}),
        "NUL character in a name": _cluster(NUL_NAME),
        f"{MANY_LABELS} labels": _cluster(
            "hostile-many-labels", labels={f"label-{number}": "x" for number in range(MANY_LABELS)}
        ),
        "alias-bomb annotation": {
            "apiVersion": f"{OCM_GROUP}/v1beta1",
            "kind": "Placement",
            "metadata": {
                "name": "hostile-alias-bomb",
                "namespace": "default",
                "annotations": {"rollout.fleetui.io/strategy": ALIAS_BOMB},
            },
            "spec": {"numberOfClusters": 1},
        },
    }


def seed_hostile(store: Store) -> dict[str, str]:
    """Create the hostile objects in `store`; answers each one's name by what makes it hostile."""
    return {what: store.create(obj)["metadata"]["name"] for what, obj in hostile_objects().items()}
