"""Hub credentials: Fernet-encrypted at rest, keyed from FLEETUI_CREDENTIALS_KEY, never shown."""

import logging
from io import StringIO

import pytest
from django.core.exceptions import ImproperlyConfigured
from django.core.management import call_command
from django.db import connection

from inventory import credentials
from inventory.models import Hub
from tests.factories import HubFactory

pytestmark = pytest.mark.django_db
TOKEN = "sha256~very-secret-token-value"


def test_round_trip_and_only_ciphertext_in_the_database() -> None:
    hub = HubFactory()
    hub.set_credentials({"token": TOKEN, "ca_data": "", "insecure": False})
    hub.save()

    with connection.cursor() as cursor:
        cursor.execute("SELECT encrypted_credentials FROM inventory_hub WHERE id = %s", [hub.pk])
        (stored,) = cursor.fetchone()
    assert TOKEN not in stored and stored.startswith("gAAAA")  # a Fernet token
    assert Hub.objects.get(pk=hub.pk).credentials == {"token": TOKEN, "ca_data": "", "insecure": False}


def test_another_key_cannot_read_them(settings) -> None:
    hub = HubFactory()
    settings.FLEETUI_CREDENTIALS_KEY = "key-one"
    hub.set_credentials({"token": TOKEN})
    settings.FLEETUI_CREDENTIALS_KEY = "key-two"
    with pytest.raises(credentials.CredentialsError, match="FLEETUI_CREDENTIALS_KEY differs"):
        _ = hub.credentials


def test_without_a_key_outside_debug_and_tests_it_refuses(settings) -> None:
    settings.FLEETUI_CREDENTIALS_KEY = None
    settings.DEBUG = False
    settings.TESTING = False
    with pytest.raises(ImproperlyConfigured, match="FLEETUI_CREDENTIALS_KEY is not set"):
        credentials.encrypt({"token": TOKEN})
    with pytest.raises(ImproperlyConfigured, match="FLEETUI_CREDENTIALS_KEY is not set"):
        credentials.decrypt("gAAAAanything")


def test_hubs_add_and_list_never_print_or_log_the_token(tmp_path, caplog) -> None:
    token_file = tmp_path / "token"
    token_file.write_text(TOKEN + "\n")
    out = StringIO()
    with caplog.at_level(logging.DEBUG):
        call_command(
            "hubs",
            "add",
            "east",
            "--server",
            "https://east.example.com:6443",
            "--token-file",
            str(token_file),
            stdout=out,
        )
        call_command("hubs", "list", stdout=out)
    assert Hub.objects.get(name="east").credentials["token"] == TOKEN
    assert TOKEN not in out.getvalue() and TOKEN not in caplog.text
    assert "east" in out.getvalue()
