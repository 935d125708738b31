"""Bind and unbind on the cluster-set page: htmx swaps the bindings section; without it, a redirect or the
section's own page with the errors; 403 without both the set's and the namespace's admin roles, 404 for
a set one cannot see; the hub's refusal shown."""

import pytest
from django.contrib.auth.models import User
from django.test import Client
from django.urls import reverse
from django.utils.html import escape

from demohub import DemoHub
from inventory import roles
from inventory.models import AuditEntry, ManagedClusterSet, ManagedClusterSetBinding
from inventory.views import BIND_DENIED

pytestmark = pytest.mark.django_db

HTMX = {"HTTP_HX_REQUEST": "true"}


def bind_url(cluster_set: ManagedClusterSet) -> str:
    return reverse("inventory:clusterset-bind", args=[cluster_set.pk])


def unbind_url(binding: ManagedClusterSetBinding) -> str:
    cluster_set = ManagedClusterSet.objects.get(hub=binding.hub, name=binding.cluster_set)
    return reverse("inventory:clusterset-unbind", args=[cluster_set.pk, binding.pk])


def test_the_set_page_offers_bind_and_unbind(root_client: Client, staging) -> None:
    html = root_client.get(reverse("inventory:clusterset-detail", args=[staging.pk])).content.decode()
    assert 'id="bind-form"' in html and 'name="namespace"' in html
    binding = ManagedClusterSetBinding.objects.get(hub=staging.hub, cluster_set="staging")
    assert f'action="{unbind_url(binding)}"' in html


def test_an_admin_of_the_set_binds_then_unbinds_through_htmx(
    client: Client, demo_hub: DemoHub, staging, staging_admin: User
) -> None:
    client.force_login(staging_admin)
    response = client.post(bind_url(staging), {"namespace": "team-a"}, **HTMX)
    html = response.content.decode()
    assert response.status_code == 200 and "<html" not in html
    assert "bound to namespace team-a." in html and '/namespaces/team-a/access/">team-a</a></td>' in html
    assert demo_hub.store.get("ManagedClusterSetBinding", "staging", namespace="team-a")
    binding = ManagedClusterSetBinding.objects.get(hub=staging.hub, namespace="team-a")
    html = client.post(unbind_url(binding), **HTMX).content.decode()
    assert "unbound from namespace team-a." in html and ">team-a</a></td>" not in html
    assert "team-a" not in demo_hub.store.names("ManagedClusterSetBinding", namespace="team-a")


def test_an_invalid_namespace_answers_400_under_the_field(root_client: Client, staging) -> None:
    response = root_client.post(bind_url(staging), {"namespace": "Team_A"}, **HTMX)
    assert response.status_code == 400
    assert 'id="namespace-errors"><li>Invalid value: &quot;Team_A&quot;: a lowercase RFC 1123 label' in (
        response.content.decode()
    )
    assert not AuditEntry.objects.exists()


def test_without_htmx_bind_redirects_and_a_hub_refusal_shows_on_the_bindings_page(
    root_client: Client, demo_hub: DemoHub, staging
) -> None:
    demo_hub.fail_next(1, 500)
    refused = root_client.post(bind_url(staging), {"namespace": "team-a"})
    assert refused.status_code == 502
    html = refused.content.decode()
    assert "<html" in html and "The hub did not accept the change; nothing was changed." in html
    assert 'value="team-a"' in html  # the namespace typed stays in the form
    done = root_client.post(bind_url(staging), {"namespace": "team-a"})
    assert done.status_code == 302
    assert done["Location"] == reverse("inventory:clusterset-detail", args=[staging.pk]) + "#bindings-section"


def test_without_the_admin_role_bind_and_unbind_answer_403(
    client: Client, demo_hub: DemoHub, staging, refused_binder: User
) -> None:
    client.force_login(refused_binder)
    response = client.post(bind_url(staging), {"namespace": "team-a"}, **HTMX)
    assert response.status_code == 403
    html = response.content.decode()
    assert escape(BIND_DENIED) in html
    # the form is for the set's admins, who may bind it into the namespaces they administer
    assert ('id="bind-form"' in html) is roles.can_administer_set(refused_binder, staging)
    binding = ManagedClusterSetBinding.objects.get(hub=staging.hub, cluster_set="staging")
    assert client.post(unbind_url(binding), **HTMX).status_code == 403
    assert ManagedClusterSetBinding.objects.filter(pk=binding.pk).exists()
    assert not ManagedClusterSetBinding.objects.filter(namespace="team-a").exists()
    assert client.get(bind_url(staging)).status_code == 405


def test_a_set_one_cannot_see_is_a_404_that_shows_nothing(client: Client, staging, demo_role) -> None:
    client.force_login(demo_role("production", "admin", "elsewhere"))  # an admin of another set only
    binding = ManagedClusterSetBinding.objects.get(hub=staging.hub, cluster_set="staging")
    response = client.post(bind_url(staging), {"namespace": "team-a"}, **HTMX)
    assert response.status_code == 404 and binding.namespace not in response.content.decode()
    assert client.post(unbind_url(binding), **HTMX).status_code == 404
    assert ManagedClusterSetBinding.objects.filter(pk=binding.pk).exists()
