"""`python manage.py apply -f FILE [-f FILE ...] [--hub NAME]`: create or update dashboard-owned placements.

Reads and validates exactly as `schedule` does; any problem (or a name owned by the hub) is reported as
`FILE: document N: FIELD: message`, nothing is written and the exit code is 2. Placements and
ClusterResourcePlacements are created or updated as dashboard-owned placements of the hub and
rescheduled; other kinds are ignored with a warning. The work is `placement.importing.apply_manifests`,
which the upload page uses too.
"""

import getpass
import sys
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from inventory.models import Hub
from placement.importing import apply_manifests
from placement.manifests import STDIN_PATH, load_manifests

BAD_INPUT = 2


class Command(BaseCommand):
    help = "Create or update dashboard-owned Placements / ClusterResourcePlacements from manifests."
    stealth_options = ("stdin",)

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "-f",
            "--filename",
            action="append",
            required=True,
            dest="filenames",
            metavar="PATH",
            help=f"YAML/JSON file, folder or {STDIN_PATH} for stdin; repeatable",
        )
        parser.add_argument("--hub", metavar="NAME", help="the hub they belong to (default: the only hub)")

    def handle(self, *args: Any, **options: Any) -> None:
        hub = _hub(options["hub"])
        loaded = load_manifests(options["filenames"], options.get("stdin") or sys.stdin)
        report = apply_manifests(loaded, hub, actor=f"{getpass.getuser()} (manage.py apply)")
        for warning in report.warnings:
            self.stderr.write(f"warning: {warning}", self.style.WARNING)
        if report.problems:
            raise CommandError("\n".join([*report.problems, "nothing was applied"]), returncode=BAD_INPUT)
        for applied in report.applied:
            self.stdout.write(str(applied))


def _hub(name: str | None) -> Hub:
    hubs = Hub.objects.filter(name=name) if name else Hub.objects.all()
    found = list(hubs[:2])
    if len(found) == 1:
        return found[0]
    if name:
        raise CommandError(f"--hub: no hub named {name!r}", returncode=BAD_INPUT)
    raise CommandError("--hub: required (there is not exactly one hub)", returncode=BAD_INPUT)
