"""The Fleet TaintToleration filter over the inventory's taint rows: a cluster is rejected with the
reason of its first untolerated taint, in its own taint order, whichever of its taints that is."""

from __future__ import annotations

from placement.scheduler.fleet.inventory import FleetInventory
from placement.scheduler.fleet.schedule import schedule_crp
from placement.scheduler.fleet.taints import first_untolerated_taint
from placement.scheduler.fleet.types import PlacementPolicy, Taint, Toleration
from tests.scheduler.fleet.builders import NOW, member, placement

GPU = Taint("dedicated", "gpu")
SPOT = Taint("example.com/spot", "true")
MAINTENANCE = Taint("maintenance")
TOLERATIONS = (
    Toleration("dedicated", "Equal", "gpu"),
    Toleration("maintenance", "Exists", effect="NoSchedule"),
)


def test_each_rejected_cluster_names_its_own_first_untolerated_taint() -> None:
    inventory = FleetInventory(
        [
            member("a", taints=(GPU, SPOT, MAINTENANCE)),
            member("b", taints=(MAINTENANCE, GPU)),
            member("c", taints=(Taint("dedicated", "fpga"), SPOT)),
            member("d"),
        ]
    )
    result = schedule_crp(placement(PlacementPolicy(tolerations=TOLERATIONS)), inventory, [], NOW)
    assert result.selected == ("b", "d")
    reasons = {name: result.cluster_table.explain(i).filtered_by for i, name in enumerate(inventory.names)}
    assert reasons == {
        "a": "taint &{Key:example.com/spot Value:true Effect:NoSchedule} cannot be tolerated",
        "b": None,
        "c": "taint &{Key:dedicated Value:fpga Effect:NoSchedule} cannot be tolerated",
        "d": None,
    }


def test_an_exists_toleration_without_a_key_tolerates_every_taint_of_its_effect() -> None:
    everything = (Toleration("", "Exists", effect="NoSchedule"),)
    assert first_untolerated_taint((GPU, SPOT), everything) is None
    assert first_untolerated_taint((GPU, SPOT), (Toleration("", "Exists", effect="NoExecute"),)) == GPU
    assert first_untolerated_taint((GPU, SPOT), (Toleration("dedicated", "Equal", "gpu"),)) == SPOT
