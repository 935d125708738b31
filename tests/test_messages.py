"""Every action says what it did: a Django message in base.html's #notices after a full page (a redirect
or a page), and for htmx answers the same message swapped out of band into #notices (core.middleware),
shown once either way."""

import json
import re

import pytest
from django.contrib import messages
from django.contrib.auth.models import User
from django.contrib.messages.storage.cookie import CookieStorage
from django.core.files.uploadedfile import SimpleUploadedFile
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import redirect
from django.test import Client, RequestFactory
from django.urls import reverse
from django_htmx.middleware import HtmxDetails

from core.middleware import HtmxMessagesMiddleware
from inventory.models import ClusterSetRole, Hub, ManagedClusterSet
from placement import whatif
from placement.models import Placement
from tests.factories import (
    ClusterSetRoleFactory,
    HubFactory,
    ManagedClusterSetFactory,
    UserFactory,
)
from tests.manifest_roles import manifests_fixture, ops_fixture  # noqa: F401 - fixtures

pytestmark = pytest.mark.django_db
HTMX = {"HTTP_HX_REQUEST": "true"}
OOB = '<div id="notices" hx-swap-oob="beforeend">'


def notices(html: str) -> list[tuple[str, str]]:
    """(role, text) of each message drawn in the answer."""
    found = re.findall(r'<div class="notice notice-\w+" role="(\w+)"><p>(.*?)</p>', html)
    return [(role, text) for role, text in found]


def create_shop(client: Client, hub: Hub):
    frontend = Placement.objects.get(name="frontend")
    data = {"hub": hub.pk, "kind": "Placement", "namespace": "web", "name": "shop", "spec": ""}
    data["spec"] = json.dumps(frontend.spec)
    return client.post(reverse("placement:placement-create"), data, follow=True)


def test_a_full_page_action_shows_its_message_once_as_a_dismissable_status(
    client: Client, ops: User, manifests: Hub
) -> None:
    page = create_shop(client, manifests).content.decode()

    assert notices(page) == [("status", "OCM Placement web/shop created.")]
    assert re.search(r'<div id="notices"><div class="notice notice-success"', page)
    assert 'class="notice-dismiss" aria-label="Dismiss: OCM Placement web/shop created."' in page
    shop = Placement.objects.get(name="shop")
    assert notices(client.get(reverse("placement:placement-detail", args=[shop.pk])).content.decode()) == []


def test_an_htmx_action_gets_its_message_out_of_band_and_not_again_on_the_next_page(
    client: Client, ops: User, manifests: Hub
) -> None:
    create_shop(client, manifests)
    shop = Placement.objects.get(name="shop")
    spec = whatif.preview(shop, {"numberOfClusters": 1})["spec"]
    url = reverse("placement:placement-whatif-apply", args=[shop.pk])

    html = client.post(url, {"spec": json.dumps(spec)}, **HTMX).content.decode()

    assert html.count(OOB) == 1 and html.index(OOB) > html.index('id="scores"')
    assert notices(html) == [("status", "web/shop: the what-if spec is applied.")]
    assert notices(client.get(reverse("placement:placement-list")).content.decode()) == []


def test_an_error_message_is_an_alert(client: Client, ops: User, manifests: Hub) -> None:
    upload = SimpleUploadedFile("bad.yaml", b"apiVersion: cluster.open-cluster-management.io/v1beta1\n")
    response = client.post(reverse("placement:placement-upload"), {"hub": manifests.pk, "manifests": upload})

    [(role, text)] = notices(response.content.decode())
    assert response.status_code == 400
    assert role == "alert" and text == "Nothing was applied: 2 problems, listed below."


def test_the_placement_forms_and_the_upload_report_what_they_did(
    client: Client, ops: User, manifests: Hub
) -> None:
    create_shop(client, manifests)
    shop = Placement.objects.get(name="shop")
    edit = reverse("placement:placement-edit", args=[shop.pk])
    page = client.post(edit, {"spec": json.dumps(shop.spec)}, follow=True).content.decode()
    assert notices(page) == [("status", "web/shop: spec saved.")]

    text = f"kind: Placement\napiVersion: cluster.open-cluster-management.io/v1beta1\n{_meta()}spec: {{}}\n"
    upload = SimpleUploadedFile("shop.yaml", text.encode())
    page = client.post(reverse("placement:placement-upload"), {"hub": manifests.pk, "manifests": upload})
    assert notices(page.content.decode()) == [("status", "1 placement applied.")]


def _meta() -> str:
    return "metadata: {namespace: web, name: cart}\n"


@pytest.fixture
def prod(db: None) -> ManagedClusterSet:
    cluster_set = ManagedClusterSetFactory(hub=HubFactory(name="east"), name="prod")
    ClusterSetRoleFactory(
        cluster_set=cluster_set, role=ClusterSetRole.Role.ADMIN, user=UserFactory(username="owner")
    )
    return cluster_set


def test_role_grants_changes_and_revokes_say_what_changed_with_and_without_htmx(
    client: Client, prod: ManagedClusterSet
) -> None:
    client.force_login(User.objects.get(username="owner"))
    UserFactory(username="bob")
    add = reverse("inventory:clusterset-access", args=[prod.pk])

    html = client.post(add, {"kind": "user", "name": "bob", "role": "view"}, **HTMX).content.decode()
    assert OOB in html
    assert notices(html) == [("status", "user:bob now holds the view role on cluster set prod.")]

    row = ClusterSetRole.objects.get(cluster_set=prod, user__username="bob")
    change = reverse("inventory:clusterset-access-change", args=[prod.pk, row.pk])
    page = client.post(change, {"role": "admin"}, follow=True).content.decode()
    assert notices(page) == [("status", "user:bob now holds the admin role on cluster set prod.")]

    remove = reverse("inventory:clusterset-access-remove", args=[prod.pk, row.pk])
    html = client.post(remove, **HTMX).content.decode()
    assert notices(html) == [("status", "user:bob no longer holds the admin role on cluster set prod.")]


# --- the middleware on its own


def htmx_request(*, htmx: bool = True) -> HttpRequest:
    request = RequestFactory().post("/", **(HTMX if htmx else {}))
    request.htmx = HtmxDetails(request)  # type: ignore[attr-defined]
    request._messages = CookieStorage(request)  # type: ignore[attr-defined]
    messages.success(request, "Done.")
    return request


def through(request: HttpRequest, response: HttpResponse) -> HttpResponse:
    return HtmxMessagesMiddleware(lambda _: response)(request)  # type: ignore[arg-type]


def test_the_middleware_appends_undrawn_messages_to_an_htmx_fragment_and_consumes_them() -> None:
    request = htmx_request()
    response = through(request, HttpResponse("<tr><td>row</td></tr>"))

    html = response.content.decode()
    assert html.startswith("<tr><td>row</td></tr>") and OOB in html
    assert notices(html) == [("status", "Done.")]
    assert messages.get_messages(request).used


@pytest.mark.parametrize(
    "response",
    [
        redirect("/elsewhere/"),  # htmx follows it: the page it lands on shows them
        JsonResponse({"ok": True}),
        HttpResponse(status=204),
    ],
    ids=["redirect", "json", "no content"],
)
def test_the_middleware_leaves_answers_that_cannot_carry_them_for_the_next_page(
    response: HttpResponse,
) -> None:
    request = htmx_request()
    before = response.content
    assert through(request, response).content == before
    assert not messages.get_messages(request).used


def test_the_middleware_adds_nothing_to_full_pages_or_answers_that_drew_them() -> None:
    page = htmx_request(htmx=False)
    assert b"notices" not in through(page, HttpResponse("<html></html>")).content

    drew = htmx_request()
    list(messages.get_messages(drew))  # as a template drawing them does
    assert b"notices" not in through(drew, HttpResponse("<p>503</p>")).content
