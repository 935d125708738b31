"""What only the demo hub does: the faults it injects, its churn and heartbeats, its bounded event
window, dropped watches, and the requests it does not support (answered with a Status, as an API server
answers what it refuses). What both hubs do alike is in test_contract.py.
"""

import copy
import threading
import time
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from kubernetes.client import ApiClient, Configuration, CustomObjectsApi
from kubernetes.client.rest import ApiException
from kubernetes.watch import Watch
from urllib3.exceptions import ProtocolError

from demohub import DemoHub
from tests.contract_hubs import TIMEOUT, clusters, new_cluster, status_body, watch_clusters

OCM = "cluster.open-cluster-management.io"
FLEET = "cluster.kubernetes-fleet.io"
FLEET_PLACEMENT = "placement.kubernetes-fleet.io"


@pytest.mark.parametrize(
    ("method", "path", "headers", "body", "status", "reason"),
    [
        # deletecollection, field selectors and server-side apply: served by kube-apiserver, not by us
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
    assert status_body(raised.value)["reason"] == reason


def test_watch_older_than_the_retained_event_window_is_410_gone() -> None:
    with DemoHub(clusters=3, retained_events=5, window_seconds=0) as hub:
        api = CustomObjectsApi(ApiClient(Configuration(host=hub.url)))
        for index in range(6):
            hub.store.patch(
                "ManagedCluster",
                hub.store.names("ManagedCluster")[0],
                {"metadata": {"labels": {"n": str(index)}}},
            )
        window_start = hub.store.resource_version - 5

        with pytest.raises(ApiException) as raised:
            watch_clusters(api, str(window_start - 1))
        assert raised.value.status == 410
        assert len(watch_clusters(api, str(window_start))) == 5


def test_dropped_watch_breaks_the_stream(custom_objects: CustomObjectsApi, demo_hub: DemoHub) -> None:
    since = clusters(custom_objects)["metadata"]["resourceVersion"]
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
    since = clusters(custom_objects)["metadata"]["resourceVersion"]

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
    events += watch_clusters(custom_objects, since)

    assert all(changes)
    assert events and {e["type"] for e in events} == {"MODIFIED"}


def test_fail_next_answers_500_then_recovers(custom_objects: CustomObjectsApi, demo_hub: DemoHub) -> None:
    demo_hub.fail_next(1)

    with pytest.raises(ApiException) as raised:
        clusters(custom_objects)

    assert raised.value.status == 500
    assert status_body(raised.value)["reason"] == "InternalError"
    assert len(clusters(custom_objects)["items"]) == 24


def test_throttling_sends_retry_after_which_urllib3_honours_for_reads(
    custom_objects: CustomObjectsApi, demo_hub: DemoHub
) -> None:
    demo_hub.fail_next(1, status=429)
    started = time.monotonic()
    assert len(clusters(custom_objects)["items"]) == 24  # GET is retried after Retry-After by urllib3
    assert time.monotonic() - started >= 1

    demo_hub.fail_next(1, status=429)
    with pytest.raises(ApiException) as raised:  # POST is not idempotent, so it is not retried
        custom_objects.create_cluster_custom_object(OCM, "v1", "managedclusters", new_cluster("throttled"))

    assert raised.value.status == 429
    assert raised.value.headers["Retry-After"] == "1"
    assert status_body(raised.value)["details"] == {"retryAfterSeconds": 1}


def _failures(seed: int) -> list[int]:
    with DemoHub(clusters=2, seed=seed, fail_rate=0.3) as hub:
        configuration = Configuration(host=hub.url)
        configuration.retries = False  # count every answer, including the 429s urllib3 would retry
        api = CustomObjectsApi(ApiClient(configuration))
        statuses = []
        for _ in range(40):
            try:
                clusters(api)
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
        clusters(api)

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
        stored = {name: hub.store.read("MemberCluster", name) for name in heartbeats}
        as_read = copy.deepcopy(stored)

        refreshed = hub.churn.beat()
        # a heartbeat replaces the stored member: the version read before it (a watch window's old
        # object) is left as it was
        assert stored == as_read
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
