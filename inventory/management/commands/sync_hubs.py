"""`python manage.py sync_hubs [NAME ...]`: sync hubs now, in this process, and print what changed."""

from typing import Any

from django.core.exceptions import ImproperlyConfigured
from django.core.management.base import BaseCommand, CommandError, CommandParser

from inventory.management.commands.hubs import named_hubs
from inventory.models import Hub, SyncRun
from inventory.sync import SyncFailed
from inventory.tasks import run_locked_sync


class Command(BaseCommand):
    help = "Sync the named hubs (default: all) synchronously; exit 2 if any hub fails."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("names", nargs="*", metavar="NAME", help="hub names (see `hubs list`)")

    def handle(self, *args: Any, names: list[str], **options: Any) -> None:
        hubs = named_hubs(names)
        failed = [hub.name for hub in hubs if not self._sync(hub)]
        if failed:
            raise CommandError(f"sync failed for {', '.join(failed)}; nothing was deleted", returncode=2)

    def _sync(self, hub: Hub) -> bool:
        try:
            run = run_locked_sync(hub.pk, SyncRun.Trigger.COMMAND)
        except SyncFailed as exc:
            self._summary(exc.sync_run)
            self.stderr.write(f"{hub.name}: {exc.sync_run.error}")
            return False
        except ImproperlyConfigured as exc:
            self.stderr.write(f"{hub.name}: {exc}")
            return False
        if run is None:
            self.stdout.write(f"{hub.name}: a sync is already running; skipped")
            return True
        self._summary(run)
        return True

    def _summary(self, run: SyncRun) -> None:
        duration = run.duration_seconds or 0.0
        style = self.style.SUCCESS if run.state == SyncRun.State.SUCCEEDED else self.style.ERROR
        self.stdout.write(
            style(
                f"{run.hub.name}: {run.state} in {duration:.1f}s, {run.pages} pages, "
                f"{run.added} added, {run.updated} updated, {run.removed} removed"
            )
        )
        for kind, counts in run.kinds.items():
            self.stdout.write(
                f"  {kind}: {counts['listed']} listed, {counts['added']} added, "
                f"{counts['updated']} updated, {counts['removed']} removed"
            )
