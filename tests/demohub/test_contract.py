"""Both hubs behave like a Kubernetes API server for everything the hub sync uses.

Every test runs twice: against the demo hub and against kube-apiserver with the upstream CRDs (marked
`realhub`), seeded alike (tests/contract_hubs.py), through the official `kubernetes` client, unmodified.
The assertions state the Kubernetes contract, not one server's accidents: resourceVersions increase but
are not consecutive (the apiserver's own writes interleave), and a server may serve more than we use.
What only the demo hub does (faults, churn, its event window) is in test_faults.py.
"""

import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest
from kubernetes.client import ApisApi, CoreApi, V1APIGroup
from kubernetes.client.rest import ApiException
from kubernetes.watch import Watch

from demohub.seed import SCORE_NAME
from tests.contract_hubs import (
    TIMEOUT,
    ContractHub,
    DemoContractHub,
    RealContractHub,
    clusters,
    names,
    new_cluster,
    seed_objects,
    status_body,
    watch_clusters,
)
from tests.realhub.conftest import api_client

OCM = "cluster.open-cluster-management.io"
FLEET = "cluster.kubernetes-fleet.io"
FLEET_PLACEMENT = "placement.kubernetes-fleet.io"
# long enough for a bookmark: kube-apiserver sends one 2 s before a watch's timeout (or every minute),
# when its watch cache has got past everything the watch has seen
BOOKMARK_WATCH_SECONDS = 4


@pytest.fixture(params=["demo", pytest.param("real", marks=pytest.mark.realhub)])
def contract_hub(request: pytest.FixtureRequest) -> Iterator[ContractHub]:
    if request.param == "demo":
        yield DemoContractHub(request.getfixturevalue("demo_hub"), request.getfixturevalue("api_client"))
        return
    real_hub = request.getfixturevalue("real_hub")
    with api_client(real_hub) as client:
        hub = RealContractHub(real_hub, client)
        hub.seed(seed_objects())
        yield hub


# ---- discovery ---------------------------------------------------------------------------------


def test_discovery_lists_the_served_groups_with_their_preferred_versions(contract_hub: ContractHub) -> None:
    groups = {group.name: group for group in ApisApi(contract_hub.client).get_api_versions().groups}

    assert {OCM, FLEET, FLEET_PLACEMENT} <= set(groups)
    assert groups[OCM].preferred_version.version == "v1"
    assert [v.version for v in groups[OCM].versions] == ["v1", "v1beta2", "v1beta1", "v1alpha1"]
    # the preferred version is the first listed; the dashboard asks for the versions it knows
    for group in groups.values():
        assert group.preferred_version == group.versions[0]
    assert "v1beta1" in {v.version for v in groups[FLEET_PLACEMENT].versions}
    assert CoreApi(contract_hub.client).get_api_versions().versions == ["v1"]


def test_discovery_of_one_group(contract_hub: ContractHub) -> None:
    group = contract_hub.client.call_api(
        f"/apis/{FLEET_PLACEMENT}", "GET", response_type="V1APIGroup", _return_http_data_only=True
    )

    assert isinstance(group, V1APIGroup)
    assert group.name == FLEET_PLACEMENT
    assert group.preferred_version == group.versions[0]
    assert f"{FLEET_PLACEMENT}/v1beta1" in {v.group_version for v in group.versions}


def test_resource_lists_say_scope_kind_verbs_and_status_subresource(contract_hub: ContractHub) -> None:
    api = contract_hub.objects
    ocm_v1beta1 = {r.name: r for r in api.get_api_resources(OCM, "v1beta1").resources}
    fleet = {r.name: r for r in api.get_api_resources(FLEET_PLACEMENT, "v1beta1").resources}

    assert ocm_v1beta1["placements"].namespaced is True
    assert ocm_v1beta1["placements"].kind == "Placement"
    assert set(ocm_v1beta1["placements"].verbs) >= {
        "get",
        "list",
        "watch",
        "create",
        "patch",
        "update",
        "delete",
    }
    assert sorted(ocm_v1beta1["placementdecisions/status"].verbs) == ["get", "patch", "update"]
    assert fleet["clusterapprovalrequests"].namespaced is False
    assert "clusterapprovalrequests/status" in fleet


def test_unknown_group_version_or_resource_is_404(contract_hub: ContractHub) -> None:
    api = contract_hub.objects
    for call in (
        lambda: api.get_api_resources("example.com", "v1"),
        lambda: api.list_cluster_custom_object(OCM, "v9", "managedclusters"),
        lambda: api.list_cluster_custom_object(OCM, "v1", "widgets"),
    ):
        with pytest.raises(ApiException) as raised:
            call()
        assert raised.value.status == 404


# ---- list, selectors, paging ---------------------------------------------------------------------


def test_list_has_kind_items_and_a_resource_version(contract_hub: ContractHub) -> None:
    name = names(clusters(contract_hub.objects))[0]
    written = contract_hub.patch("ManagedCluster", name, {"metadata": {"labels": {"listed": "yes"}}})

    listing = clusters(contract_hub.objects)

    assert listing["kind"] == "ManagedClusterList"
    assert listing["apiVersion"] == f"{OCM}/v1"
    assert len(listing["items"]) == 24
    # the list is at least as new as every write before it, the items at most as new as the list
    version = int(listing["metadata"]["resourceVersion"])
    assert version >= int(written["metadata"]["resourceVersion"])
    assert all(int(item["metadata"]["resourceVersion"]) <= version for item in listing["items"])
    assert names(listing) == sorted(names(listing))
    assert all(item["metadata"]["uid"] for item in listing["items"])


@pytest.mark.parametrize(
    ("selector", "expected"),
    [
        ("environment=prod", lambda labels: labels.get("environment") == "prod"),
        ("environment==prod", lambda labels: labels.get("environment") == "prod"),
        ("environment!=prod", lambda labels: labels.get("environment") != "prod"),
        ("region in (eastus, westeurope)", lambda labels: labels.get("region") in ("eastus", "westeurope")),
        ("cloud notin (Azure)", lambda labels: labels.get("cloud") != "Azure"),
        ("gpu", lambda labels: "gpu" in labels),
        ("!gpu", lambda labels: "gpu" not in labels),
        (
            "vendor=AKS,environment in (dev,staging),!gpu",
            lambda labels: (
                labels["vendor"] == "AKS"
                and labels["environment"] in ("dev", "staging")
                and "gpu" not in labels
            ),
        ),
    ],
)
def test_label_selector_filters_like_kubernetes(
    contract_hub: ContractHub, selector: str, expected: Any
) -> None:
    everything = clusters(contract_hub.objects)["items"]
    wanted = [c["metadata"]["name"] for c in everything if expected(c["metadata"]["labels"])]

    selected = names(clusters(contract_hub.objects, label_selector=selector))

    assert selected == wanted
    assert 0 < len(selected) < len(everything) or selector in ("gpu",)


def test_unparseable_label_selector_is_400(contract_hub: ContractHub) -> None:
    with pytest.raises(ApiException) as raised:
        clusters(contract_hub.objects, label_selector="region in eastus")

    assert raised.value.status == 400
    assert status_body(raised.value)["reason"] == "BadRequest"


def test_list_per_namespace_and_across_namespaces(contract_hub: ContractHub) -> None:
    api = contract_hub.objects
    cluster = names(clusters(api))[0]

    one = api.list_namespaced_custom_object(OCM, "v1alpha1", cluster, "addonplacementscores")
    every = api.list_custom_object_for_all_namespaces(OCM, "v1alpha1", "addonplacementscores")

    assert [(i["metadata"]["namespace"], i["metadata"]["name"]) for i in one["items"]] == [
        (cluster, SCORE_NAME)
    ]
    assert len(every["items"]) == 24


def test_paging_returns_one_consistent_snapshot_across_writes(contract_hub: ContractHub) -> None:
    api = contract_hub.objects
    before = clusters(api)["items"]
    first = clusters(api, limit=10)
    victim, changed = names(first)[-1], before[15]["metadata"]["name"]
    contract_hub.create(new_cluster("zzz-created-mid-list"))
    contract_hub.patch("ManagedCluster", changed, {"metadata": {"labels": {"environment": "patched"}}})
    contract_hub.delete("ManagedCluster", before[20]["metadata"]["name"])

    pages = [first]
    while pages[-1]["metadata"].get("continue"):
        pages.append(clusters(api, limit=10, _continue=pages[-1]["metadata"]["continue"]))

    assert [len(p["items"]) for p in pages] == [10, 10, 4]
    assert first["metadata"]["remainingItemCount"] == 14
    assert {p["metadata"]["resourceVersion"] for p in pages} == {first["metadata"]["resourceVersion"]}
    assert [item for page in pages for item in page["items"]] == before
    assert victim in names(clusters(api))


def test_expired_continue_token_is_410_expired(contract_hub: ContractHub) -> None:
    first = clusters(contract_hub.objects, limit=5)
    # compaction keeps the revision it compacts to: a write makes the list's revision an older one
    contract_hub.patch("ManagedCluster", names(first)[0], {"metadata": {"labels": {"a": "b"}}})
    contract_hub.compact()

    with pytest.raises(ApiException) as raised:
        clusters(contract_hub.objects, limit=5, _continue=first["metadata"]["continue"])

    assert raised.value.status == 410
    assert status_body(raised.value)["reason"] == "Expired"


def test_garbage_continue_token_is_400_bad_request(contract_hub: ContractHub) -> None:
    with pytest.raises(ApiException) as raised:
        clusters(contract_hub.objects, limit=5, _continue="not-a-token")

    assert raised.value.status == 400
    status = status_body(raised.value)
    assert (status["reason"], status["code"]) == ("BadRequest", 400)
    assert status["message"].startswith("invalid continue token")


def test_a_body_that_is_not_an_object_is_400(contract_hub: ContractHub) -> None:
    with pytest.raises(ApiException) as raised:
        contract_hub.client.call_api(
            f"/apis/{FLEET_PLACEMENT}/v1beta1/clusterresourceplacements/web-frontend",
            "PUT",
            body=["x"],
            response_type="object",
        )

    assert raised.value.status == 400
    assert status_body(raised.value)["reason"] == "BadRequest"


# ---- get, create, patch, replace, delete ---------------------------------------------------------------


def test_get_and_not_found_status(contract_hub: ContractHub) -> None:
    api = contract_hub.objects
    name = names(clusters(api))[0]

    assert api.get_cluster_custom_object(OCM, "v1", "managedclusters", name)["metadata"]["name"] == name
    with pytest.raises(ApiException) as raised:
        api.get_cluster_custom_object(OCM, "v1", "managedclusters", "no-such-cluster")
    status = status_body(raised.value)
    assert raised.value.status == 404
    assert (status["kind"], status["status"], status["reason"], status["code"]) == (
        "Status",
        "Failure",
        "NotFound",
        404,
    )
    assert status["details"] == {"name": "no-such-cluster", "group": OCM, "kind": "managedclusters"}
    assert status["message"] == f'managedclusters.{OCM} "no-such-cluster" not found'


def test_create_sets_server_fields_drops_status_and_rejects_duplicates(contract_hub: ContractHub) -> None:
    api = contract_hub.objects
    before = int(clusters(api)["metadata"]["resourceVersion"])

    created = api.create_cluster_custom_object(OCM, "v1", "managedclusters", new_cluster("new-one"))

    metadata = created["metadata"]
    assert metadata["generation"] == 1
    assert int(metadata["resourceVersion"]) > before
    assert metadata["uid"] and metadata["creationTimestamp"].endswith("Z")
    assert "status" not in created
    with pytest.raises(ApiException) as raised:
        api.create_cluster_custom_object(OCM, "v1", "managedclusters", new_cluster("new-one"))
    assert raised.value.status == 409
    assert status_body(raised.value)["reason"] == "AlreadyExists"


def test_create_namespaced_object(contract_hub: ContractHub) -> None:
    api = contract_hub.objects
    body = {
        "apiVersion": f"{OCM}/v1beta1",
        "kind": "PlacementDecision",
        "metadata": {"name": "web-decision-1", "labels": {f"{OCM}/placement": "web"}},
    }

    created = api.create_namespaced_custom_object(OCM, "v1beta1", "argocd", "placementdecisions", body)

    assert created["metadata"]["namespace"] == "argocd"
    listed = api.list_namespaced_custom_object(
        OCM, "v1beta1", "argocd", "placementdecisions", label_selector=f"{OCM}/placement=web"
    )
    assert names(listed) == ["web-decision-1"]


def test_spec_patch_bumps_generation_metadata_patch_does_not(contract_hub: ContractHub) -> None:
    api = contract_hub.objects
    name = names(clusters(api))[0]
    original = api.get_cluster_custom_object(OCM, "v1", "managedclusters", name)
    taint = {"key": "dedicated", "effect": "NoSelect", "timeAdded": "2026-01-01T00:00:00Z"}

    labelled = api.patch_cluster_custom_object(
        OCM, "v1", "managedclusters", name, {"metadata": {"labels": {"team": "payments"}}}
    )
    tainted = api.patch_cluster_custom_object(
        OCM, "v1", "managedclusters", name, {"spec": {"taints": [taint]}}
    )

    assert labelled["metadata"]["generation"] == original["metadata"]["generation"]
    assert labelled["metadata"]["labels"]["team"] == "payments"
    assert labelled["metadata"]["labels"]["region"] == original["metadata"]["labels"]["region"]
    assert tainted["metadata"]["generation"] == original["metadata"]["generation"] + 1
    assert int(tainted["metadata"]["resourceVersion"]) > int(labelled["metadata"]["resourceVersion"])


def test_merge_patch_null_deletes_a_key(contract_hub: ContractHub) -> None:
    api = contract_hub.objects
    name = names(clusters(api, label_selector="region"))[0]

    patched = api.patch_cluster_custom_object(
        OCM, "v1", "managedclusters", name, {"metadata": {"labels": {"region": None}}}
    )

    assert "region" not in patched["metadata"]["labels"]


def test_status_subresource_patch_changes_only_status_and_never_generation(contract_hub: ContractHub) -> None:
    api = contract_hub.objects
    name = names(clusters(api))[0]
    original = api.get_cluster_custom_object(OCM, "v1", "managedclusters", name)

    patched = api.patch_cluster_custom_object_status(
        OCM,
        "v1",
        "managedclusters",
        name,
        {"spec": {"hubAcceptsClient": False}, "status": {"allocatable": {"cpu": "1", "memory": "1Gi"}}},
    )
    main = api.patch_cluster_custom_object(
        OCM, "v1", "managedclusters", name, {"status": {"allocatable": {"cpu": "999"}}}
    )

    assert patched["status"]["allocatable"] == {"cpu": "1", "memory": "1Gi"}
    assert patched["spec"] == original["spec"]
    assert patched["metadata"]["generation"] == original["metadata"]["generation"]
    assert main["status"]["allocatable"] == {"cpu": "1", "memory": "1Gi"}
    assert main["metadata"]["resourceVersion"] == patched["metadata"]["resourceVersion"]


def test_approving_via_status_patch_keeps_generation_and_twice_is_a_no_op(contract_hub: ContractHub) -> None:
    api = contract_hub.objects
    args = (FLEET_PLACEMENT, "v1beta1", "clusterapprovalrequests", "batch-jobs-rollout-1-after-staging")
    request = api.get_cluster_custom_object(*args)
    approval = {
        "status": {
            "conditions": [
                {
                    "type": "Approved",
                    "status": "True",
                    "reason": "ApprovedByDashboard",
                    "message": "approved by alice",
                    "lastTransitionTime": "2026-01-01T00:00:00Z",
                    "observedGeneration": request["metadata"]["generation"],
                }
            ]
        }
    }

    first = api.patch_cluster_custom_object_status(*args, approval)
    second = api.patch_cluster_custom_object_status(*args, approval)

    assert first["status"]["conditions"][0]["type"] == "Approved"
    assert first["metadata"]["generation"] == request["metadata"]["generation"]
    assert int(first["metadata"]["resourceVersion"]) > int(request["metadata"]["resourceVersion"])
    assert second["metadata"]["resourceVersion"] == first["metadata"]["resourceVersion"]


def test_json_patch_through_the_api_client(contract_hub: ContractHub) -> None:
    path = f"/apis/{FLEET}/v1beta1/memberclusters/{{name}}"
    name = names(contract_hub.objects.list_cluster_custom_object(FLEET, "v1beta1", "memberclusters"))[0]

    patched = contract_hub.client.call_api(
        path,
        "PATCH",
        path_params={"name": name},
        header_params={"Content-Type": "application/json-patch+json"},
        body=[
            {"op": "add", "path": "/metadata/labels/tier", "value": "gold"},
            {
                "op": "add",
                "path": "/spec/taints/-",
                "value": {"key": "k", "value": "v", "effect": "NoSchedule"},
            },
        ],
        response_type="object",
        _return_http_data_only=True,
    )

    assert patched["metadata"]["labels"]["tier"] == "gold"
    assert patched["spec"]["taints"][-1]["key"] == "k"


def test_failed_json_patch_test_is_422_invalid(contract_hub: ContractHub) -> None:
    with pytest.raises(ApiException) as raised:
        contract_hub.client.call_api(
            f"/apis/{FLEET_PLACEMENT}/v1beta1/clusterstagedupdatestrategies/staging-then-prod",
            "PATCH",
            header_params={"Content-Type": "application/json-patch+json"},
            body=[{"op": "test", "path": "/spec/stages/0/name", "value": "canary"}],
            response_type="object",
        )

    assert raised.value.status == 422
    assert status_body(raised.value)["reason"] == "Invalid"


def test_replace_with_a_stale_resource_version_is_409_conflict(contract_hub: ContractHub) -> None:
    api = contract_hub.objects
    args = (FLEET_PLACEMENT, "v1beta1", "clusterresourceplacements", "web-frontend")
    stale = api.get_cluster_custom_object(*args)
    api.patch_cluster_custom_object(*args, {"spec": {"revisionHistoryLimit": 5}})

    stale["spec"]["revisionHistoryLimit"] = 7
    with pytest.raises(ApiException) as raised:
        api.replace_cluster_custom_object(*args, stale)
    fresh = api.get_cluster_custom_object(*args)
    fresh["spec"]["revisionHistoryLimit"] = 7
    replaced = api.replace_cluster_custom_object(*args, fresh)

    assert raised.value.status == 409
    assert status_body(raised.value)["reason"] == "Conflict"
    assert replaced["spec"]["revisionHistoryLimit"] == 7
    assert replaced["metadata"]["generation"] == fresh["metadata"]["generation"] + 1


def test_delete_answers_a_success_status_then_404(contract_hub: ContractHub) -> None:
    api = contract_hub.objects
    args = (OCM, "v1beta1", "apps-prod", "placements", "gpu-training")
    uid = api.get_namespaced_custom_object(*args)["metadata"]["uid"]

    deleted = api.delete_namespaced_custom_object(*args)

    assert (deleted["kind"], deleted["status"]) == ("Status", "Success")
    assert deleted["details"] == {"name": "gpu-training", "group": OCM, "kind": "placements", "uid": uid}
    for call in (api.get_namespaced_custom_object, api.delete_namespaced_custom_object):
        with pytest.raises(ApiException) as raised:
            call(*args)
        assert raised.value.status == 404


# ---- watch -------------------------------------------------------------------------------------


def test_watch_from_a_resource_version_replays_later_writes_in_order(contract_hub: ContractHub) -> None:
    since = clusters(contract_hub.objects)["metadata"]["resourceVersion"]
    existing = names(clusters(contract_hub.objects))[0]
    contract_hub.create(new_cluster("watched"))
    contract_hub.patch("ManagedCluster", existing, {"metadata": {"labels": {"watched": "yes"}}})
    contract_hub.delete("ManagedCluster", "watched")
    contract_hub.patch("MemberCluster", existing, {"metadata": {"labels": {"other": "kind"}}})

    events = watch_clusters(contract_hub.objects, since)

    # the created cluster's status is a write of its own, seen as MODIFIED
    assert [(e["type"], e["object"]["metadata"]["name"]) for e in events if e["type"] != "MODIFIED"] == [
        ("ADDED", "watched"),
        ("DELETED", "watched"),
    ]
    assert ("MODIFIED", existing) in [(e["type"], e["object"]["metadata"]["name"]) for e in events]
    versions = [int(e["object"]["metadata"]["resourceVersion"]) for e in events]
    assert versions == sorted(versions) and versions[0] > int(since)


def test_watch_streams_writes_made_while_it_is_open(contract_hub: ContractHub) -> None:
    since = clusters(contract_hub.objects)["metadata"]["resourceVersion"]
    received: list[tuple[str, str]] = []
    watch = Watch()

    def follow() -> None:
        for event in watch.stream(
            contract_hub.objects.list_cluster_custom_object,
            OCM,
            "v1",
            "managedclusters",
            resource_version=since,
            timeout_seconds=5,
            _request_timeout=TIMEOUT,
        ):
            if event["type"] == "ADDED":
                received.append((event["type"], event["object"]["metadata"]["name"]))
            if len(received) == 2:
                watch.stop()

    follower = threading.Thread(target=follow)
    follower.start()
    time.sleep(0.2)
    contract_hub.create(new_cluster("live-1"))
    contract_hub.create(new_cluster("live-2"))
    follower.join(TIMEOUT)

    assert received == [("ADDED", "live-1"), ("ADDED", "live-2")]


def test_watch_without_resource_version_starts_with_the_current_objects(contract_hub: ContractHub) -> None:
    events = list(
        Watch().stream(
            contract_hub.objects.list_cluster_custom_object,
            FLEET_PLACEMENT,
            "v1beta1",
            "clusterresourceplacements",
            timeout_seconds=1,
            _request_timeout=TIMEOUT,
        )
    )

    assert sorted((e["type"], e["object"]["metadata"]["name"]) for e in events) == [
        ("ADDED", "batch-jobs"),
        ("ADDED", "web-frontend"),
    ]


def test_watch_with_a_label_selector_sees_objects_leave_and_enter(contract_hub: ContractHub) -> None:
    since = clusters(contract_hub.objects)["metadata"]["resourceVersion"]
    name = names(clusters(contract_hub.objects, label_selector="environment=prod"))[0]
    left = contract_hub.patch("ManagedCluster", name, {"metadata": {"labels": {"environment": "dev"}}})
    contract_hub.patch("ManagedCluster", name, {"metadata": {"labels": {"environment": "prod"}}})

    events = watch_clusters(contract_hub.objects, since, label_selector="environment=prod")

    assert [(e["type"], e["object"]["metadata"]["name"]) for e in events] == [
        ("DELETED", name),
        ("ADDED", name),
    ]
    # leaving reads as a deletion of the object as it was, at the version of the write that moved it
    deleted = events[0]["object"]["metadata"]
    assert deleted["labels"]["environment"] == "prod"
    assert deleted["resourceVersion"] == left["metadata"]["resourceVersion"]


def test_bookmarks_tell_a_filtered_watch_how_far_the_hub_has_got_when_asked(
    contract_hub: ContractHub,
) -> None:
    since = clusters(contract_hub.objects)["metadata"]["resourceVersion"]
    elsewhere = names(clusters(contract_hub.objects, label_selector="environment!=prod"))[0]
    seen: dict[bool, list[dict[str, Any]]] = {}

    def follow(bookmarks: bool) -> None:
        seen[bookmarks] = watch_clusters(
            contract_hub.objects,
            since,
            BOOKMARK_WATCH_SECONDS,
            label_selector="environment=prod",
            allow_watch_bookmarks=bookmarks,
        )

    followers = [threading.Thread(target=follow, args=(bookmarks,)) for bookmarks in (True, False)]
    for follower in followers:
        follower.start()
    time.sleep(1)
    # a write the selector leaves out, while the watches are open: only a bookmark can tell of it
    written = contract_hub.patch("ManagedCluster", elsewhere, {"metadata": {"labels": {"seen": "no"}}})
    for follower in followers:
        follower.join(TIMEOUT + BOOKMARK_WATCH_SECONDS)

    assert seen[True] and {e["type"] for e in seen[True]} == {"BOOKMARK"}
    assert {e["raw_object"]["kind"] for e in seen[True]} == {"ManagedCluster"}
    versions = [int(e["raw_object"]["metadata"]["resourceVersion"]) for e in seen[True]]
    # never backwards, though kube-apiserver may send the same version twice
    assert versions == sorted(versions) and versions[0] >= int(written["metadata"]["resourceVersion"])
    assert seen[False] == []


def test_watch_from_a_compacted_resource_version_is_410_gone(contract_hub: ContractHub) -> None:
    since = clusters(contract_hub.objects)["metadata"]["resourceVersion"]
    contract_hub.patch(
        "ManagedCluster", names(clusters(contract_hub.objects))[0], {"metadata": {"labels": {"a": "b"}}}
    )
    contract_hub.compact()

    with pytest.raises(ApiException) as raised:
        watch_clusters(contract_hub.objects, since)

    assert raised.value.status == 410
    assert "Expired" in raised.value.reason
