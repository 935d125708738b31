"""Helpers for the `schedule` command tests: the fixture manifests and a way to run the command."""

import io
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from django.core.management import call_command

MANIFESTS = Path(__file__).parent / "manifests"
OCM_HUB = MANIFESTS / "ocm-hub"
FLEET_HUB = MANIFESTS / "fleet-hub"
BAD = MANIFESTS / "bad"
# every fixture is written for this instant (taint times, heartbeats, add-on score expiry)
NOW = "2024-05-01T12:00:00Z"

Run = Callable[..., tuple[str, str]]


@pytest.fixture
def run_schedule() -> Run:
    """Run `schedule` in-process: `run_schedule("-f", path, "-o", "json", stdin=...)` -> (stdout, stderr)."""

    def run(*args: str, stdin: str | None = None) -> tuple[str, str]:
        stdout, stderr = io.StringIO(), io.StringIO()
        extra: dict[str, Any] = {"stdin": io.StringIO(stdin)} if stdin is not None else {}
        call_command("schedule", *args, stdout=stdout, stderr=stderr, **extra)
        return stdout.getvalue(), stderr.getvalue()

    return run


@pytest.fixture
def schedule_json(run_schedule: Run) -> Callable[..., dict[str, dict[str, Any]]]:
    """Run `schedule -o json --now NOW` on paths; the placements keyed by name."""

    def run(*paths: Path | str) -> dict[str, dict[str, Any]]:
        args = [arg for path in paths for arg in ("-f", str(path))]
        stdout, _ = run_schedule(*args, "--now", NOW, "-o", "json")
        return {item["name"]: item for item in json.loads(stdout)["placements"]}

    return run


def cluster_row(report: dict[str, Any], name: str) -> dict[str, Any]:
    """The `clusters` entry of one cluster in a placement report."""
    return next(row for row in report["clusters"] if row["name"] == name)


def condition(report: dict[str, Any], condition_type: str) -> dict[str, Any]:
    """The condition of that type in a placement report: type, status, reason and message."""
    found = next(c for c in report["conditions"] if c["type"] == condition_type)
    return {key: found[key] for key in ("type", "status", "reason", "message")}
