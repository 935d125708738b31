"""Hub changes are audited: `manage.py hubs add|remove` and the Django admin, with the
settings before and after and never the credentials."""

import pytest
from django.core.management import call_command
from django.test import Client
from django.urls import reverse

from inventory.models import AuditEntry, Hub
from tests.factories import HubFactory

SECRET = "s3cr3t-token-value"


def entries() -> list[tuple[str, str, dict | None, dict | None]]:
    return [(e.action, e.target, e.before, e.after) for e in AuditEntry.objects.order_by("pk")]


def test_the_hubs_command_audits_add_update_and_remove(db: None, tmp_path) -> None:
    token = tmp_path / "token"
    token.write_text(SECRET)
    east = "https://east.example.com:6443"
    call_command("hubs", "add", "east", "--server", east, "--token-file", str(token))
    call_command("hubs", "add", "east", "--server", "https://east2.example.com:6443", "--fleet")
    call_command("hubs", "remove", "east")

    (create, _, none, added), (update, _, before, after), (remove, _, removed, gone) = entries()
    assert (create, update, remove) == ("hub.create", "hub.update", "hub.remove")
    assert none is None and added["server_url"] == "https://east.example.com:6443"
    assert added["credentials_changed"] is True and after["credentials_changed"] is False
    assert (
        before["server_url"] == added["server_url"]
        and after["server_url"] == "https://east2.example.com:6443"
    )
    assert (before["serves_fleet"], after["serves_fleet"]) == (False, True)
    assert removed == {key: value for key, value in after.items() if key != "credentials_changed"}
    assert gone is None
    assert AuditEntry.objects.filter(actor_name__startswith="hubs command (").count() == 3
    assert SECRET not in str(entries())
    assert not Hub.objects.exists()


@pytest.fixture(name="admin_client")
def admin_client_fixture(client: Client, django_user_model) -> Client:
    client.force_login(django_user_model.objects.create_superuser("root", "root@example.com", "pw"))
    return client


def test_the_django_admin_audits_hub_edits_and_deletes_without_credentials(admin_client: Client) -> None:
    hub = HubFactory(name="east")
    hub.set_credentials({"token": SECRET})
    hub.save()
    change = reverse("admin:inventory_hub_change", args=[hub.pk])
    page = admin_client.get(change).content.decode()
    assert "encrypted_credentials" not in page and hub.encrypted_credentials not in page

    form = {
        "name": "east",
        "server_url": "https://east.example.com:7443",
        "serves_ocm": "on",
        "sync_interval_seconds": "30",
        "publish_namespace": "",
    }
    assert admin_client.post(change, form).status_code == 302
    delete = reverse("admin:inventory_hub_delete", args=[hub.pk])
    assert admin_client.post(delete, {"post": "yes"}).status_code == 302

    (update, target, before, after), (remove, _, removed, gone) = entries()
    assert (update, remove, target) == ("hub.update", "hub.remove", "east")
    assert (before["sync_interval_seconds"], after["sync_interval_seconds"]) == (60, 30)
    assert after["server_url"] == removed["server_url"] == "https://east.example.com:7443"
    assert gone is None and SECRET not in str(entries())
    assert set(AuditEntry.objects.values_list("actor_name", flat=True)) == {"root"}
