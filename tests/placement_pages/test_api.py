"""Placements API: CRUD through the service, read-only mirrors, permissions, what-if, decisions, history."""

import pytest
import yaml
from django.contrib.auth.models import Permission, User
from django.urls import reverse
from rest_framework.test import APIClient

from inventory.models import AuditEntry, Hub
from placement import access, explanations
from placement.models import DecisionChange, Owner, Placement
from tests.factories import HubFactory, NamespaceRoleFactory, PlacementFactory, UserFactory, placement_role
from tests.placement_pages.access_support import VIEW, api_for, grant
from tests.placement_pages.explanations import OCM_EXPLANATION

pytestmark = pytest.mark.django_db

MEMORY = {"scoreCoordinate": {"type": "BuiltIn", "builtIn": "ResourceAllocatableMemory"}, "weight": 2}


@pytest.fixture
def api(tasks_in_process: None, ops: User) -> APIClient:
    """As ops, admin of hub manifests' placements in namespaces web and ml and of its CRPs; follow-up
    tasks (timed runs, publishing) run in-process."""
    return api_for(ops)


def url(name: str, *args: object) -> str:
    return reverse(f"placement-api:{name}", args=args)


def create(api: APIClient, **fields: object):
    body = {
        "hub": "manifests",
        "kind": "Placement",
        "namespace": "web",
        "name": "shop",
        "spec": {"clusterSets": ["prod-us", "prod-eu"], "numberOfClusters": 2},
    } | fields
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
    spec = {
        "clusterSets": ["prod-us", "prod-eu"],
        "numberOfClusters": 1,
        "prioritizerPolicy": {"mode": "Additive", "configurations": [MEMORY]},
    }
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


def test_viewers_read_but_may_not_add_change_or_delete(api: APIClient, manifests: Hub) -> None:
    """The view role on the sets bound to namespace web shows its placements; changing one needs the admin
    role: 403 with the reason (audited), and nothing changes."""
    owned = Placement.objects.get(pk=create(api).json()["id"])
    viewer = api_for(placement_role(manifests, ("web",), role=VIEW, username="viewer"))
    assert viewer.get(url("placement-detail", owned.pk)).status_code == 200
    assert "shop" in {item["name"] for item in viewer.get(url("placement-list")).json()["results"]}
    refused = create(viewer, name="by-viewer")
    assert refused.status_code == 403 and refused.json()["detail"] == access.ADMIN_NEEDED
    spec = {"clusterSets": ["prod-us"], "numberOfClusters": 1}
    for response in (
        viewer.patch(url("placement-detail", owned.pk), {"spec": spec}, format="json"),
        viewer.delete(url("placement-detail", owned.pk)),
    ):
        assert response.status_code == 403 and response.json()["detail"] == access.CHANGE_DENIED
    denied = AuditEntry.objects.filter(actor_name="viewer", outcome=AuditEntry.Outcome.DENIED)
    assert sorted(denied.values_list("action", flat=True)) == ["placement.delete", "placement.spec"]
    assert list(Placement.objects.filter(owner=Owner.DASHBOARD).values_list("name", flat=True)) == ["shop"]
    assert Placement.objects.get(pk=owned.pk).spec == owned.spec


def test_staff_and_model_permissions_alone_see_and_change_nothing(api: APIClient, manifests: Hub) -> None:
    owned = Placement.objects.get(pk=create(api).json()["id"])
    staff = UserFactory(username="staff", is_staff=True)
    codenames = ("add_placement", "change_placement", "delete_placement")
    staff.user_permissions.add(*Permission.objects.filter(codename__in=codenames))
    client = api_for(staff)
    assert create(client, name="by-permission").status_code == 403
    assert client.get(url("placement-list")).json()["count"] == 0
    detail = url("placement-detail", owned.pk)
    for response in (
        client.get(detail),
        client.patch(detail, {"spec": {"numberOfClusters": 1}}, format="json"),
        client.delete(detail),
        client.post(url("placement-whatif", owned.pk), {}, format="json"),
    ):
        assert response.status_code == 404
    assert list(Placement.objects.filter(owner=Owner.DASHBOARD).values_list("name", flat=True)) == ["shop"]
    assert Placement.objects.get(pk=owned.pk).spec == owned.spec


def test_admins_of_a_set_bound_elsewhere_may_not_add_or_change_placements_of_namespace_web(
    api: APIClient, manifests: Hub
) -> None:
    """Admin of set global, bound to namespaces ml and platform: not to web, whose placements stay hidden."""
    owned = Placement.objects.get(pk=create(api).json()["id"])
    ml_admin = api_for(placement_role(manifests, ("ml",), username="ml-admin"))
    refused = create(ml_admin, name="by-ml-admin")
    assert refused.status_code == 403 and refused.json()["detail"] == access.ADD_DENIED
    assert AuditEntry.objects.get(actor_name="ml-admin").outcome == AuditEntry.Outcome.DENIED
    detail = url("placement-detail", owned.pk)
    assert ml_admin.patch(detail, {"spec": {"numberOfClusters": 1}}, format="json").status_code == 404
    assert ml_admin.delete(detail).status_code == 404
    assert list(Placement.objects.filter(owner=Owner.DASHBOARD).values_list("name", flat=True)) == ["shop"]
    # in its own namespace the same user may
    mine = create(ml_admin, namespace="ml", name="by-ml-admin", spec={"clusterSets": ["global"]})
    assert mine.status_code == 201


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


def test_detail_answers_the_stored_columns_as_report_rows(api: APIClient, ops: User) -> None:
    columnar = {**OCM_EXPLANATION, "clusters": explanations.record_of(OCM_EXPLANATION).columns_as_lists()}
    placement = PlacementFactory(explanation=columnar)
    grant(ops, placement)
    explanation = api.get(url("placement-detail", placement.pk)).json()["explanation"]
    assert explanation == OCM_EXPLANATION


def test_whatif_answers_the_preview_and_400_naming_the_field(api: APIClient, manifests: Hub) -> None:
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
    # a preview is allowed on read-only mirrors and for every user who sees the placement
    viewer = api_for(placement_role(manifests, ("web",), role=VIEW, username="viewer"))
    assert viewer.post(url("placement-whatif", frontend.pk), {}, format="json").status_code == 200
    outsider = api_for(placement_role(manifests, ("ml",), role=VIEW, username="outsider"))
    assert outsider.post(url("placement-whatif", frontend.pk), {}, format="json").status_code == 404


def test_argocd_configmap_download(api: APIClient, ops: User) -> None:
    hub = HubFactory(name="east", publish_namespace="placements")
    # only for those who hold a role on the hub: it names the hub's publish namespace
    assert api.get(url("hub-argocd-configmap", hub.pk)).status_code == 404
    NamespaceRoleFactory(hub=hub, namespace="web", user=ops)
    response = api.get(url("hub-argocd-configmap", hub.pk))
    assert response.status_code == 200 and response["Content-Type"] == "application/yaml"
    assert 'filename="argocd-placementdecisions-east.yaml"' in response["Content-Disposition"]
    configmap = yaml.safe_load(response.content)
    assert configmap["kind"] == "ConfigMap"
    assert configmap["data"]["statusListKey"] == "decisions"
    assert configmap["data"]["matchKey"] == "clusterName"


@pytest.mark.parametrize(
    "body",
    [{"hub": "manifests\x00"}, {"spec": {"clusterSets": ["prod\x00us"]}}, {"spec": {"a\x00": 1}}],
    ids=["hub name", "spec value", "spec key"],
)
def test_nul_characters_are_a_field_error_not_a_database_failure(api: APIClient, body: dict) -> None:
    """PostgreSQL cannot store NUL in text or jsonb; the API refuses it with 400 on the field."""
    fields = {"kind": "Placement", "hub": "manifests", "namespace": "web", "name": "nul", "spec": {}, **body}
    response = api.post(url("placement-list"), fields, format="json")
    assert response.status_code == 400
    assert response.json() == {next(iter(body)): ["NUL characters (\\u0000) are not allowed."]}
    assert not Placement.objects.filter(name="nul").exists()
