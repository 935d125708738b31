"""Run by test_hostile_hub_objects.py in a process of its own, under an address-space limit: sync a hub that
serves hostile objects (demohub.hostile), then watch it while it changes, and print a JSON report.

`python -m tests.security.hostile_hub_scenario HUB_URL LIMIT_BYTES`; the database is DATABASE_URL's
(migrated here when it is a SQLite file). The hub changes through its own API, as another client would
change it: a valid cluster turns hostile, another changes validly, a new hostile one appears, the first is
repaired and the 300-character one is deleted.
"""

import ctypes
import json
import os
import resource
import sys
import threading
import time
from collections.abc import Callable
from typing import Any

# glibc reserves 64 MiB of address space for each thread's malloc arena: two arenas for all the threads
# leave the limit to what the scenario allocates
M_ARENA_MAX = -8
ctypes.CDLL("libc.so.6").mallopt(M_ARENA_MAX, 2)
# the limit first: everything this process loads and does counts against it
resource.setrlimit(resource.RLIMIT_AS, (int(sys.argv[2]), int(sys.argv[2])))

import django  # noqa: E402

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "fleetui.settings")
django.setup()

from django.core.management import call_command  # noqa: E402
from django.db import connection  # noqa: E402
from django.forms.models import model_to_dict  # noqa: E402
from kubernetes.client import ApiClient, Configuration, CustomObjectsApi  # noqa: E402

from demohub.hostile import LABEL_VALUE, LONG_NAME, TAINT_KEY  # noqa: E402
from inventory.hubclient import OCM_GROUP  # noqa: E402
from inventory.models import ManagedCluster, RejectedObject, SyncRun  # noqa: E402
from inventory.sync import sync_hub  # noqa: E402
from inventory.watch import HubWatcher  # noqa: E402
from placement.models import Placement  # noqa: E402
from tests.factories import DemoHubRowFactory, HubFactory, ManagedClusterFactory  # noqa: E402

WATCH_SECONDS = 60


def rejected() -> list[dict[str, Any]]:
    rows = RejectedObject.objects.order_by("kind", "name")
    return list(rows.values("kind", "namespace", "name", "reason", "sync_run_id", "hub__name"))


def wait_for(what: str, condition: Callable[[], bool]) -> float:
    """Seconds until `condition` holds (polled); fails the scenario after WATCH_SECONDS."""
    started = time.monotonic()
    while not condition():
        if time.monotonic() - started > WATCH_SECONDS:
            raise AssertionError(f"the watcher did not apply: {what}")
        time.sleep(0.1)
    return round(time.monotonic() - started, 2)


def cluster(name: str) -> ManagedCluster | None:
    return ManagedCluster.objects.filter(hub__name="hostile", kind="ManagedCluster", name=name).first()


def watch(hub: Any, api: CustomObjectsApi, valid: list[str]) -> dict[str, Any]:
    """Watch the hub while it changes; answers how long each change took to arrive and the watcher's
    state once they all did."""
    turned, changed = valid[0], valid[1]
    turned_before = model_to_dict(cluster(turned))
    stop = threading.Event()
    watcher = HubWatcher(hub, stop, timeout_seconds=5).start()
    patch = lambda name, body: api.patch_cluster_custom_object(  # noqa: E731
        OCM_GROUP, "v1", "managedclusters", name, body
    )
    applied: dict[str, float] = {}
    try:
        time.sleep(1)  # the watches connect
        patch(turned, {"metadata": {"labels": {"hostile": LABEL_VALUE}}})
        applied["valid cluster turned hostile"] = wait_for(
            "the rejection of a cluster turned hostile",
            lambda: RejectedObject.objects.filter(name=turned, sync_run=None).exists(),
        )
        kept_unchanged = model_to_dict(cluster(turned)) == turned_before
        patch(changed, {"metadata": {"labels": {"tier": "gold"}}})
        applied["valid change after it"] = wait_for(
            "a valid change", lambda: cluster(changed).labels.get("tier") == "gold"
        )
        api.create_cluster_custom_object(
            OCM_GROUP,
            "v1",
            "managedclusters",
            {
                "apiVersion": f"{OCM_GROUP}/v1",
                "kind": "ManagedCluster",
                "metadata": {"name": "hostile-new"},
                "spec": {"taints": [{"key": TAINT_KEY, "effect": "NoSelect"}]},
            },
        )
        applied["new hostile cluster"] = wait_for(
            "a new hostile cluster", lambda: RejectedObject.objects.filter(name="hostile-new").exists()
        )
        patch(turned, {"metadata": {"labels": {"hostile": None, "tier": "silver"}}})
        applied["hostile cluster repaired"] = wait_for(
            "a repaired cluster",
            lambda: (
                cluster(turned).labels.get("tier") == "silver"
                and not RejectedObject.objects.filter(name=turned).exists()
            ),
        )
        api.delete_cluster_custom_object(OCM_GROUP, "v1", "managedclusters", LONG_NAME)
        applied["hostile cluster deleted"] = wait_for(
            "a deleted hostile cluster",
            lambda: not RejectedObject.objects.filter(name=LONG_NAME[:253]).exists(),
        )
        alive = [thread.name for thread in watcher.threads if thread.is_alive()]
    finally:
        stop.set()
        watcher.join(30)
    return {
        "applied_seconds": applied,
        "turned_kept_unchanged": kept_unchanged,
        "threads": len(watcher.threads),
        "alive_threads": len(alive),
        "failed_events": sum(watcher.failed_events.values()),
        "restarts": sum(watcher.restarts.values()),
        "rejected_after_watch": rejected(),
        "hostile_new_stored": cluster("hostile-new") is not None,
    }


def main(hub_url: str) -> dict[str, Any]:
    if connection.vendor == "sqlite":
        call_command("migrate", verbosity=0)
    bystander = ManagedClusterFactory(hub=HubFactory(name="bystander"), name="untouched")
    bystander_before = model_to_dict(bystander)
    hub = DemoHubRowFactory(name="hostile", server_url=hub_url)
    started = time.monotonic()
    run = sync_hub(hub, trigger="command")
    sync_seconds = round(time.monotonic() - started, 2)
    stored = ManagedCluster.objects.filter(hub=hub, kind="ManagedCluster")
    report: dict[str, Any] = {
        "vendor": connection.vendor,
        "sync_seconds": sync_seconds,
        "sync_state": SyncRun.objects.get(pk=run.pk).state,
        "sync_rejected": run.rejected,
        "sync_kinds_rejected": {kind: counts.get("rejected", 0) for kind, counts in run.kinds.items()},
        "hub_error": hub.last_sync_error,
        "clusters": sorted(stored.values_list("name", flat=True)),
        "stale_clusters": stored.filter(stale=True).count(),
        "placements": sorted(Placement.objects.filter(hub=hub).values_list("name", flat=True)),
        "rejected": rejected(),
    }
    api_configuration = Configuration(host=hub_url)
    with ApiClient(api_configuration) as api_client:
        valid = [name for name in report["clusters"] if not name.startswith("hostile")]
        report["watch"] = watch(hub, CustomObjectsApi(api_client), valid)
    report["bystander_unchanged"] = (
        model_to_dict(ManagedCluster.objects.get(pk=bystander.pk)) == bystander_before
    )
    report["max_rss_mib"] = round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)
    report["address_space_limit"] = resource.getrlimit(resource.RLIMIT_AS)[0]
    report["over_limit_refused"] = over_limit_refused()
    return report


def over_limit_refused() -> bool:
    """Whether an allocation of the whole limit fails, as the limit should make it."""
    try:
        bytearray(resource.getrlimit(resource.RLIMIT_AS)[0])
    except MemoryError:
        return True
    return False


if __name__ == "__main__":
    json.dump(main(sys.argv[1]), sys.stdout)
