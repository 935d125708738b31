"""The taint editor on the cluster page: add, preview, save (htmx swaps the section; without it, its own
page and a redirect), errors under the fields they name, 403 without the admin role on a set holding the
cluster, 404 for a cluster one cannot see, the hub's refusal shown."""

import pytest
from django.contrib.auth.models import User
from django.http import HttpResponse
from django.test import Client
from django.urls import reverse

from demohub import DemoHub
from inventory.models import AuditEntry, ManagedCluster
from tests.editors import rows_data
from tests.factories import UserFactory

pytestmark = pytest.mark.django_db

HTMX = {"HTTP_HX_REQUEST": "true"}
GPU_CLUSTER = "aks-northeurope-dev-021"  # on the demo hub, with the taint dedicated=gpu:NoSelect


def taints_url(cluster: ManagedCluster) -> str:
    return reverse("inventory:cluster-taints", args=[cluster.pk])


def post(client: Client, cluster: ManagedCluster, rows: list[dict], **data: object) -> HttpResponse:
    """A press of an editor button through htmx."""
    return client.post(taints_url(cluster), rows_data("taints", rows, **data), **HTMX)


def test_the_cluster_page_shows_the_editor_with_the_stored_taints(root_client: Client, demo_fleet) -> None:
    cluster = ManagedCluster.objects.get(name="prod-usw2-gpu")
    html = root_client.get(reverse("inventory:cluster-detail", args=[cluster.pk])).content.decode()
    assert 'id="taint-editor"' in html and 'value="nvidia.com/gpu"' in html and 'value="a100"' in html
    assert '<option value="NoSelect" selected>NoSelect</option>' in html
    assert "2026-10-02T09:15:00Z" in html  # when the hub stamped it
    assert 'name="taints-TOTAL_FORMS" value="2"' in html  # the stored taint and one blank row


def test_preview_lists_which_placements_would_drop_the_cluster(root_client: Client, demo_fleet) -> None:
    cluster = ManagedCluster.objects.get(name="prod-use1-a")
    rows = [{"key": "example.com/drain", "effect": "NoSelect"}]
    response = post(root_client, cluster, rows, initial=0, action="preview")
    html = response.content.decode()
    assert response.status_code == 200 and "<html" not in html
    assert 'data-placement="web/frontend" data-verdict="drops"' in html
    assert "taint example.com/drain:NoSelect is not tolerated" in html
    assert 'value="example.com/drain"' in html  # the rows stay as typed
    cluster.refresh_from_db()
    assert cluster.taints == [] and not AuditEntry.objects.exists()


def test_invalid_rows_answer_400_with_the_reason_under_the_field(root_client: Client, demo_fleet) -> None:
    cluster = ManagedCluster.objects.get(name="prod-use1-a")
    rows = [{"key": "bad key", "value": "ok", "effect": "NoSelect"}, {"key": "gpu", "effect": "NoSchedule"}]
    response = post(root_client, cluster, rows, initial=0, action="preview")
    html = response.content.decode()
    assert response.status_code == 400
    assert 'id="id_taints-0-key_error"><li>Invalid value: &quot;bad key&quot;: name part must consist' in html
    assert 'id="id_taints-1-effect_error"><li>Unsupported value: &quot;NoSchedule&quot;' in html


def test_add_gives_one_more_blank_row_and_remove_drops_a_row(root_client: Client, demo_fleet) -> None:
    cluster = ManagedCluster.objects.get(name="prod-usw2-gpu")
    stored = [{"key": "nvidia.com/gpu", "value": "a100", "effect": "NoSelect"}]
    html = post(root_client, cluster, stored, initial=1, action="add").content.decode()
    assert 'name="taints-TOTAL_FORMS" value="2"' in html
    # as a browser sends them: the blank row's effect select posts its first option
    removed = [{**stored[0], "DELETE": "on"}, {"key": "", "value": "", "effect": "NoSelect"}]
    html = post(root_client, cluster, removed, initial=1, action="preview").content.decode()
    # without the taint, monitoring-agents (production and staging clusters of set global) takes the cluster
    assert 'data-placement="platform/monitoring-agents" data-verdict="gains"' in html


def test_an_admin_of_its_set_saves_to_the_hub_and_gets_the_refreshed_rows(
    client: Client, synced_hub, gpu_admin: User
) -> None:
    client.force_login(gpu_admin)
    cluster = ManagedCluster.objects.get(hub=synced_hub, kind="ManagedCluster", name=GPU_CLUSTER)
    rows = [
        {"key": "dedicated", "value": "gpu", "effect": "NoSelect", "DELETE": "on"},
        {"key": "example.com/drain", "value": "", "effect": "NoSelect"},
    ]
    response = post(client, cluster, rows, initial=1, action="save")
    html = response.content.decode()
    assert response.status_code == 200
    cluster.refresh_from_db()
    assert cluster.taints == [{"key": "example.com/drain", "effect": "NoSelect"}]
    assert f"saved to hub demo (resourceVersion {cluster.resource_version})." in html
    assert 'value="example.com/drain"' in html and 'value="dedicated"' not in html
    assert "cluster.taints</strong> by gpu-admin" in html  # the recent changes of the cluster


def test_without_htmx_a_save_redirects_and_a_refusal_shows_on_the_editor_page(
    root_client: Client, demo_hub: DemoHub, synced_hub
) -> None:
    cluster = ManagedCluster.objects.get(hub=synced_hub, kind="ManagedCluster", name=GPU_CLUSTER)
    data = rows_data("taints", [{"key": "one", "effect": "NoSelect"}], initial=1, action="save")
    demo_hub.fail_next(1, 503)
    refused = root_client.post(taints_url(cluster), data)
    html = refused.content.decode()
    assert refused.status_code == 502 and "<html" in html
    assert "The hub did not accept the change; nothing was changed." in html and "HTTP 503" in html
    saved = root_client.post(taints_url(cluster), data)
    assert saved.status_code == 302
    assert saved["Location"] == reverse("inventory:cluster-detail", args=[cluster.pk]) + "#taints-section"


def test_without_the_admin_role_every_button_is_refused(
    client: Client, synced_hub, refused_taint_editor: User
) -> None:
    client.force_login(refused_taint_editor)
    cluster = ManagedCluster.objects.get(hub=synced_hub, kind="ManagedCluster", name=GPU_CLUSTER)
    before = cluster.taints
    for action in ("add", "remove-0", "preview", "save"):
        data = rows_data("taints", [{"key": "x", "effect": "NoSelect"}], initial=0, action=action)
        response = client.post(taints_url(cluster), data, **HTMX)
        assert response.status_code == 403
        html = response.content.decode()
        assert "Editing taints needs the admin role on a cluster set the cluster belongs to." in html
        assert 'id="taint-editor"' not in html
    cluster.refresh_from_db()
    assert cluster.taints == before
    assert list(AuditEntry.objects.values_list("outcome", flat=True)) == ["denied"]  # the save attempt


def test_a_cluster_one_cannot_see_is_a_404_that_shows_nothing(client: Client, synced_hub, demo_role) -> None:
    client.force_login(demo_role("production", "admin", "elsewhere"))  # an admin of another set only
    cluster = ManagedCluster.objects.get(hub=synced_hub, kind="ManagedCluster", name=GPU_CLUSTER)
    for action in ("add", "remove-0", "preview", "save"):
        data = rows_data("taints", [], initial=0, action=action)
        response = client.post(taints_url(cluster), data, **HTMX)
        assert response.status_code == 404 and "dedicated" not in response.content.decode()
    assert not AuditEntry.objects.exists()


def test_get_is_not_allowed_and_post_needs_csrf(demo_fleet) -> None:
    cluster = ManagedCluster.objects.get(name="prod-use1-a")
    client = Client(enforce_csrf_checks=True)
    client.force_login(UserFactory(username="root", is_superuser=True))
    assert client.get(taints_url(cluster)).status_code == 405
    data = rows_data("taints", [], initial=0, action="save")
    assert client.post(taints_url(cluster), data).status_code == 403
