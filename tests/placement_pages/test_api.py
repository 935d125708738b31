"""Placements API: CRUD through the service, read-only mirrors, permissions, what-if, decisions, history."""

import pytest
import yaml
from django.contrib.auth.models import Permission
from django.urls import reverse
from rest_framework.test import APIClient

from placement.models import DecisionChange, Owner, Placement
from placement.scheduler import columns
from tests.factories import HubFactory, PlacementFactory, UserFactory
from tests.placement_pages.explanations import OCM_EXPLANATION

pytestmark = pytest.mark.django_db

MEMORY = {"scoreCoordinate": {"type": "BuiltIn", "builtIn": "ResourceAllocatableMemory"}, "weight": 2}


@pytest.fixture
def api(tasks_in_process: None) -> APIClient:
    # follow-up tasks (timed runs, publishing) run in-process
    client = APIClient()
    client.force_authenticate(UserFactory(username="ops", is_staff=True))
    return client


def as_user(*permissions: str) -> APIClient:
    user = UserFactory(username="viewer")
    for codename in permissions:
        user.user_permissions.add(Permission.objects.get(codename=codename))
    client = APIClient()
    client.force_authenticate(user)
    return client


def url(name: str, *args: object) -> str:
    return reverse(f"placement-api:{name}", args=args)


def create(api: APIClient, **fields: object):
    body = {"hub": "manifests", "kind": "Placement", "namespace": "web", "name": "shop",
            "spec": {"clusterSets": ["prod-us", "prod-eu"], "numberOfClusters": 2}} | fields
    return api.post(url("placement-list"), body, format="json")


def test_anonymous_requests_get_401() -> None:
    assert APIClient().get(url("placement-list")).status_code == 401


def test_create_schedules_a_dashboard_placement_and_records_history(api: APIClient, demo_fleet: None) -> None:
    response = create(api)
    assert response.status_code == 201, response.json()
    body = response.json()
    assert body["owner"] == "dashboard" and body["hub"] == "manifests" and body["selected_count"] == 2
    placement = Placement.objects.get(pk=body["id"])
    assert placement.decisions.filter(owner=Owner.DASHBOARD).exists()
    history = api.get(url("placement-history", placement.pk)).json()
    assert history["count"] >= 1 and history["results"][-1]["trigger"] == "created"
    assert history["results"][0]["actor"] == "ops"
    decisions = api.get(url("placement-decisions", placement.pk)).json()
    assert sum(len(page["decisions"]) for page in decisions["results"]) == 2


def test_create_refuses_an_invalid_spec_naming_the_field(api: APIClient, demo_fleet: None) -> None:
    response = create(api, spec={"numberOfClusters": -1})
    assert response.status_code == 400
    assert "spec.numberOfClusters" in response.json()
    assert not Placement.objects.filter(name="shop").exists()


def test_update_applies_the_spec_with_the_actor_in_history(api: APIClient, demo_fleet: None) -> None:
    placement_id = create(api).json()["id"]
    spec = {"clusterSets": ["prod-us", "prod-eu"], "numberOfClusters": 1,
            "prioritizerPolicy": {"mode": "Additive", "configurations": [MEMORY]}}
    response = api.patch(url("placement-detail", placement_id), {"spec": spec}, format="json")
    assert response.status_code == 200, response.json()
    assert response.json()["spec"] == spec and response.json()["selected_count"] == 1
    change = DecisionChange.objects.filter(placement_id=placement_id, spec_after__isnull=False).first()
    assert change.trigger == "spec edited" and change.actor.username == "ops"
    assert change.spec_before["numberOfClusters"] == 2 and change.spec_after == spec
    renamed = api.patch(url("placement-detail", placement_id), {"name": "other"}, format="json")
    assert renamed.status_code == 400 and "name" in renamed.json()
    bad = api.patch(url("placement-detail", placement_id), {"spec": {"numberOfClusters": "x"}}, format="json")
    assert bad.status_code == 400 and "spec.numberOfClusters" in bad.json()


def test_hub_owned_placements_are_read_only(api: APIClient, demo_fleet: None) -> None:
    mirror = Placement.objects.get(name="frontend")
    assert mirror.owner == Owner.HUB
    for response in (
        api.patch(url("placement-detail", mirror.pk), {"spec": {}}, format="json"),
        api.delete(url("placement-detail", mirror.pk)),
    ):
        assert response.status_code == 403
        assert "read-only mirror of hub manifests" in response.json()["detail"]
    assert Placement.objects.filter(pk=mirror.pk).exists()


def test_permissions_for_users_who_are_not_staff(demo_fleet: None, tasks_in_process: None) -> None:
    viewer = as_user()
    assert create(viewer).status_code == 403
    assert viewer.get(url("placement-list")).status_code == 200
    owned = PlacementFactory(hub=Placement.objects.first().hub, owner=Owner.DASHBOARD, name="owned")
    assert viewer.patch(url("placement-detail", owned.pk), {"spec": {}}, format="json").status_code == 403
    assert viewer.delete(url("placement-detail", owned.pk)).status_code == 403
    adder = as_user("add_placement")
    assert create(adder, name="by-permission").status_code == 201


def test_delete_removes_a_dashboard_placement_and_its_decisions(api: APIClient, demo_fleet: None) -> None:
    placement_id = create(api).json()["id"]
    assert api.delete(url("placement-detail", placement_id)).status_code == 204
    assert not Placement.objects.filter(pk=placement_id).exists()
    hub = Placement.objects.get(name="frontend").hub
    assert not hub.placement_decisions.filter(owner=Owner.DASHBOARD).exists()


def test_list_filters_like_the_page(api: APIClient, demo_fleet: None) -> None:
    body = api.get(url("placement-list"), {"kind": "ClusterResourcePlacement"}).json()
    assert {item["name"] for item in body["results"]} == {"web-app", "cluster-baseline"}
    assert api.get(url("placement-list"), {"kind": "Nope"}).status_code == 400
    detail = api.get(url("placement-detail", body["results"][0]["id"])).json()
    assert "explanation" in detail


def test_detail_answers_the_stored_columns_as_report_rows(api: APIClient) -> None:
    columnar = {**OCM_EXPLANATION, "clusters": columns.from_rows(OCM_EXPLANATION["clusters"])}
    placement = PlacementFactory(explanation=columnar)
    explanation = api.get(url("placement-detail", placement.pk)).json()["explanation"]
    assert explanation == OCM_EXPLANATION


def test_whatif_answers_the_preview_and_400_naming_the_field(api: APIClient, demo_fleet: None) -> None:
    frontend = Placement.objects.get(name="frontend")
    whatif_url = url("placement-whatif", frontend.pk)
    response = api.post(whatif_url + "?limit=2", {"numberOfClusters": 1}, format="json")
    assert response.status_code == 200
    body = response.json()
    assert len(body["selected"]) == 1 and len(body["ranking"]) == 2
    assert set(body) >= {"diff", "weights", "chart", "conditions", "explanations", "spec"}
    weight = {"prioritizerPolicy": {"configurations": [{**MEMORY, "weight": 11}]}}
    bad = api.post(url("placement-whatif", frontend.pk), weight, format="json")
    assert bad.status_code == 400
    assert "less than or equal to 10" in bad.json()["spec.prioritizerPolicy.configurations[0].weight"][0]
    unknown = api.post(url("placement-whatif", frontend.pk), {"colour": 1}, format="json")
    assert unknown.status_code == 400 and "colour" in unknown.json()
    assert api.post(url("placement-whatif", frontend.pk) + "?limit=0", {}, format="json").status_code == 400
    # a preview is allowed on read-only mirrors and for every signed-in user
    assert as_user().post(url("placement-whatif", frontend.pk), {}, format="json").status_code == 200


def test_argocd_configmap_download(api: APIClient) -> None:
    hub = HubFactory(name="east", publish_namespace="placements")
    response = api.get(url("hub-argocd-configmap", hub.pk))
    assert response.status_code == 200 and response["Content-Type"] == "application/yaml"
    assert 'filename="argocd-placementdecisions-east.yaml"' in response["Content-Disposition"]
    configmap = yaml.safe_load(response.content)
    assert configmap["kind"] == "ConfigMap"
    assert configmap["data"]["statusListKey"] == "decisions"
    assert configmap["data"]["matchKey"] == "clusterName"
