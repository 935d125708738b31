"""The placement forms: new placement, edit spec, upload manifests; and `apply` sharing the upload's path."""

from pathlib import Path
from unittest import mock

import pytest
from django.contrib.auth.models import Permission, User
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import call_command
from django.test import Client
from django.urls import reverse

from inventory.models import AuditEntry, Hub
from placement import access, importing, service
from placement.models import Owner, Placement
from tests.factories import UserFactory, placement_role
from tests.placement.test_commands_apply import PLACEMENT as MANIFESTS
from tests.placement_pages.access_support import VIEW, signed_in

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
def hub(manifests: Hub) -> Hub:
    return manifests


@pytest.fixture
def admin(client: Client, ops: User) -> User:
    """Ops signed in: admin of the hub's placements in namespaces web and ml and of its CRPs."""
    client.force_login(ops)
    return ops


def new_placement(client: Client, hub: Hub, **fields: str):
    data = {"hub": hub.pk, "kind": "Placement", "namespace": "web", "name": "shop", "spec": OCM_SPEC}
    return client.post(reverse("placement:placement-create"), data | fields)


def upload(client: Client, hub: Hub, text: str, name: str = "shop.yaml"):
    file = SimpleUploadedFile(name, text.encode(), content_type="application/yaml")
    return client.post(reverse("placement:placement-upload"), {"hub": hub.pk, "manifests": file})


def test_new_page_starts_from_an_example_of_the_chosen_kind(client: Client, admin: User, hub: Hub) -> None:
    page = client.get(reverse("placement:placement-create")).content.decode()
    assert "prioritizerPolicy" in page and "kind: Placement" in page and 'id="manifest-yaml"' in page
    fleet = client.get(reverse("placement:placement-create"), {"kind": "ClusterResourcePlacement"})
    assert "resourceSelectors" in fleet.content.decode()
    assert not Placement.objects.filter(owner=Owner.DASHBOARD).exists()  # GET writes nothing


def test_create_an_ocm_placement_lands_on_its_page_with_decisions(
    client: Client, admin: User, hub: Hub
) -> None:
    response = new_placement(client, hub)
    placement = Placement.objects.get(hub=hub, namespace="web", name="shop")
    assert response.status_code == 302
    assert response.url == reverse("placement:placement-detail", args=[placement.pk])
    assert (placement.owner, placement.spec["numberOfClusters"]) == (Owner.DASHBOARD, 2)
    page = client.get(response.url).content.decode()
    assert '<dd id="selected-count">2 / 2</dd>' in page
    created = placement.history.get(trigger="created", spec_after__isnull=False)
    assert created.actor == admin


def test_create_a_fleet_crp(client: Client, admin: User, hub: Hub) -> None:
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
        (
            {"spec": OCM_SPEC.replace("weight: 2", "weight: 11")},
            "spec",
            "spec.prioritizerPolicy.configurations[0].weight: Invalid value: 11",
        ),
        ({"spec": "numberOfClusters: [1"}, "spec", "spec: invalid YAML"),
        ({"spec": "- a list"}, "spec", "spec: expected a mapping"),
        ({"namespace": ""}, "namespace", "metadata.namespace: Required value"),
        ({"name": "Not_A_Name"}, "name", 'metadata.name: Invalid value: "Not_A_Name": a lowercase RFC 1123'),
    ],
)
def test_errors_name_the_field_and_keep_the_input(
    client: Client, admin: User, hub: Hub, fields: dict[str, str], field: str, message: str
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


def test_a_taken_name_is_a_name_error(client: Client, admin: User, hub: Hub) -> None:
    new_placement(client, hub)
    response = new_placement(client, hub)
    assert "metadata.name: Placement web/shop already exists" in response.context["form"].errors["name"][0]


def shop(hub: Hub) -> Placement:
    """Placement web/shop, added by a command (no user)."""
    return service.create_placement(
        kind="Placement", hub=hub, namespace="web", name="shop", spec={"numberOfClusters": 1}, actor="test"
    )


def nothing_written(placement: Placement) -> None:
    assert list(Placement.objects.filter(owner=Owner.DASHBOARD).values_list("name", flat=True)) == ["shop"]
    placement.refresh_from_db()
    assert placement.spec == {"numberOfClusters": 1}


def test_viewers_get_403_with_the_reason_and_nothing_is_written(client: Client, hub: Hub) -> None:
    """The view role on the sets bound to namespace web shows its placements, not the buttons."""
    placement = shop(hub)
    signed_in(client, placement_role(hub, ("web",), role=VIEW, username="viewer"))
    assert client.get(reverse("placement:placement-list")).content.decode().count("New placement") == 0
    detail = client.get(reverse("placement:placement-detail", args=[placement.pk]))
    assert detail.status_code == 200 and "Edit spec" not in detail.content.decode()
    edit_url = reverse("placement:placement-edit", args=[placement.pk])
    for response, reason in (
        (client.get(reverse("placement:placement-create")), access.ADMIN_NEEDED),
        (new_placement(client, hub, name="other"), access.ADMIN_NEEDED),
        (upload(client, hub, MANIFESTS.format(number=2).replace("shop", "other")), access.ADMIN_NEEDED),
        (client.get(edit_url), access.CHANGE_DENIED),
        (client.post(edit_url, {"spec": "{}"}), access.CHANGE_DENIED),
    ):
        assert response.status_code == 403
        assert reason in response.content.decode()
    # the attempted change is audited (opening the form is not)
    entry = AuditEntry.objects.get(actor_name="viewer")
    assert (entry.action, entry.target, entry.outcome) == ("placement.spec", "web/shop", "denied")
    nothing_written(placement)


def test_staff_and_model_permissions_alone_are_refused(client: Client, hub: Hub) -> None:
    placement = shop(hub)
    user = UserFactory(username="staff", is_staff=True)
    user.user_permissions.add(*Permission.objects.filter(codename__in=("add_placement", "change_placement")))
    signed_in(client, user)
    assert "New placement" not in client.get(reverse("placement:placement-list")).content.decode()
    for response in (
        client.get(reverse("placement:placement-create")),
        new_placement(client, hub, name="other"),
        upload(client, hub, MANIFESTS.format(number=2).replace("shop", "other")),
    ):
        assert response.status_code == 403 and access.ADMIN_NEEDED in response.content.decode()
    # the placement is not even visible
    edit_url = reverse("placement:placement-edit", args=[placement.pk])
    assert client.post(edit_url, {"spec": "{}"}).status_code == 404
    nothing_written(placement)


def test_admins_of_a_set_bound_elsewhere_may_not_add_to_or_change_namespace_web(
    client: Client, hub: Hub
) -> None:
    """Admin of set global, bound to namespaces ml and platform: the forms open, web stays out of reach."""
    placement = shop(hub)
    signed_in(client, placement_role(hub, ("ml",), username="ml-admin"))
    assert client.get(reverse("placement:placement-create")).status_code == 200
    refused = new_placement(client, hub, name="other")
    assert refused.status_code == 403 and access.ADD_DENIED in refused.content.decode()
    entry = AuditEntry.objects.get(actor_name="ml-admin")
    assert (entry.action, entry.target, entry.outcome) == ("placement.create", "web/other", "denied")
    edit_url = reverse("placement:placement-edit", args=[placement.pk])
    for response in (
        client.get(reverse("placement:placement-detail", args=[placement.pk])),
        client.get(edit_url),
        client.post(edit_url, {"spec": "{}"}),
    ):
        assert response.status_code == 404
    nothing_written(placement)


def test_the_admin_role_on_a_set_bound_to_the_namespace_is_enough_to_create(client: Client, hub: Hub) -> None:
    signed_in(client, placement_role(hub, ("web",), username="web-admin"))
    assert "New placement" in client.get(reverse("placement:placement-list")).content.decode()
    assert new_placement(client, hub).status_code == 302
    entry = AuditEntry.objects.get(actor_name="web-admin")
    assert (entry.action, entry.target, entry.outcome) == ("placement.create", "web/shop", "ok")


def test_posts_need_the_csrf_token(ops: User, hub: Hub) -> None:
    client = Client(enforce_csrf_checks=True)
    client.force_login(ops)  # Client.login authenticates without a request, which django-axes refuses
    response = new_placement(client, hub)
    assert response.status_code == 403 and "CSRF" in response.content.decode()
    assert not Placement.objects.filter(owner=Owner.DASHBOARD).exists()


def test_edit_spec_saves_reschedules_and_records_the_actor(client: Client, admin: User, hub: Hub) -> None:
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
        admin,
        2,
        3,
    )


def test_edit_errors_keep_the_typed_spec(client: Client, admin: User, hub: Hub) -> None:
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


def test_hub_owned_placements_are_read_only(client: Client, admin: User, hub: Hub) -> None:
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


def test_upload_creates_then_reports_unchanged_and_configured(client: Client, admin: User, hub: Hub) -> None:
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


def test_a_bad_upload_writes_nothing(client: Client, admin: User, hub: Hub) -> None:
    text = MANIFESTS.format(number=2) + "---\n" + MANIFESTS.format(number=-1).replace("shop", "other")
    response = upload(client, hub, text, name="two.yaml")
    assert response.status_code == 400
    assert "two.yaml: document 3: spec.numberOfClusters: Invalid value: -1" in response.content.decode()
    assert "Nothing was applied" in response.content.decode()
    assert not Placement.objects.filter(owner=Owner.DASHBOARD).exists()


def test_an_upload_names_each_placement_the_user_may_not_add_or_change_and_writes_nothing(
    client: Client, hub: Hub
) -> None:
    """Admin of set global (bound to ml): web/shop exists and web/cart would be new, both out of reach
    (web/shop is hidden from them, so it is refused as a new placement would be, not revealed); ml/cart
    alone would be allowed, but nothing is applied while a document is refused."""
    placement = shop(hub)
    signed_in(client, placement_role(hub, ("ml",), username="ml-admin"))
    web_cart = MANIFESTS.format(number=2).replace("shop", "cart")
    ml_cart = web_cart.replace("namespace: web", "namespace: ml")
    text = "---\n".join((MANIFESTS.format(number=2), web_cart, ml_cart))
    response = upload(client, hub, text, name="three.yaml")
    assert response.status_code == 403  # the roles refuse, the documents themselves are valid
    assert response.context["report"].problems == [
        f"three.yaml: document 1: metadata.namespace: {access.ADD_DENIED}",
        f"three.yaml: document 3: metadata.namespace: {access.ADD_DENIED}",
    ]
    assert "Nothing was applied" in response.content.decode()
    nothing_written(placement)


def test_an_upload_names_a_placement_the_user_may_see_but_not_change(client: Client, hub: Hub) -> None:
    """Admin of the set bound to ml, viewer of those bound to web: web/shop is shown to them, not theirs."""
    placement = shop(hub)
    ml_admin = placement_role(hub, ("ml",), username="ml-admin")
    signed_in(client, placement_role(hub, ("web",), role=VIEW, user=ml_admin))
    response = upload(client, hub, MANIFESTS.format(number=2), name="one.yaml")
    assert response.status_code == 403
    problems = response.context["report"].problems
    assert problems == [f"one.yaml: document 1: metadata.name: {access.CHANGE_DENIED}"]
    nothing_written(placement)


def test_an_unreadable_upload_is_a_field_error(client: Client, admin: User, hub: Hub) -> None:
    response = upload(client, hub, "", name="empty.json")
    assert response.status_code == 400 and "manifests" in response.context["form"].errors
    file = SimpleUploadedFile("latin.yaml", "kind: Placement # é".encode("latin-1"))
    response = client.post(reverse("placement:placement-upload"), {"hub": hub.pk, "manifests": file})
    assert "latin.yaml: cannot read" in response.context["form"].errors["manifests"][0]


def test_the_apply_command_goes_through_the_same_function(
    client: Client, admin: User, hub: Hub, tmp_path: Path, capsys: pytest.CaptureFixture[str]
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


def test_nul_characters_in_typed_or_uploaded_manifests_are_refused_before_the_database(
    client: Client, admin: User, hub: Hub
) -> None:
    """PostgreSQL cannot store NUL; a YAML escape or a JSON \\u0000 would otherwise reach it."""
    response = new_placement(client, hub, spec='clusterSets: ["prod\\0us"]\n')
    assert "NUL characters (\\u0000) are not allowed." in response.context["form"].errors["spec"][0]
    as_json = (
        '{"apiVersion": "cluster.open-cluster-management.io/v1beta1", "kind": "Placement", '
        '"metadata": {"name": "nul", "namespace": "web"}, "spec": {"clusterSets": ["a\\u0000"]}}'
    )
    response = upload(client, hub, as_json, name="nul.json")
    assert response.status_code == 400
    assert response.context["report"].problems == [
        "nul.json: document 1: invalid JSON: NUL characters (\\u0000) are not allowed."
    ]
    assert not Placement.objects.filter(owner=Owner.DASHBOARD).exists()
