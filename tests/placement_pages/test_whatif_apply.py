"""What-if Apply: the answer is the new score table and chart (htmx), the selected count and history swap
out of band, and the change is one history entry however often it is submitted."""

import copy
import json

import pytest
from django.contrib.auth.models import User
from django.test import Client
from django.urls import reverse

from inventory.models import AuditEntry, Hub
from placement import service, whatif
from placement.models import Placement
from placement.views import WHATIF_TRIGGER

pytestmark = pytest.mark.django_db
HTMX = {"HTTP_HX_REQUEST": "true"}


@pytest.fixture
def shop(manifests: Hub, ops: User, tasks_in_process: None) -> Placement:
    """A dashboard-owned copy of the demo `frontend` placement (several of its clusters selected)."""
    frontend = Placement.objects.get(name="frontend")
    service.forget_snapshots()
    return service.create_placement(
        kind="Placement",
        hub=manifests,
        namespace="web",
        name="shop",
        spec=copy.deepcopy(frontend.spec),
        actor="test",
    )


@pytest.fixture
def ops_client(client: Client, ops: User) -> Client:
    client.force_login(ops)
    return client


def one_cluster(placement: Placement) -> dict:
    """The spec the what-if form evaluates for numberOfClusters 1 (what Apply sends)."""
    return whatif.preview(placement, {"numberOfClusters": 1})["spec"]


def apply(client: Client, placement: Placement, spec: dict, **headers: str):
    url = reverse("placement:placement-whatif-apply", args=[placement.pk])
    return client.post(url, {"spec": json.dumps(spec)}, **headers)


def test_apply_answers_with_the_new_table_and_chart_and_records_the_history(
    ops_client: Client, shop: Placement
) -> None:
    assert len(shop.explanation["selected"]) > 1
    response = apply(ops_client, shop, one_cluster(shop), **HTMX)
    assert response.status_code == 200
    html = response.content.decode()
    shop.refresh_from_db()
    [kept] = shop.explanation["selected"]
    assert 'id="scores"' in html
    assert 'id="applied-chart"' in html  # the chart's new figure
    chart = json.loads(html.split('id="applied-chart" type="application/json">')[1].split("</script>")[0])
    assert chart["data"]
    assert '<dd id="selected-count" hx-swap-oob="true">1 / 1</dd>' in html
    assert kept in html
    # the filters of the swapped table still ask the What-if tab, not the Apply URL
    whatif = reverse("placement:placement-whatif", args=[shop.pk])
    assert f'hx-get="{whatif}"' in html
    history = ops_client.get(reverse("placement:placement-history", args=[shop.pk])).content.decode()
    assert f'{WHATIF_TRIGGER}</strong> by <span class="actor">ops</span>' in history


def test_apply_submitted_twice_records_one_entry(ops_client: Client, shop: Placement) -> None:
    spec, selected = one_cluster(shop), len(shop.explanation["selected"])
    entries = shop.history.count()
    assert apply(ops_client, shop, spec, **HTMX).status_code == 200
    assert apply(ops_client, shop, spec, **HTMX).status_code == 200
    [edit] = shop.history.all()[: shop.history.count() - entries]
    assert (edit.trigger, edit.actor_display, edit.spec_after, len(edit.removed)) == (
        WHATIF_TRIGGER,
        "ops",
        spec,
        selected - 1,
    )
    assert AuditEntry.objects.filter(action=service.SPEC_ACTION, actor__username="ops").count() == 1


def test_two_requests_racing_with_one_edit_record_it_once(shop: Placement, ops: User) -> None:
    """Both loaded the placement before either saved (a double click): the second finds the entry."""
    first, second = Placement.objects.get(pk=shop.pk), Placement.objects.get(pk=shop.pk)
    spec = one_cluster(shop)
    entries = shop.history.count()
    service.apply_spec(first, spec, actor=ops, trigger=WHATIF_TRIGGER)
    service.apply_spec(second, spec, actor=ops, trigger=WHATIF_TRIGGER)
    assert shop.history.count() == entries + 1
    assert AuditEntry.objects.filter(action=service.SPEC_ACTION, actor__username="ops").count() == 1


def test_a_plain_post_is_redirected_to_the_scores_tab(ops_client: Client, shop: Placement) -> None:
    response = apply(ops_client, shop, one_cluster(shop))
    assert response.status_code == 302
    assert response["Location"] == reverse("placement:placement-scores", args=[shop.pk])


def test_a_refused_spec_goes_to_the_what_if_errors(ops_client: Client, shop: Placement) -> None:
    response = apply(ops_client, shop, {**shop.spec, "numberOfClusters": -1}, **HTMX)
    assert response.status_code == 400
    assert response["HX-Retarget"] == "#whatif-errors"
    assert "numberOfClusters" in response.content.decode()
    shop.refresh_from_db()
    assert shop.spec.get("numberOfClusters") != -1
