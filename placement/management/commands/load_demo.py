"""`python manage.py load_demo [PATH ...]`: load the demo fleet manifests as hub "demo"."""

from pathlib import Path
from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError, CommandParser

from inventory.manifests import read_manifests
from placement import loader

DEMO_HUB = "demo"
# Placeholder until the demo hub (a local Kubernetes API) replaces the shipped manifests.
DEMO_SERVER_URL = "http://127.0.0.1:8001"


class Command(BaseCommand):
    help = "Load Kubernetes manifests (files or folders; default demo/) into the database as hub 'demo'."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("paths", nargs="*", type=Path, metavar="PATH", help="YAML/JSON file or folder")

    def handle(self, *args: Any, paths: list[Path], **options: Any) -> None:
        read = read_manifests(paths or [Path(settings.BASE_DIR) / "demo"])
        planned = loader.plan(read.manifests)
        for warning in planned.warnings:
            self.stderr.write(warning, self.style.WARNING)
        errors = read.errors + planned.errors
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
