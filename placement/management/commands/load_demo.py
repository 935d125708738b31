"""`python manage.py load_demo [PATH ...]`: load the demo fleet manifests as hub "demo"."""

import sys
from pathlib import Path
from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError, CommandParser

from placement import loader
from placement.manifests import load_manifests
from placement.scheduler.offline import parse_documents

DEMO_HUB = "demo"
# Placeholder until the demo hub (a local Kubernetes API) replaces the shipped manifests.
DEMO_SERVER_URL = "http://127.0.0.1:8001"


class Command(BaseCommand):
    help = "Load Kubernetes manifests (files or folders; default demo/) into the database as hub 'demo'."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("paths", nargs="*", type=Path, metavar="PATH", help="YAML/JSON file or folder")

    def handle(self, *args: Any, paths: list[Path], **options: Any) -> None:
        read = load_manifests([str(p) for p in paths or [Path(settings.BASE_DIR) / "demo"]], sys.stdin)
        # the same reading and validation as the offline `schedule` command
        parsed = parse_documents(read.documents, self._warn)
        planned = loader.plan(item.document for item in parsed.objects)
        errors = [str(p) for p in read.ordered([*read.problems, *parsed.problems])] + planned.errors
        if errors:
            for error in errors:
                self.stderr.write(error)
            raise CommandError(f"{len(errors)} problem(s) found; nothing was loaded.", returncode=2)
        report = loader.load(DEMO_HUB, DEMO_SERVER_URL, planned.rows)
        for kind in sorted(report.created.keys() | report.updated.keys()):
            self.stdout.write(f"{kind}: {report.created[kind]} created, {report.updated[kind]} updated")
        self.stdout.write(
            self.style.SUCCESS(f"Loaded {len(planned.rows)} objects into hub {report.hub.name!r}.")
        )

    def _warn(self, message: str) -> None:
        self.stderr.write(message, self.style.WARNING)
