"""`python manage.py schedule -f PATH [-f PATH ...] [--now RFC3339] [-o json|yaml|table]`.

GitOps what-if for CI: schedule every Placement and ClusterResourcePlacement found in the manifests,
offline, and print what the schedulers would decide. Exit 0 whenever the input is valid (an
unsatisfied placement says so in its conditions); exit 2, one line per problem, when it is not.
"""

import sys
from datetime import UTC, datetime
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from placement.manifests import STDIN_PATH, LoadedManifests, load_manifests
from placement.scheduler.documents import ManifestProblems, Problem
from placement.scheduler.offline import parse_documents, run_offline
from placement.scheduler.render import render_json, render_table, render_yaml
from placement.scheduler.timeutil import parse_time

BAD_INPUT = 2
RENDERERS = {"json": render_json, "yaml": render_yaml, "table": render_table}
DEFAULT_OUTPUT = "table"


class Command(BaseCommand):
    help = (
        "Schedule the Placements and ClusterResourcePlacements of manifest files offline (nothing is "
        "written) and print the decisions, scores and reasons."
    )
    # `stdin` lets tests and callers hand in the stream read for `-f -`
    stealth_options = ("stdin",)
    # a CI step that reads files only: no database, so no system checks to run first
    requires_system_checks: list[str] = []

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "-f",
            "--filename",
            action="append",
            required=True,
            dest="filenames",
            metavar="PATH",
            help=f"YAML/JSON file (multi-document), folder (read recursively) or {STDIN_PATH} for stdin; "
            "repeatable",
        )
        parser.add_argument(
            "--now", metavar="RFC3339", help="scheduling time, e.g. 2024-05-01T12:00:00Z (default: now, UTC)"
        )
        parser.add_argument(
            "-o",
            "--output",
            default=DEFAULT_OUTPUT,
            metavar="|".join(RENDERERS),
            help=f"output format: {', '.join(RENDERERS)} (default {DEFAULT_OUTPUT})",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        output = options["output"]
        if output not in RENDERERS:
            choices = ", ".join(RENDERERS)
            raise CommandError(f"-o/--output: must be one of {choices}, not {output!r}", returncode=BAD_INPUT)
        now = _scheduling_time(options["now"])
        loaded = load_manifests(options["filenames"], options.get("stdin") or sys.stdin)
        if loaded.problems:
            # still parse what was readable, so one run reports every problem of the input
            parsed = parse_documents(loaded.documents, lambda _warning: None)
            raise _bad_input(loaded, [*loaded.problems, *parsed.problems])
        try:
            run = run_offline(loaded.documents, now)
        except ManifestProblems as exc:
            raise _bad_input(loaded, list(exc.problems)) from exc
        for warning in run.warnings:
            self.stderr.write(f"warning: {warning}", self.style.WARNING)
        if output == "table":
            color = options.get("force_color") or (self.stdout.isatty() and not options.get("no_color"))
            text = render_table(run.reports, color=bool(color))
        else:
            text = RENDERERS[output](run.reports)
        self.stdout.write(text, ending="")


def _scheduling_time(raw: str | None) -> datetime:
    if raw is None:
        # the one clock read of the offline run: the scheduler itself takes `now` as an argument
        return datetime.now(UTC)
    try:
        now = parse_time(raw)
    except ValueError as exc:
        raise CommandError(f"--now: {exc}", returncode=BAD_INPUT) from exc
    if now is None:
        raise CommandError("--now: Required value: an RFC 3339 time", returncode=BAD_INPUT)
    return now


def _bad_input(loaded: LoadedManifests, problems: list[Problem]) -> CommandError:
    lines = [str(problem) for problem in loaded.ordered(problems)]
    return CommandError("\n".join([f"the input has {len(lines)} problem(s):", *lines]), returncode=BAD_INPUT)
