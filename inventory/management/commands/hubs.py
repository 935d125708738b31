"""`python manage.py hubs add|list|remove`: register the Kubernetes hubs the dashboard mirrors.

Credentials are read from files, encrypted before they are stored, and never printed.
"""

import getpass
import logging
from argparse import BooleanOptionalAction
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from django.core.exceptions import ImproperlyConfigured, ValidationError
from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.core.validators import validate_slug
from django.db import transaction
from django.db.models import Count

from inventory import audit
from inventory.hubclient import HubClient, HubError
from inventory.models import Hub

logger = logging.getLogger(__name__)


def _fail(message: str) -> CommandError:
    return CommandError(message, returncode=2)


def named_hubs(names: list[str]) -> list[Hub]:
    """The hubs of `names` (all when empty), for `sync_hubs` and `watch_hubs`; exit 2 on an unknown name."""
    hubs = list(Hub.objects.filter(name__in=names) if names else Hub.objects.all())
    unknown = sorted(set(names) - {hub.name for hub in hubs})
    if unknown:
        raise _fail(f"no hub named {', '.join(unknown)} (see `hubs list`)")
    if not hubs:
        raise _fail("no hubs registered; add one with `hubs add NAME --server URL`")
    return hubs


def _read(path: str | None, what: str) -> str | None:
    if path is None:
        return None
    try:
        return Path(path).read_text()
    except OSError as exc:
        raise _fail(f"cannot read the {what} {path}: {exc.strerror}") from None
    except UnicodeDecodeError:
        raise _fail(f"the {what} {path} is not text") from None


class Command(BaseCommand):
    help = "Add (or update), list and remove the hubs the dashboard syncs."

    def add_arguments(self, parser: CommandParser) -> None:
        actions = parser.add_subparsers(dest="action", required=True, metavar="{add,list,remove}")
        add = actions.add_parser("add", help="register a hub, or update the one with this name")
        add.add_argument("name", help="hub name (letters, digits, - and _)")
        add.add_argument("--server", help="API server URL, e.g. https://hub.example.com:6443")
        credentials = add.add_mutually_exclusive_group()
        credentials.add_argument("--token-file", help="file holding a bearer token")
        credentials.add_argument("--kubeconfig", help="kubeconfig file (its server is used without --server)")
        add.add_argument("--context", help="kubeconfig context (default: its current-context)")
        add.add_argument("--ca-file", help="PEM CA bundle that signs the server's certificate")
        add.add_argument(
            "--insecure-skip-tls-verify", action="store_true", default=None, help="skip TLS verification"
        )
        add.add_argument(
            "--ocm", action=BooleanOptionalAction, default=None, help="serves OCM kinds (default)"
        )
        add.add_argument("--fleet", action=BooleanOptionalAction, default=None, help="serves KubeFleet kinds")
        add.add_argument("--interval", type=int, metavar="SECONDS", help="sync interval (default 60)")
        add.add_argument("--publish-namespace", metavar="NS", help="namespace to publish decisions to")
        actions.add_parser("list", help="the hubs, their state and cluster counts (never credentials)")
        remove = actions.add_parser("remove", help="delete a hub and everything mirrored from it")
        remove.add_argument("name")

    def handle(self, *args: Any, action: str, **options: Any) -> None:
        getattr(self, f"_{action}")(**options)

    def _add(self, name: str, **options: Any) -> None:
        try:
            validate_slug(name)
        except ValidationError:
            raise _fail(f"hub name {name!r} may only hold letters, digits, '-' and '_'") from None
        if options["context"] and not options["kubeconfig"]:
            raise _fail("--context needs --kubeconfig")
        if options["interval"] is not None and options["interval"] < 1:
            raise _fail("--interval must be at least 1 second")
        if options["server"] is not None:
            _check_server_url(options["server"])
        hub = Hub.objects.filter(name=name).first() or Hub(name=name)
        created = hub.pk is None
        before = None if created else audit.hub_settings(hub)
        self._apply_options(hub, options)
        credentials = self._credentials(options)
        try:
            if credentials is not None:
                hub.set_credentials(credentials)
            # builds the client once: a kubeconfig without a usable context fails here, not at sync time
            with HubClient(hub) as client:
                hub.server_url = hub.server_url or client.host
        except (HubError, ImproperlyConfigured) as exc:
            raise _fail(str(exc)) from None
        if not hub.server_url:
            raise _fail("--server is required (or a --kubeconfig whose context names a server)")
        hub.save()
        audit.record_hub_saved(_actor(), hub, before, credentials_changed=credentials is not None)
        verb = "added" if created else "updated"
        logger.info("hub %s %s by %s", name, verb, getpass.getuser())
        self.stdout.write(self.style.SUCCESS(f"Hub {name!r} {verb}: {hub.server_url}"))

    def _apply_options(self, hub: Hub, options: dict[str, Any]) -> None:
        if options["server"] is not None:
            hub.server_url = options["server"]
        elif options["kubeconfig"]:
            hub.server_url = ""  # taken from the kubeconfig below
        for option, field in (
            ("ocm", "serves_ocm"),
            ("fleet", "serves_fleet"),
            ("interval", "sync_interval_seconds"),
            ("publish_namespace", "publish_namespace"),
        ):
            if options[option] is not None:
                setattr(hub, field, options[option])

    def _credentials(self, options: dict[str, Any]) -> dict[str, Any] | None:
        """The credentials to store, or None to keep the stored ones (an update without credential flags)."""
        kubeconfig = _read(options["kubeconfig"], "kubeconfig")
        if kubeconfig is not None:
            return {"kubeconfig": kubeconfig, "context": options["context"] or ""}
        token = _read(options["token_file"], "token file")
        ca_data = _read(options["ca_file"], "CA file")
        insecure = options["insecure_skip_tls_verify"]
        if token is None and ca_data is None and insecure is None:
            return None
        return {"token": (token or "").strip(), "ca_data": ca_data or "", "insecure": bool(insecure)}

    def _list(self, **options: Any) -> None:
        hubs = Hub.objects.annotate(clusters=Count("managedclusters")).order_by("name")
        rows = [("NAME", "SERVER", "KINDS", "STATE", "LAST SYNC", "CLUSTERS")]
        for hub in hubs:
            last = hub.last_synced_at.strftime("%Y-%m-%d %H:%M:%S") if hub.last_synced_at else "-"
            kinds = ",".join(hub.kinds) or "-"
            rows.append((hub.name, hub.server_url, kinds, hub.state, last, str(hub.clusters)))
        widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
        for row in rows:
            cells = (cell.ljust(width) for cell, width in zip(row, widths, strict=True))
            self.stdout.write("  ".join(cells).rstrip())

    def _remove(self, name: str, **options: Any) -> None:
        hub = Hub.objects.filter(name=name).first()
        if hub is None:
            raise _fail(f"no hub named {name!r} (see `hubs list`)")
        with transaction.atomic():
            audit.record_hub_removed(_actor(), hub)
            hub.delete()
        logger.info("hub %s removed by %s", name, getpass.getuser())
        self.stdout.write(self.style.SUCCESS(f"Hub {name!r} removed with everything mirrored from it."))


def _actor() -> str:
    """The audit log's actor for a command: who ran it in the shell."""
    return f"hubs command ({getpass.getuser()})"


def _check_server_url(server: str) -> None:
    # not URLValidator: in-cluster names like https://hub:6443 have no top-level domain
    url = urlsplit(server)
    if url.scheme not in ("http", "https") or not url.hostname:
        raise _fail(f"--server {server!r} is not an http(s) URL")
