"""The toleration editor on the placement page: loaded into its placeholder by htmx, preview (decision diff),
save (redirect without htmx), errors under the fields, read-only for hub-owned placements; 403 for users
with the view role alone, 404 for those without a role on a set bound to the placement's namespace."""

import pytest
from django.contrib.auth.models import Permission
from django.test import Client
from django.urls import reverse

from inventory.models import AuditEntry, Hub
from placement import tolerations
from placement.models import Placement
from tests.editors import dashboard_copy, rows_data
from tests.factories import UserFactory, placement_role
from tests.placement_pages.access_support import VIEW, elsewhere_admin

pytestmark = pytest.mark.django_db

HTMX = {"HTTP_HX_REQUEST": "true"}
# rows as a browser posts them: every field, blank ones empty
GPU = {
    "key": "nvidia.com/gpu",
    "operator": "Exists",
    "value": "",
    "effect": "NoSelect",
    "tolerationSeconds": "",
}
UNREACHABLE = {
    "key": "cluster.open-cluster-management.io/unreachable",
    "operator": "Exists",
    "value": "",
    "effect": "",
    "tolerationSeconds": "600",
}


@pytest.fixture
def ops_client(client: Client, ops) -> Client:
    """As ops, admin of the set bound to namespace ml (gpu-inference's and gpu-copy's)."""
    client.force_login(ops)
    return client


@pytest.fixture
def gpu_copy(demo_fleet, ops) -> Placement:
    """A dashboard-owned copy of gpu-inference that takes every feasible cluster."""
    return dashboard_copy("gpu-inference", "gpu-copy", ops, drop=("numberOfClusters",))


def url(placement: Placement) -> str:
    return reverse("placement:placement-tolerations", args=[placement.pk])


def test_the_tolerations_tab_shows_the_editor_and_htmx_gets_its_section(ops_client: Client, gpu_copy) -> None:
    page = ops_client.get(url(gpu_copy)).content.decode()
    assert 'id="tab-tolerations" aria-current="page"' in page and 'id="toleration-editor"' in page
    section = ops_client.get(url(gpu_copy), **HTMX).content.decode()
    assert "<html" not in section and 'id="toleration-editor"' in section
    assert 'value="nvidia.com/gpu"' in section and 'value="600"' in section
    assert 'name="tolerations-TOTAL_FORMS" value="3"' in section


def test_preview_shows_the_decision_diff_and_saves_nothing(ops_client: Client, gpu_copy) -> None:
    data = rows_data("tolerations", [{**GPU, "DELETE": "on"}, UNREACHABLE], initial=2, action="preview")
    response = ops_client.post(url(gpu_copy), data, **HTMX)
    html = response.content.decode()
    assert response.status_code == 200
    removed = '<ul id="toleration-removed"><li>prod-usw2-gpu: <span class="reason">taint nvidia.com/gpu=a100'
    assert removed in html
    gpu_copy.refresh_from_db()
    assert len(tolerations.current(gpu_copy)) == 2


def test_save_applies_and_redirects_without_htmx(ops_client: Client, gpu_copy) -> None:
    data = rows_data("tolerations", [{**GPU, "DELETE": "on"}, UNREACHABLE], initial=2, action="save")
    response = ops_client.post(url(gpu_copy), data)
    assert response.status_code == 302
    assert response["Location"] == url(gpu_copy)  # the Tolerations tab
    gpu_copy.refresh_from_db()
    assert gpu_copy.spec["tolerations"] == [
        {"key": UNREACHABLE["key"], "operator": "Exists", "tolerationSeconds": 600}
    ]
    assert AuditEntry.objects.get(action="placement.tolerations").actor_name == "ops"
    html = ops_client.post(
        url(gpu_copy), rows_data("tolerations", [UNREACHABLE], initial=1, action="save"), **HTMX
    ).content.decode()
    assert "saved; the placement was rescheduled." in html  # the message, swapped into #notices


def test_invalid_rows_answer_400_with_upstream_messages(ops_client: Client, gpu_copy) -> None:
    rows = [
        GPU,
        {**UNREACHABLE, "key": "", "operator": "Equal"},
        {"key": "x", "operator": "Equal", "effect": "", "tolerationSeconds": "soon"},
    ]
    data = rows_data("tolerations", rows, initial=2, action="save")
    response = ops_client.post(url(gpu_copy), data, **HTMX)
    html = response.content.decode()
    assert response.status_code == 400
    assert 'id="id_tolerations-2-tolerationSeconds_error"><li>Enter a whole number.' in html
    rows[2]["tolerationSeconds"] = ""
    html = ops_client.post(
        url(gpu_copy), rows_data("tolerations", rows, initial=2, action="save"), **HTMX
    ).content.decode()
    assert 'id="tolerations-1-errors"><li>If the key is empty, operator must be Exists.' in html
    gpu_copy.refresh_from_db()
    assert len(tolerations.current(gpu_copy)) == 2


def test_hub_owned_placements_are_read_only(ops_client: Client, demo_fleet) -> None:
    mirror = Placement.objects.get(name="gpu-inference")
    html = ops_client.get(url(mirror), **HTMX).content.decode()
    assert 'id="toleration-editor"' not in html and "nvidia.com/gpu" in html
    assert "Read-only: this placement belongs to hub manifests" in html
    response = ops_client.post(url(mirror), rows_data("tolerations", [], initial=2, action="save"), **HTMX)
    assert response.status_code == 403
    mirror.refresh_from_db()
    assert len(tolerations.current(mirror)) == 2


def test_viewers_get_403_on_every_button(client: Client, gpu_copy, manifests: Hub) -> None:
    client.force_login(placement_role(manifests, ("ml",), role=VIEW, username="reader"))
    html = client.get(url(gpu_copy), **HTMX).content.decode()
    assert 'id="toleration-editor"' not in html and "nvidia.com/gpu" in html  # what they may not edit
    for action in ("add", "remove-0", "preview", "save"):
        response = client.post(url(gpu_copy), rows_data("tolerations", [], initial=2, action=action), **HTMX)
        assert response.status_code == 403
    gpu_copy.refresh_from_db()
    assert len(tolerations.current(gpu_copy)) == 2


def test_users_who_do_not_see_the_placement_get_404(client: Client, gpu_copy, manifests: Hub) -> None:
    """Staff with the model permission, an admin of the sets bound to web and an admin of another hub's
    set: none holds a role on set global, bound to namespace ml."""
    staff = UserFactory(username="staff", is_staff=True)
    staff.user_permissions.add(Permission.objects.get(codename="change_placement"))
    web_admin = placement_role(manifests, ("web",), username="web-admin")
    data = rows_data("tolerations", [], initial=2, action="save")
    for outsider in (staff, web_admin, elsewhere_admin(username="elsewhere")):
        client.force_login(outsider)
        assert client.get(url(gpu_copy), **HTMX).status_code == 404
        assert client.post(url(gpu_copy), data, **HTMX).status_code == 404
    gpu_copy.refresh_from_db()
    assert len(tolerations.current(gpu_copy)) == 2
