"""`python manage.py load_demo [--hub NAME] [PATH ...]`: load manifests offline as hub "manifests".

The live demo hub (`make run`) is hub "demo"; this offline loader keeps to its own name by default.
"""

import sys
from pathlib import Path
from typing import Any

from django.conf import settings
from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.core.validators import validate_slug

from placement import loader
from placement.manifests import load_manifests
from placement.scheduler.offline import parse_documents

MANIFESTS_HUB = "manifests"
# Recorded as the hub's server; loaded rows are never synced from it (the hub serves no live API).
MANIFESTS_SERVER_URL = "http://127.0.0.1:8001"


class Command(BaseCommand):
    help = "Load Kubernetes manifests (files or folders; default demo/) into the database as one hub."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("paths", nargs="*", type=Path, metavar="PATH", help="YAML/JSON file or folder")
        parser.add_argument(
            "--hub", default=MANIFESTS_HUB, metavar="NAME", help=f"hub to load into (default {MANIFESTS_HUB})"
        )

    def handle(self, *args: Any, paths: list[Path], hub: str, **options: Any) -> None:
        try:
            validate_slug(hub)
        except ValidationError:
            raise CommandError(f"--hub {hub!r}: use letters, digits, '-' and '_'", returncode=2) from None
        read = load_manifests([str(p) for p in paths or [Path(settings.BASE_DIR) / "demo"]], sys.stdin)
        # the same reading and validation as the offline `schedule` command
        parsed = parse_documents(read.documents, self._warn)
        planned = loader.plan(item.document for item in parsed.objects)
        errors = [str(p) for p in read.ordered([*read.problems, *parsed.problems])] + planned.errors
        if errors:
            for error in errors:
                self.stderr.write(error)
            raise CommandError(f"{len(errors)} problem(s) found; nothing was loaded.", returncode=2)
        report = loader.load(hub, MANIFESTS_SERVER_URL, planned.rows)
        for kind in sorted(report.created.keys() | report.updated.keys()):
            self.stdout.write(f"{kind}: {report.created[kind]} created, {report.updated[kind]} updated")
        self.stdout.write(
            self.style.SUCCESS(f"Loaded {len(planned.rows)} objects into hub {report.hub.name!r}.")
        )

    def _warn(self, message: str) -> None:
        self.stderr.write(message, self.style.WARNING)
