"""The placement forms: new placement, edit spec, upload manifests; and `apply` sharing the upload's path."""

from pathlib import Path
from unittest import mock

import pytest
from django.contrib.auth.models import Permission, User
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import call_command
from django.test import Client
from django.urls import reverse

from inventory.models import Hub
from placement import importing, service
from placement.models import Owner, Placement
from tests.factories import PASSWORD, UserFactory
from tests.placement.test_commands_apply import PLACEMENT as MANIFESTS

pytestmark = pytest.mark.django_db

OCM_SPEC = """\
clusterSets: [prod-us, prod-eu]
numberOfClusters: 2
prioritizerPolicy:
  mode: Additive
  configurations:
    - scoreCoordinate: {type: BuiltIn, builtIn: ResourceAllocatableMemory}
      weight: 2
"""
FLEET_SPEC = """\
resourceSelectors:
  - {group: "", version: v1, kind: Namespace, name: web}
policy:
  placementType: PickN
  numberOfClusters: 1
"""


@pytest.fixture(autouse=True)
def fresh_snapshots(tasks_in_process: None) -> None:
    """Rescheduling runs in the test; snapshots are cached per process, and each test builds its rows."""
    service.forget_snapshots()


@pytest.fixture
def hub(demo_fleet: None) -> Hub:
    return Hub.objects.get(name="manifests")


@pytest.fixture
def staff(client: Client) -> User:
    user = UserFactory(username="ops", is_staff=True)
    client.force_login(user)
    return user


def new_placement(client: Client, hub: Hub, **fields: str):
    data = {"hub": hub.pk, "kind": "Placement", "namespace": "web", "name": "shop", "spec": OCM_SPEC}
    return client.post(reverse("placement:placement-create"), data | fields)


def upload(client: Client, hub: Hub, text: str, name: str = "shop.yaml"):
    file = SimpleUploadedFile(name, text.encode(), content_type="application/yaml")
    return client.post(reverse("placement:placement-upload"), {"hub": hub.pk, "manifests": file})


def test_new_page_starts_from_an_example_of_the_chosen_kind(client: Client, staff: User, hub: Hub) -> None:
    page = client.get(reverse("placement:placement-create")).content.decode()
    assert "prioritizerPolicy" in page and "kind: Placement" in page and 'id="manifest-yaml"' in page
    fleet = client.get(reverse("placement:placement-create"), {"kind": "ClusterResourcePlacement"})
    assert "resourceSelectors" in fleet.content.decode()
    assert not Placement.objects.filter(owner=Owner.DASHBOARD).exists()  # GET writes nothing


def test_create_an_ocm_placement_lands_on_its_page_with_decisions(
    client: Client, staff: User, hub: Hub
) -> None:
    response = new_placement(client, hub)
    placement = Placement.objects.get(hub=hub, namespace="web", name="shop")
    assert response.status_code == 302
    assert response.url == reverse("placement:placement-detail", args=[placement.pk])
    assert (placement.owner, placement.spec["numberOfClusters"]) == (Owner.DASHBOARD, 2)
    page = client.get(response.url).content.decode()
    assert '<dd id="selected-count">2 / 2</dd>' in page
    created = placement.history.get(trigger="created", spec_after__isnull=False)
    assert created.actor == staff


def test_create_a_fleet_crp(client: Client, staff: User, hub: Hub) -> None:
    fields = {"kind": "ClusterResourcePlacement", "namespace": "", "name": "api-app", "spec": FLEET_SPEC}
    response = new_placement(client, hub, **fields)
    crp = Placement.objects.get(hub=hub, kind=Placement.Kind.CLUSTER_RESOURCE_PLACEMENT, name="api-app")
    assert response.status_code == 302 and crp.namespace == ""
    assert crp.spec["policy"] == {"placementType": "PickN", "numberOfClusters": 1}
    # scheduled at once (the demo MemberClusters' heartbeats are old, so none is picked today)
    assert crp.last_scheduled_at is not None and "selected" in crp.explanation


@pytest.mark.parametrize(
    ("fields", "field", "message"),
    [
        ({"spec": OCM_SPEC.replace("weight: 2", "weight: 11")}, "spec",
         "spec.prioritizerPolicy.configurations[0].weight: Invalid value: 11"),
        ({"spec": "numberOfClusters: [1"}, "spec", "spec: invalid YAML"),
        ({"spec": "- a list"}, "spec", "spec: expected a mapping"),
        ({"namespace": ""}, "namespace", "metadata.namespace: Required value"),
        ({"name": "Not_A_Name"}, "name", 'metadata.name: Invalid value: "Not_A_Name": a lowercase RFC 1123'),
    ],
)
def test_errors_name_the_field_and_keep_the_input(
    client: Client, staff: User, hub: Hub, fields: dict[str, str], field: str, message: str
) -> None:
    response = new_placement(client, hub, **fields)
    assert response.status_code == 200
    errors = response.context["form"].errors[field]
    assert any(error.startswith(message) for error in errors), errors
    page = response.content.decode()
    assert f'id="{field}-errors"' in page
    typed = response.context["form"]["spec"].value()
    assert typed == fields.get("spec", OCM_SPEC)
    assert not Placement.objects.filter(owner=Owner.DASHBOARD).exists()


def test_a_taken_name_is_a_name_error(client: Client, staff: User, hub: Hub) -> None:
    new_placement(client, hub)
    response = new_placement(client, hub)
    assert "metadata.name: Placement web/shop already exists" in response.context["form"].errors["name"][0]


def test_non_staff_users_get_403_and_nothing_is_written(client: Client, hub: Hub) -> None:
    placement = service.create_placement(
        kind="Placement", hub=hub, namespace="web", name="shop", spec={"numberOfClusters": 1}, actor="test"
    )
    client.force_login(UserFactory(username="viewer"))
    assert client.get(reverse("placement:placement-list")).content.decode().count("New placement") == 0
    for response in (
        client.get(reverse("placement:placement-create")),
        new_placement(client, hub, name="other"),
        upload(client, hub, MANIFESTS.format(number=2).replace("shop", "other")),
        client.post(reverse("placement:placement-edit", args=[placement.pk]), {"spec": "{}"}),
    ):
        assert response.status_code == 403
        assert "permission" in response.content.decode()
    assert list(Placement.objects.filter(owner=Owner.DASHBOARD).values_list("name", flat=True)) == ["shop"]
    placement.refresh_from_db()
    assert placement.spec == {"numberOfClusters": 1}


def test_the_add_permission_is_enough_to_create(client: Client, hub: Hub) -> None:
    user = UserFactory(username="adder")
    user.user_permissions.add(Permission.objects.get(codename="add_placement"))
    client.force_login(user)
    assert "New placement" in client.get(reverse("placement:placement-list")).content.decode()
    assert new_placement(client, hub).status_code == 302


def test_posts_need_the_csrf_token(hub: Hub) -> None:
    client = Client(enforce_csrf_checks=True)
    client.login(username=UserFactory(username="ops", is_staff=True).username, password=PASSWORD)
    assert new_placement(client, hub).status_code == 403
    assert not Placement.objects.filter(owner=Owner.DASHBOARD).exists()


def test_edit_spec_saves_reschedules_and_records_the_actor(client: Client, staff: User, hub: Hub) -> None:
    new_placement(client, hub)
    placement = Placement.objects.get(hub=hub, name="shop")
    detail = client.get(reverse("placement:placement-detail", args=[placement.pk])).content.decode()
    edit_url = reverse("placement:placement-edit", args=[placement.pk])
    assert f'href="{edit_url}"' in detail
    assert "numberOfClusters: 2" in client.get(edit_url).content.decode()
    response = client.post(edit_url, {"spec": OCM_SPEC.replace("numberOfClusters: 2", "numberOfClusters: 3")})
    assert response.status_code == 302
    placement.refresh_from_db()
    assert (placement.spec["numberOfClusters"], placement.status["numberOfSelectedClusters"]) == (3, 3)
    entry = placement.history.get(trigger="spec edited", spec_after__isnull=False)
    assert (entry.actor, entry.spec_before["numberOfClusters"], entry.spec_after["numberOfClusters"]) == (
        staff, 2, 3
    )


def test_edit_errors_keep_the_typed_spec(client: Client, staff: User, hub: Hub) -> None:
    new_placement(client, hub)
    placement = Placement.objects.get(hub=hub, name="shop")
    typed = OCM_SPEC.replace("weight: 2", "weight: -11")
    response = client.post(reverse("placement:placement-edit", args=[placement.pk]), {"spec": typed})
    assert response.status_code == 200
    [error] = response.context["form"].errors["spec"]
    assert error.startswith("spec.prioritizerPolicy.configurations[0].weight: ")
    assert response.context["form"]["spec"].value() == typed
    placement.refresh_from_db()
    assert placement.spec["prioritizerPolicy"]["configurations"][0]["weight"] == 2


def test_hub_owned_placements_are_read_only(client: Client, staff: User, hub: Hub) -> None:
    frontend = Placement.objects.get(hub=hub, name="frontend", owner=Owner.HUB)
    detail = client.get(reverse("placement:placement-detail", args=[frontend.pk])).content.decode()
    assert "Edit spec" not in detail
    edit_url = reverse("placement:placement-edit", args=[frontend.pk])
    for response in (client.get(edit_url), client.post(edit_url, {"spec": "numberOfClusters: 1"})):
        assert response.status_code == 403
        assert "read-only mirror of hub manifests" in response.content.decode()
    spec = frontend.spec
    frontend.refresh_from_db()
    assert frontend.spec == spec


def test_upload_creates_then_reports_unchanged_and_configured(client: Client, staff: User, hub: Hub) -> None:
    response = upload(client, hub, MANIFESTS.format(number=2))
    assert response.status_code == 200
    [applied] = response.context["report"].applied
    assert (str(applied.placement), applied.verb, applied.selected) == ("web/shop", "created", 2)
    page = response.content.decode()
    assert "kind ConfigMap (apiVersion v1) is not used by the scheduler; ignored" in page
    assert upload(client, hub, MANIFESTS.format(number=2)).context["report"].applied[0].verb == "unchanged"
    assert upload(client, hub, MANIFESTS.format(number=3)).context["report"].applied[0].verb == "configured"
    placement = Placement.objects.get(hub=hub, name="shop")
    assert placement.history.first().trigger == "applied by ops"


def test_a_bad_upload_writes_nothing(client: Client, staff: User, hub: Hub) -> None:
    text = MANIFESTS.format(number=2) + "---\n" + MANIFESTS.format(number=-1).replace("shop", "other")
    response = upload(client, hub, text, name="two.yaml")
    assert response.status_code == 400
    assert "two.yaml: document 3: spec.numberOfClusters: Invalid value: -1" in response.content.decode()
    assert "Nothing was applied" in response.content.decode()
    assert not Placement.objects.filter(owner=Owner.DASHBOARD).exists()


def test_an_unreadable_upload_is_a_field_error(client: Client, staff: User, hub: Hub) -> None:
    response = upload(client, hub, "", name="empty.json")
    assert response.status_code == 200 and "manifests" in response.context["form"].errors
    file = SimpleUploadedFile("latin.yaml", "kind: Placement # é".encode("latin-1"))
    response = client.post(reverse("placement:placement-upload"), {"hub": hub.pk, "manifests": file})
    assert "latin.yaml: cannot read" in response.context["form"].errors["manifests"][0]


def test_the_apply_command_goes_through_the_same_function(
    client: Client, staff: User, hub: Hub, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    upload(client, hub, MANIFESTS.format(number=2))
    path = tmp_path / "shop.yaml"
    path.write_text(MANIFESTS.format(number=2))
    with mock.patch(
        "placement.management.commands.apply.apply_manifests", wraps=importing.apply_manifests
    ) as shared:
        call_command("apply", "-f", str(path), "--hub", "manifests")
    assert shared.call_count == 1
    assert "Placement web/shop unchanged on hub manifests (2 selected)" in capsys.readouterr().out
