"""`LabelIndex.value_codes` works out, from the index alone, exactly the codes and table a projection of
the same keys builds cluster by cluster: the same code for the same values, numbered in the order the
clusters first show them, so an inventory patched afterwards codes its changed clusters alike."""

import random
from collections.abc import Hashable, Sequence

import numpy as np
import pytest

from placement.scheduler.ocm.inventory import LabelIndex, OcmInventory, _code
from tests.scheduler.ocm.builders import cluster, hub

KEYS = ("region", "tier", "zone")


def label_maps(seed: int, count: int) -> list[dict[str, str]]:
    rng = random.Random(seed)
    maps = []
    for _ in range(count):
        labels = {key: rng.choice(("a", "b", "c", "")) for key in KEYS if rng.random() < 0.7}
        if rng.random() < 0.3:
            labels["other"] = str(rng.randrange(5))
        maps.append(labels)
    return maps


def one_by_one(maps: Sequence[dict[str, str]], keys: Sequence[str]) -> tuple[list[int], dict[Hashable, int]]:
    interned: dict[Hashable, int] = {}
    counter = iter(range(len(maps) + 1))
    codes = [_code(interned, tuple(labels.get(key) for key in keys), counter) for labels in maps]
    return codes, interned


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("keys", [(), ("region",), ("tier", "region"), KEYS, ("missing", "zone")])
def test_the_codes_and_table_are_the_ones_built_cluster_by_cluster(seed: int, keys: tuple[str, ...]) -> None:
    maps = label_maps(seed, 300)

    codes, interned = LabelIndex(maps).value_codes(keys)

    expected_codes, expected_table = one_by_one(maps, keys)
    assert codes.tolist() == expected_codes
    assert interned == expected_table


def test_an_empty_inventory_has_no_codes() -> None:
    codes, interned = LabelIndex([]).value_codes(("region",))
    assert codes.size == 0 and interned == {}


def test_a_patched_inventory_codes_its_changed_clusters_from_the_same_table() -> None:
    maps = label_maps(7, 40)
    inventory = hub([cluster(f"c{i:02}", labels=labels) for i, labels in enumerate(maps)])
    keys = ("tier", "region")

    def projection(held: OcmInventory, position: int) -> Hashable:
        return tuple(held.clusters[position].labels.get(key) for key in keys)

    codes = inventory.projection_codes("test", projection, lambda held: held.labels.value_codes(keys))
    assert codes.tolist() == one_by_one(maps, keys)[0]

    changed = cluster("c03", labels={"tier": "new", "region": maps[5].get("region", "x")})
    patched = inventory.patched(clusters={"c03": changed})
    again = patched.projection_codes("test", projection)
    rows = [projection(patched, position) for position in range(patched.size)]
    for i in range(len(rows)):
        for j in range(len(rows)):
            assert (again[i] == again[j]) == (rows[i] == rows[j])
    assert np.array_equal(np.delete(again, 3), np.delete(codes, 3))
