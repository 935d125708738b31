"""The demo hub behaves like a Kubernetes API server for everything the hub sync uses.

Every test talks HTTP to a running DemoHub through the official `kubernetes` client, unmodified.
"""

import json
import threading
import time
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from kubernetes.client import ApiClient, ApisApi, Configuration, CoreApi, CustomObjectsApi, V1APIGroup
from kubernetes.client.rest import ApiException
from kubernetes.watch import Watch
from urllib3.exceptions import ProtocolError

from demohub import DemoHub
from demohub.seed import SCORE_NAME

OCM = "cluster.open-cluster-management.io"
FLEET = "cluster.kubernetes-fleet.io"
FLEET_PLACEMENT = "placement.kubernetes-fleet.io"
TIMEOUT = 10  # seconds; a hung request fails the test instead of hanging it


def _clusters(api: CustomObjectsApi, **kwargs: Any) -> dict[str, Any]:
    return api.list_cluster_custom_object(OCM, "v1", "managedclusters", _request_timeout=TIMEOUT, **kwargs)


def _names(listing: dict[str, Any]) -> list[str]:
    return [item["metadata"]["name"] for item in listing["items"]]


def _status_body(error: ApiException) -> dict[str, Any]:
    return json.loads(error.body)


def _new_cluster(name: str, **labels: str) -> dict[str, Any]:
    return {
        "apiVersion": f"{OCM}/v1",
        "kind": "ManagedCluster",
        "metadata": {"name": name, "labels": labels},
        "spec": {"hubAcceptsClient": True},
        "status": {"conditions": [{"type": "ManagedClusterConditionAvailable", "status": "True"}]},
    }


def _watch(
    api: CustomObjectsApi, resource_version: str, seconds: int = 1, **kwargs: Any
) -> list[dict[str, Any]]:
    stream = Watch().stream(
        api.list_cluster_custom_object,
        OCM,
        "v1",
        "managedclusters",
        resource_version=resource_version,
        timeout_seconds=seconds,
        _request_timeout=TIMEOUT,
        **kwargs,
    )
    return list(stream)


# ---- discovery ---------------------------------------------------------------------------------


def test_discovery_lists_the_served_groups_with_their_preferred_versions(api_client: ApiClient) -> None:
    groups = {group.name: group for group in ApisApi(api_client).get_api_versions().groups}

    assert set(groups) == {OCM, FLEET, FLEET_PLACEMENT}
    assert groups[OCM].preferred_version.version == "v1"
    assert [v.version for v in groups[OCM].versions] == ["v1", "v1beta2", "v1beta1", "v1alpha1"]
    assert CoreApi(api_client).get_api_versions().versions == ["v1"]


def test_discovery_of_one_group(api_client: ApiClient) -> None:
    group = api_client.call_api(
        f"/apis/{FLEET_PLACEMENT}", "GET", response_type="V1APIGroup", _return_http_data_only=True
    )

    assert isinstance(group, V1APIGroup)
    assert group.preferred_version.group_version == f"{FLEET_PLACEMENT}/v1beta1"


def test_resource_lists_say_scope_kind_verbs_and_status_subresource(custom_objects: CustomObjectsApi) -> None:
    ocm_v1beta1 = {r.name: r for r in custom_objects.get_api_resources(OCM, "v1beta1").resources}
    fleet = {r.name: r for r in custom_objects.get_api_resources(FLEET_PLACEMENT, "v1beta1").resources}

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
    assert ocm_v1beta1["placementdecisions/status"].verbs == ["get", "patch", "update"]
    assert fleet["clusterapprovalrequests"].namespaced is False
    assert "clusterapprovalrequests/status" in fleet


def test_unknown_group_version_or_resource_is_404(custom_objects: CustomObjectsApi) -> None:
    for call in (
        lambda: custom_objects.get_api_resources("example.com", "v1"),
        lambda: custom_objects.list_cluster_custom_object(OCM, "v9", "managedclusters"),
        lambda: custom_objects.list_cluster_custom_object(OCM, "v1", "widgets"),
    ):
        with pytest.raises(ApiException) as raised:
            call()
        assert raised.value.status == 404


# ---- list, selectors, paging ---------------------------------------------------------------------


def test_list_has_kind_items_and_a_resource_version(
    custom_objects: CustomObjectsApi, demo_hub: DemoHub
) -> None:
    listing = _clusters(custom_objects)

    assert listing["kind"] == "ManagedClusterList"
    assert listing["apiVersion"] == f"{OCM}/v1"
    assert len(listing["items"]) == 24
    assert listing["metadata"]["resourceVersion"] == str(demo_hub.store.resource_version)
    assert _names(listing) == sorted(_names(listing))
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
    custom_objects: CustomObjectsApi, selector: str, expected: Any
) -> None:
    everything = _clusters(custom_objects)["items"]
    wanted = [c["metadata"]["name"] for c in everything if expected(c["metadata"]["labels"])]

    selected = _names(_clusters(custom_objects, label_selector=selector))

    assert selected == wanted
    assert 0 < len(selected) < len(everything) or selector in ("gpu",)


def test_unparseable_label_selector_is_400(custom_objects: CustomObjectsApi) -> None:
    with pytest.raises(ApiException) as raised:
        _clusters(custom_objects, label_selector="region in eastus")

    assert raised.value.status == 400
    assert _status_body(raised.value)["reason"] == "BadRequest"


def test_list_per_namespace_and_across_namespaces(custom_objects: CustomObjectsApi) -> None:
    cluster = _names(_clusters(custom_objects))[0]

    one = custom_objects.list_namespaced_custom_object(OCM, "v1alpha1", cluster, "addonplacementscores")
    every = custom_objects.list_custom_object_for_all_namespaces(OCM, "v1alpha1", "addonplacementscores")

    assert [(i["metadata"]["namespace"], i["metadata"]["name"]) for i in one["items"]] == [
        (cluster, SCORE_NAME)
    ]
    assert len(every["items"]) == 24


def test_paging_returns_one_consistent_snapshot_across_writes(
    custom_objects: CustomObjectsApi, demo_hub: DemoHub
) -> None:
    before = _clusters(custom_objects)["items"]
    first = _clusters(custom_objects, limit=10)
    victim, changed = _names(first)[-1], before[15]["metadata"]["name"]
    demo_hub.store.create(_new_cluster("zzz-created-mid-list"))
    demo_hub.store.patch("ManagedCluster", changed, {"metadata": {"labels": {"environment": "patched"}}})
    demo_hub.store.delete("ManagedCluster", before[20]["metadata"]["name"])

    pages = [first]
    while pages[-1]["metadata"].get("continue"):
        pages.append(_clusters(custom_objects, limit=10, _continue=pages[-1]["metadata"]["continue"]))

    assert [len(p["items"]) for p in pages] == [10, 10, 4]
    assert first["metadata"]["remainingItemCount"] == 14
    assert {p["metadata"]["resourceVersion"] for p in pages} == {first["metadata"]["resourceVersion"]}
    assert [item for page in pages for item in page["items"]] == before
    assert victim in _names(_clusters(custom_objects))


def test_expired_continue_token_is_410_gone(custom_objects: CustomObjectsApi, demo_hub: DemoHub) -> None:
    first = _clusters(custom_objects, limit=5)
    demo_hub.compact()

    with pytest.raises(ApiException) as raised:
        _clusters(custom_objects, limit=5, _continue=first["metadata"]["continue"])

    assert raised.value.status == 410
    assert _status_body(raised.value)["reason"] == "Expired"


def test_garbage_continue_token_is_410_gone(custom_objects: CustomObjectsApi) -> None:
    with pytest.raises(ApiException) as raised:
        _clusters(custom_objects, limit=5, _continue="not-a-token")

    assert raised.value.status == 410
    assert _status_body(raised.value)["code"] == 410


@pytest.mark.parametrize(
    ("method", "path", "headers", "body", "status", "reason"),
    [
        ("DELETE", f"/apis/{OCM}/v1/managedclusters", {}, None, 405, "MethodNotAllowed"),
        (
            "GET",
            f"/apis/{OCM}/v1/managedclusters?fieldSelector=metadata.name%3Dx",
            {},
            None,
            400,
            "BadRequest",
        ),
        (
            "PATCH",
            f"/apis/{FLEET_PLACEMENT}/v1beta1/clusterresourceplacements/web-frontend",
            {"Content-Type": "application/apply-patch+yaml"},
            {"spec": {}},
            415,
            "UnsupportedMediaType",
        ),
        (
            "PUT",
            f"/apis/{FLEET_PLACEMENT}/v1beta1/clusterresourceplacements/web-frontend",
            {},
            ["x"],
            400,
            "BadRequest",
        ),
    ],
)
def test_unsupported_requests_answer_a_status(
    api_client: ApiClient,
    method: str,
    path: str,
    headers: dict[str, str],
    body: Any,
    status: int,
    reason: str,
) -> None:
    with pytest.raises(ApiException) as raised:
        api_client.call_api(path, method, header_params=headers, body=body, response_type="object")

    assert raised.value.status == status
    assert _status_body(raised.value)["reason"] == reason


# ---- get, create, patch, replace, delete ---------------------------------------------------------------


def test_get_and_not_found_status(custom_objects: CustomObjectsApi) -> None:
    name = _names(_clusters(custom_objects))[0]

    assert (
        custom_objects.get_cluster_custom_object(OCM, "v1", "managedclusters", name)["metadata"]["name"]
        == name
    )
    with pytest.raises(ApiException) as raised:
        custom_objects.get_cluster_custom_object(OCM, "v1", "managedclusters", "no-such-cluster")
    status = _status_body(raised.value)
    assert raised.value.status == 404
    assert (status["kind"], status["status"], status["reason"], status["code"]) == (
        "Status",
        "Failure",
        "NotFound",
        404,
    )
    assert status["details"] == {"name": "no-such-cluster", "group": OCM, "kind": "managedclusters"}
    assert status["message"] == f'managedclusters.{OCM} "no-such-cluster" not found'


def test_create_sets_server_fields_drops_status_and_rejects_duplicates(
    custom_objects: CustomObjectsApi, demo_hub: DemoHub
) -> None:
    before = demo_hub.store.resource_version

    created = custom_objects.create_cluster_custom_object(
        OCM, "v1", "managedclusters", _new_cluster("new-one")
    )

    metadata = created["metadata"]
    assert metadata["generation"] == 1
    assert int(metadata["resourceVersion"]) == before + 1
    assert metadata["uid"] and metadata["creationTimestamp"].endswith("Z")
    assert "status" not in created
    with pytest.raises(ApiException) as raised:
        custom_objects.create_cluster_custom_object(OCM, "v1", "managedclusters", _new_cluster("new-one"))
    assert raised.value.status == 409
    assert _status_body(raised.value)["reason"] == "AlreadyExists"


def test_create_namespaced_object(custom_objects: CustomObjectsApi) -> None:
    body = {
        "apiVersion": f"{OCM}/v1beta1",
        "kind": "PlacementDecision",
        "metadata": {"name": "web-decision-1", "labels": {f"{OCM}/placement": "web"}},
    }

    created = custom_objects.create_namespaced_custom_object(
        OCM, "v1beta1", "argocd", "placementdecisions", body
    )

    assert created["metadata"]["namespace"] == "argocd"
    listed = custom_objects.list_namespaced_custom_object(
        OCM, "v1beta1", "argocd", "placementdecisions", label_selector=f"{OCM}/placement=web"
    )
    assert _names(listed) == ["web-decision-1"]


def test_spec_patch_bumps_generation_metadata_patch_does_not(custom_objects: CustomObjectsApi) -> None:
    name = _names(_clusters(custom_objects))[0]
    original = custom_objects.get_cluster_custom_object(OCM, "v1", "managedclusters", name)

    labelled = custom_objects.patch_cluster_custom_object(
        OCM, "v1", "managedclusters", name, {"metadata": {"labels": {"team": "payments"}}}
    )
    tainted = custom_objects.patch_cluster_custom_object(
        OCM, "v1", "managedclusters", name, {"spec": {"taints": [{"key": "dedicated", "effect": "NoSelect"}]}}
    )

    assert labelled["metadata"]["generation"] == original["metadata"]["generation"]
    assert labelled["metadata"]["labels"]["team"] == "payments"
    assert labelled["metadata"]["labels"]["region"] == original["metadata"]["labels"]["region"]
    assert tainted["metadata"]["generation"] == original["metadata"]["generation"] + 1
    assert int(tainted["metadata"]["resourceVersion"]) > int(labelled["metadata"]["resourceVersion"])


def test_merge_patch_null_deletes_a_key(custom_objects: CustomObjectsApi) -> None:
    name = _names(_clusters(custom_objects, label_selector="region"))[0]

    patched = custom_objects.patch_cluster_custom_object(
        OCM, "v1", "managedclusters", name, {"metadata": {"labels": {"region": None}}}
    )

    assert "region" not in patched["metadata"]["labels"]


def test_status_subresource_patch_changes_only_status_and_never_generation(
    custom_objects: CustomObjectsApi,
) -> None:
    name = _names(_clusters(custom_objects))[0]
    original = custom_objects.get_cluster_custom_object(OCM, "v1", "managedclusters", name)

    patched = custom_objects.patch_cluster_custom_object_status(
        OCM,
        "v1",
        "managedclusters",
        name,
        {"spec": {"hubAcceptsClient": False}, "status": {"allocatable": {"cpu": "1", "memory": "1Gi"}}},
    )
    main = custom_objects.patch_cluster_custom_object(
        OCM, "v1", "managedclusters", name, {"status": {"allocatable": {"cpu": "999"}}}
    )

    assert patched["status"]["allocatable"] == {"cpu": "1", "memory": "1Gi"}
    assert patched["spec"] == original["spec"]
    assert patched["metadata"]["generation"] == original["metadata"]["generation"]
    assert main["status"]["allocatable"] == {"cpu": "1", "memory": "1Gi"}
    assert main["metadata"]["resourceVersion"] == patched["metadata"]["resourceVersion"]


def test_approving_via_status_patch_keeps_generation_and_twice_is_a_no_op(
    custom_objects: CustomObjectsApi,
) -> None:
    name = "batch-jobs-rollout-1-after-staging"
    request = custom_objects.get_cluster_custom_object(
        FLEET_PLACEMENT, "v1beta1", "clusterapprovalrequests", name
    )
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

    first = custom_objects.patch_cluster_custom_object_status(
        FLEET_PLACEMENT, "v1beta1", "clusterapprovalrequests", name, approval
    )
    second = custom_objects.patch_cluster_custom_object_status(
        FLEET_PLACEMENT, "v1beta1", "clusterapprovalrequests", name, approval
    )

    assert first["status"]["conditions"][0]["type"] == "Approved"
    assert first["metadata"]["generation"] == request["metadata"]["generation"]
    assert second["metadata"]["resourceVersion"] == first["metadata"]["resourceVersion"]


def test_json_patch_through_the_api_client(api_client: ApiClient) -> None:
    path = f"/apis/{FLEET}/v1beta1/memberclusters/{{name}}"
    name = _names(
        CustomObjectsApi(api_client).list_cluster_custom_object(FLEET, "v1beta1", "memberclusters")
    )[0]

    patched = api_client.call_api(
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


def test_failed_json_patch_test_is_422(api_client: ApiClient) -> None:
    with pytest.raises(ApiException) as raised:
        api_client.call_api(
            f"/apis/{FLEET_PLACEMENT}/v1beta1/clusterstagedupdatestrategies/staging-then-prod",
            "PATCH",
            header_params={"Content-Type": "application/json-patch+json"},
            body=[{"op": "test", "path": "/spec/stages/0/name", "value": "canary"}],
            response_type="object",
        )

    assert raised.value.status == 422


def test_replace_with_a_stale_resource_version_is_409_conflict(custom_objects: CustomObjectsApi) -> None:
    args = (FLEET_PLACEMENT, "v1beta1", "clusterresourceplacements", "web-frontend")
    stale = custom_objects.get_cluster_custom_object(*args)
    custom_objects.patch_cluster_custom_object(*args, {"spec": {"revisionHistoryLimit": 5}})

    stale["spec"]["revisionHistoryLimit"] = 7
    with pytest.raises(ApiException) as raised:
        custom_objects.replace_cluster_custom_object(*args, stale)
    fresh = custom_objects.get_cluster_custom_object(*args)
    fresh["spec"]["revisionHistoryLimit"] = 7
    replaced = custom_objects.replace_cluster_custom_object(*args, fresh)

    assert raised.value.status == 409
    assert _status_body(raised.value)["reason"] == "Conflict"
    assert replaced["spec"]["revisionHistoryLimit"] == 7
    assert replaced["metadata"]["generation"] == fresh["metadata"]["generation"] + 1


def test_delete_returns_the_object_then_404(custom_objects: CustomObjectsApi) -> None:
    args = (OCM, "v1beta1", "apps-prod", "placements", "gpu-training")

    deleted = custom_objects.delete_namespaced_custom_object(*args)

    assert deleted["metadata"]["name"] == "gpu-training"
    for call in (custom_objects.get_namespaced_custom_object, custom_objects.delete_namespaced_custom_object):
        with pytest.raises(ApiException) as raised:
            call(*args)
        assert raised.value.status == 404


# ---- watch -------------------------------------------------------------------------------------


def test_watch_from_a_resource_version_replays_later_writes_in_order(
    custom_objects: CustomObjectsApi, demo_hub: DemoHub
) -> None:
    since = _clusters(custom_objects)["metadata"]["resourceVersion"]
    existing = _names(_clusters(custom_objects))[0]
    demo_hub.store.create(_new_cluster("watched"))
    demo_hub.store.patch("ManagedCluster", existing, {"metadata": {"labels": {"watched": "yes"}}})
    demo_hub.store.delete("ManagedCluster", "watched")
    demo_hub.store.patch("MemberCluster", existing, {"metadata": {"labels": {"other": "kind"}}})

    events = _watch(custom_objects, since)

    assert [(e["type"], e["object"]["metadata"]["name"]) for e in events] == [
        ("ADDED", "watched"),
        ("MODIFIED", existing),
        ("DELETED", "watched"),
    ]
    versions = [int(e["object"]["metadata"]["resourceVersion"]) for e in events]
    assert versions == sorted(versions) and versions[0] == int(since) + 1


def test_watch_streams_writes_made_while_it_is_open(
    custom_objects: CustomObjectsApi, demo_hub: DemoHub
) -> None:
    since = _clusters(custom_objects)["metadata"]["resourceVersion"]
    received: list[tuple[str, str]] = []
    watch = Watch()

    def follow() -> None:
        for event in watch.stream(
            custom_objects.list_cluster_custom_object,
            OCM,
            "v1",
            "managedclusters",
            resource_version=since,
            timeout_seconds=5,
            _request_timeout=TIMEOUT,
        ):
            received.append((event["type"], event["object"]["metadata"]["name"]))
            if len(received) == 2:
                watch.stop()

    follower = threading.Thread(target=follow)
    follower.start()
    time.sleep(0.2)
    demo_hub.store.create(_new_cluster("live-1"))
    demo_hub.store.create(_new_cluster("live-2"))
    follower.join(TIMEOUT)

    assert received == [("ADDED", "live-1"), ("ADDED", "live-2")]


def test_watch_without_resource_version_starts_with_the_current_objects(
    custom_objects: CustomObjectsApi,
) -> None:
    events = list(
        Watch().stream(
            custom_objects.list_cluster_custom_object,
            FLEET_PLACEMENT,
            "v1beta1",
            "clusterresourceplacements",
            timeout_seconds=1,
            _request_timeout=TIMEOUT,
        )
    )

    assert [(e["type"], e["object"]["metadata"]["name"]) for e in events] == [
        ("ADDED", "batch-jobs"),
        ("ADDED", "web-frontend"),
    ]


def test_watch_with_a_label_selector_sees_objects_leave_and_enter(
    custom_objects: CustomObjectsApi, demo_hub: DemoHub
) -> None:
    since = _clusters(custom_objects)["metadata"]["resourceVersion"]
    name = _names(_clusters(custom_objects, label_selector="environment=prod"))[0]
    demo_hub.store.patch("ManagedCluster", name, {"metadata": {"labels": {"environment": "dev"}}})
    demo_hub.store.patch("ManagedCluster", name, {"metadata": {"labels": {"environment": "prod"}}})

    events = _watch(custom_objects, since, label_selector="environment=prod")

    assert [(e["type"], e["object"]["metadata"]["name"]) for e in events] == [
        ("DELETED", name),
        ("ADDED", name),
    ]


def test_watch_sends_bookmarks_when_asked(custom_objects: CustomObjectsApi) -> None:
    since = _clusters(custom_objects)["metadata"]["resourceVersion"]

    events = _watch(custom_objects, since, allow_watch_bookmarks=True)

    assert events and {e["type"] for e in events} == {"BOOKMARK"}
    assert events[0]["raw_object"]["metadata"]["resourceVersion"] == since


def test_watch_from_a_compacted_resource_version_is_410_gone(
    custom_objects: CustomObjectsApi, demo_hub: DemoHub
) -> None:
    since = _clusters(custom_objects)["metadata"]["resourceVersion"]
    demo_hub.store.patch(
        "ManagedCluster", _names(_clusters(custom_objects))[0], {"metadata": {"labels": {"a": "b"}}}
    )
    demo_hub.compact()

    with pytest.raises(ApiException) as raised:
        _watch(custom_objects, since)

    assert raised.value.status == 410
    assert "Expired" in raised.value.reason


def test_watch_older_than_the_retained_event_window_is_410_gone() -> None:
    with DemoHub(clusters=3, retained_events=5) as hub:
        api = CustomObjectsApi(ApiClient(Configuration(host=hub.url)))
        for index in range(6):
            hub.store.patch(
                "ManagedCluster",
                hub.store.names("ManagedCluster")[0],
                {"metadata": {"labels": {"n": str(index)}}},
            )
        window_start = hub.store.resource_version - 5

        with pytest.raises(ApiException) as raised:
            _watch(api, str(window_start - 1))
        assert raised.value.status == 410
        assert len(_watch(api, str(window_start))) == 5


def test_dropped_watch_breaks_the_stream(custom_objects: CustomObjectsApi, demo_hub: DemoHub) -> None:
    since = _clusters(custom_objects)["metadata"]["resourceVersion"]
    outcome: list[BaseException] = []

    def follow() -> None:
        try:
            list(
                Watch().stream(
                    custom_objects.list_cluster_custom_object,
                    OCM,
                    "v1",
                    "managedclusters",
                    resource_version=since,
                    timeout_seconds=30,
                    _request_timeout=TIMEOUT,
                )
            )
        except ProtocolError as error:
            outcome.append(error)

    follower = threading.Thread(target=follow)
    follower.start()
    time.sleep(0.3)
    demo_hub.drop_watches()
    follower.join(TIMEOUT)

    assert not follower.is_alive()
    assert len(outcome) == 1


# ---- churn and faults ------------------------------------------------------------------------------


def test_churn_writes_through_the_api_so_watches_see_modified(
    custom_objects: CustomObjectsApi, demo_hub: DemoHub
) -> None:
    since = _clusters(custom_objects)["metadata"]["resourceVersion"]

    changes = [demo_hub.churn.step() for _ in range(8)]
    events = list(
        Watch().stream(
            custom_objects.list_custom_object_for_all_namespaces,
            OCM,
            "v1alpha1",
            "addonplacementscores",
            resource_version=since,
            timeout_seconds=1,
        )
    )
    events += _watch(custom_objects, since)

    assert all(changes)
    assert events and {e["type"] for e in events} == {"MODIFIED"}


def test_fail_next_answers_500_then_recovers(custom_objects: CustomObjectsApi, demo_hub: DemoHub) -> None:
    demo_hub.fail_next(1)

    with pytest.raises(ApiException) as raised:
        _clusters(custom_objects)

    assert raised.value.status == 500
    assert _status_body(raised.value)["reason"] == "InternalError"
    assert len(_clusters(custom_objects)["items"]) == 24


def test_throttling_sends_retry_after_which_urllib3_honours_for_reads(
    custom_objects: CustomObjectsApi, demo_hub: DemoHub
) -> None:
    demo_hub.fail_next(1, status=429)
    started = time.monotonic()
    assert len(_clusters(custom_objects)["items"]) == 24  # GET is retried after Retry-After by urllib3
    assert time.monotonic() - started >= 1

    demo_hub.fail_next(1, status=429)
    with pytest.raises(ApiException) as raised:  # POST is not idempotent, so it is not retried
        custom_objects.create_cluster_custom_object(OCM, "v1", "managedclusters", _new_cluster("throttled"))

    assert raised.value.status == 429
    assert raised.value.headers["Retry-After"] == "1"
    assert _status_body(raised.value)["details"] == {"retryAfterSeconds": 1}


def _failures(seed: int) -> list[int]:
    with DemoHub(clusters=2, seed=seed, fail_rate=0.3) as hub:
        configuration = Configuration(host=hub.url)
        configuration.retries = False  # count every answer, including the 429s urllib3 would retry
        api = CustomObjectsApi(ApiClient(configuration))
        statuses = []
        for _ in range(40):
            try:
                _clusters(api)
                statuses.append(200)
            except ApiException as error:
                statuses.append(error.status)
        return statuses


def test_fail_rate_is_deterministic_per_seed() -> None:
    first, again = _failures(seed=3), _failures(seed=3)

    assert first == again
    assert 5 <= sum(s != 200 for s in first) <= 20
    assert set(first) <= {200, 429, 500}


def test_latency_is_added_to_every_request() -> None:
    with DemoHub(clusters=1, latency_ms=150) as hub:
        api = CustomObjectsApi(ApiClient(Configuration(host=hub.url)))
        started = time.monotonic()
        _clusters(api)

        assert time.monotonic() - started >= 0.15


def test_heartbeats_refresh_live_member_agents_only() -> None:
    now = [datetime(2026, 5, 1, 12, 0, tzinfo=UTC)]
    with DemoHub(clusters=60, fleet=True, seed=2, clock=lambda: now[0]) as hub:
        api = CustomObjectsApi(ApiClient(Configuration(host=hub.url)))
        members = api.list_cluster_custom_object(FLEET, "v1beta1", "memberclusters")
        heartbeats = {
            m["metadata"]["name"]: m["status"]["agentStatus"][0]["lastReceivedHeartbeat"]
            for m in members["items"]
        }
        now[0] += timedelta(minutes=2)

        refreshed = hub.churn.beat()
        events = list(
            Watch().stream(
                api.list_cluster_custom_object,
                FLEET,
                "v1beta1",
                "memberclusters",
                resource_version=members["metadata"]["resourceVersion"],
                timeout_seconds=1,
            )
        )

    fresh = {name for name, beat in heartbeats.items() if beat == "2026-05-01T12:00:00Z"}
    assert 0 < len(fresh) < len(heartbeats)
    assert refreshed == len(fresh)
    assert {e["object"]["metadata"]["name"] for e in events} == fresh
    assert {e["object"]["status"]["agentStatus"][0]["lastReceivedHeartbeat"] for e in events} == {
        "2026-05-01T12:02:00Z"
    }
    assert all(e["type"] == "MODIFIED" and e["object"]["metadata"]["generation"] == 1 for e in events)


def test_background_churn_keeps_writing() -> None:
    with DemoHub(clusters=5, churn_per_minute=1200) as hub:
        before = hub.store.resource_version
        time.sleep(0.5)

        assert hub.store.resource_version > before
