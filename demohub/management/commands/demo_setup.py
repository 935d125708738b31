"""`python manage.py demo_setup [--hub demo] --server URL`: register a running demo hub, sync it, and
apply the first-look placements (demohub/first-look.yaml), as `make run` does after starting the hub.

Each step is the product's own command (`hubs add`, `sync_hubs`, `apply`), so running it again gives the
same result: the hub is updated, the sync finds what it has, the placements are applied unchanged. What a
first look then shows, besides the hub's own staged update run waiting for approval and its unavailable
clusters: a dashboard-owned rolling update in progress (`reports-api`) and a placement short of clusters
(`apps-prod/ml-inference`).
"""

from pathlib import Path
from typing import Any

from django.core.management import call_command
from django.core.management.base import BaseCommand, CommandParser

FIRST_LOOK = Path(__file__).resolve().parents[2] / "first-look.yaml"
ROLLING_PLACEMENT = "reports-api"  # its two europe-west1 members apply for a day
SHORT_PLACEMENT = ("apps-prod", "ml-inference")  # asks for 20 GPU clusters
WEIGHTED_PLACEMENT = ("apps-prod", "checkout")  # three production clusters by weighted CPU and memory


class Command(BaseCommand):
    help = "Register and sync a running demo hub, then apply the first-look placements to it."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--hub", default="demo", metavar="NAME", help="the hub's name (default demo)")
        parser.add_argument("--server", required=True, metavar="URL", help="the demo hub's address")

    def handle(self, *args: Any, hub: str, server: str, **options: Any) -> None:
        streams = {"stdout": self.stdout, "stderr": self.stderr}
        call_command("hubs", "add", hub, "--server", server, "--fleet", **streams)
        call_command("sync_hubs", hub, **streams)
        call_command("apply", "--hub", hub, "-f", str(FIRST_LOOK), **streams)
