"""Publishing decisions into the demo hub, read back with the real `kubernetes` client."""

from collections.abc import Iterator
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.test import Client
from django.urls import reverse
from kubernetes import client

from demohub import DemoHub
from inventory.models import Hub
from placement import publishing, service, tasks
from placement.argocd import argocd_configmap
from placement.models import PLACEMENT_LABEL, Placement
from tests.factories import placement_role, synced_demo_hub_row

pytestmark = pytest.mark.django_db
NAMESPACE = "argocd"
SPEC = {"clusterSets": ["global"], "numberOfClusters": 3}


@pytest.fixture
def hub(demo_hub: DemoHub) -> Hub:
    hub = synced_demo_hub_row(demo_hub)
    hub.publish_namespace = NAMESPACE
    hub.save(update_fields=["publish_namespace"])
    return hub


@pytest.fixture
def editor(hub: Hub) -> User:
    """Admin of the set bound to namespace default: may create and change its Placements."""
    return placement_role(hub, ("default",), username="editor")


@pytest.fixture
def api(demo_hub: DemoHub) -> Iterator[client.CustomObjectsApi]:
    configuration = client.Configuration()
    configuration.host = demo_hub.url
    configuration.api_key = {"authorization": "demo-token"}
    configuration.api_key_prefix = {"authorization": "Bearer"}
    with client.ApiClient(configuration) as api_client:
        yield client.CustomObjectsApi(api_client)


def published(api: client.CustomObjectsApi, placement: str) -> list[dict[str, Any]]:
    body = api.list_namespaced_custom_object(
        "cluster.open-cluster-management.io",
        "v1beta1",
        NAMESPACE,
        "placementdecisions",
        label_selector=f"{PLACEMENT_LABEL}={placement}",
    )
    return sorted(body["items"], key=lambda item: item["metadata"]["name"])


def test_decisions_are_published_as_upstream_names_and_labels_them(
    hub: Hub, api: client.CustomObjectsApi, editor: User
) -> None:
    placement = service.create_placement(
        kind=Placement.Kind.PLACEMENT, hub=hub, namespace="default", name="shop", spec=SPEC, actor=editor
    )
    [decision] = published(api, "shop")  # published by the task that follows a reschedule
    assert decision["metadata"]["name"] == "shop-decision-1"
    assert decision["metadata"]["namespace"] == NAMESPACE
    assert decision["metadata"]["labels"] == {
        PLACEMENT_LABEL: "shop",
        "cluster.open-cluster-management.io/decision-group-name": "",
        "cluster.open-cluster-management.io/decision-group-index": "0",
        "app.kubernetes.io/managed-by": "fleet-placement-dashboard",
    }
    stored = placement.decisions.get().decisions
    assert decision["status"]["decisions"] == stored and len(stored) == 3
    assert all(isinstance(v, str) for entry in stored for v in entry.values())


def test_a_new_selection_is_patched_and_leftovers_deleted(
    hub: Hub, api: client.CustomObjectsApi, demo_hub: DemoHub, editor: User
) -> None:
    placement = service.create_placement(
        kind=Placement.Kind.PLACEMENT, hub=hub, namespace="default", name="shop", spec=SPEC, actor=editor
    )
    demo_hub.store.create(
        {
            "apiVersion": "cluster.open-cluster-management.io/v1beta1",
            "kind": "PlacementDecision",
            "metadata": {
                "name": "shop-decision-7",
                "namespace": NAMESPACE,
                "labels": {PLACEMENT_LABEL: "shop"},
            },
        }
    )
    service.apply_spec(placement, {**SPEC, "numberOfClusters": 1}, actor=editor)
    [decision] = published(api, "shop")
    assert decision["metadata"]["name"] == "shop-decision-1"
    assert decision["status"]["decisions"] == placement.decisions.get().decisions
    assert len(decision["status"]["decisions"]) == 1
    # nothing to do the second time
    nothing = {"created": 0, "updated": 0, "deleted": 0, "conflicts": 0}
    assert publishing.publish_placement(placement).counts() == nothing


def test_hub_owned_placements_are_never_published(hub: Hub, api: client.CustomObjectsApi) -> None:
    mirror = Placement.objects.filter(hub=hub, kind=Placement.Kind.PLACEMENT).first()
    nothing = {"created": 0, "updated": 0, "deleted": 0, "conflicts": 0}
    assert publishing.publish_placement(mirror).counts() == nothing
    assert published(api, mirror.name) == []


def test_the_argocd_configmap_matches_what_is_published(hub: Hub) -> None:
    assert argocd_configmap(hub) == {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": "ocm-placement-generator", "namespace": NAMESPACE},
        "data": {
            "apiVersion": "cluster.open-cluster-management.io/v1beta1",
            "kind": "placementdecisions",
            "statusListKey": "decisions",
            "matchKey": "clusterName",
        },
    }


def _shown(placement: Placement, user: User) -> tuple[str, dict[str, Any]]:
    """The page header's Published fact and the API's `published`, as that user sees them."""
    browser = Client()
    browser.force_login(user)
    page = browser.get(reverse("placement:placement-detail", args=[placement.pk])).content.decode()
    start = page.index('<dd id="published">')
    api = browser.get(reverse("placement-api:placement-detail", args=[placement.pk])).json()
    return page[start : page.index("</dd>", start)], api["published"]


def test_each_publishing_says_how_it_went_on_the_page_and_in_the_api(hub: Hub, editor: User) -> None:
    placement = service.create_placement(
        kind=Placement.Kind.PLACEMENT, hub=hub, namespace="default", name="shop", spec=SPEC, actor=editor
    )

    fact, published = _shown(placement, editor)
    assert "published" in fact and f"to namespace {NAMESPACE} of hub {hub.name}: created 1" in fact
    assert published["type"] == "Normal" and "created 1, updated 0" in published["message"]


def test_a_publishing_the_hub_refuses_is_a_warning_with_its_reason(
    hub: Hub, demo_hub: DemoHub, editor: User
) -> None:
    placement = service.create_placement(
        kind=Placement.Kind.PLACEMENT, hub=hub, namespace="default", name="shop", spec=SPEC, actor=editor
    )
    demo_hub.fail_next(1, 403)

    assert tasks.publish_placement(placement.pk)["state"] == "failed"

    fact, published = _shown(placement, editor)
    assert "failed" in fact and "403" in fact
    assert published["type"] == "Warning" and "403" in published["message"]
    assert placement.events.filter(reason=publishing.PUBLISH_FAILED).count() == 1
