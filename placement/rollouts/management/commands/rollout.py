"""`python manage.py rollout crp NAME [--hub NAME] [--new-snapshot] [--round] [-o json]`, and
`rollout placement NAME -n NS` for an OCM Placement's rollout preview.

Shows a placement's rollout as its page does: a CRP's current wave, budgets, next round and each
binding's state; an OCM Placement's steps per decision group. `--new-snapshot` rolls out a new
resource snapshot of a dashboard-owned CRP (audited as this command), `--round` runs a rolling-update
round now (what a worker does at the requeue time).
"""

import json
from typing import Any

from django.core.exceptions import PermissionDenied, ValidationError
from django.core.management.base import BaseCommand, CommandError, CommandParser

from placement.management.commands.describe import BAD_INPUT, KINDS, add_placement_arguments, find_placement
from placement.models import Placement
from placement.rollouts import rolling
from placement.scheduler.render import aligned

ACTOR = "rollout command"


class Command(BaseCommand):
    help = "Show (and drive) a placement's rollout: waves of a CRP's rolling update, or an OCM preview."

    def add_arguments(self, parser: CommandParser) -> None:
        add_placement_arguments(parser)
        parser.add_argument("--new-snapshot", action="store_true", help="roll out a new resource snapshot")
        parser.add_argument("--round", action="store_true", help="run a rolling-update round now")
        parser.add_argument("-o", "--output", choices=["text", "json"], default="text")

    def handle(self, *args: Any, **options: Any) -> None:
        kind = KINDS.get(options["kind"].lower())
        if kind is None:
            raise CommandError(f"kind: must be one of {', '.join(KINDS)}", returncode=BAD_INPUT)
        placement = find_placement(kind, options["name"], options["namespace"], options["hub"])
        try:
            if options["new_snapshot"]:
                rolling.roll_out_new_snapshot(placement, actor=ACTOR)
            if options["round"]:
                rolling.run_round(placement)
        except (PermissionDenied, ValidationError) as exc:
            raise CommandError(_message(exc), returncode=BAD_INPUT) from exc
        placement.refresh_from_db()
        state = rolling.describe(placement)
        if options["output"] == "json":
            self.stdout.write(json.dumps(state, indent=2, sort_keys=True))
        else:
            self.stdout.write(render(placement, state))


def _message(exc: Exception) -> str:
    return " ".join(exc.messages) if isinstance(exc, ValidationError) else str(exc)


def render(placement: Placement, state: dict[str, Any]) -> str:
    """The rollout as text, one fact per line and a row per binding (or decision group)."""
    if "preview" in state:
        return _render_preview(placement, state["preview"])
    summary = state["rollout"]
    wave = summary.get("wave") or {}
    lines = [
        f"{placement.kind} {placement} on hub {placement.hub.name} ({placement.owner})",
        f"Resource snapshot: {state['resourceSnapshot']['name']}",
    ]
    if state["rolling"]:
        budgets = summary.get("budgets") or {}
        lines += [
            f"Round: {summary.get('round', 0)} at {summary.get('at', '-')}",
            f"Wave: {wave.get('number', 0)} {', '.join(wave.get('updated') or []) or '-'}",
            "Budgets: " + (" ".join(f"{k}={v}" for k, v in budgets.items()) or "-"),
            f"Next round: {summary.get('requeueAt') or 'none'}",
        ]
        if summary.get("error"):
            lines.append(f"Error: {summary['error']}")
    headers = ("CLUSTER", "STATE", "SNAPSHOT", *rolling.CONDITION_COLUMNS, "VERDICT")
    rows = [
        (
            c["cluster"],
            c["state"],
            c["resourceSnapshot"] or "-",
            *((c["conditions"].get(t) or {}).get("status", "-") for t in rolling.CONDITION_COLUMNS),
            c["verdict"] or "-",
        )
        for c in state["clusters"]
    ]
    return "\n".join([*lines, "", *aligned(headers, rows)])


def _render_preview(placement: Placement, preview: dict[str, Any] | None) -> str:
    if preview is None:
        return f"{placement.kind} {placement}: no decision groups or rollout strategy to preview"
    lines = [f"{placement.kind} {placement}: {preview['strategy']} in {preview['steps']} step(s)"]
    if preview["error"]:
        lines.append(f"Error: {preview['error']}")
    for group in preview["groups"]:
        for step in group["steps"]:
            name = group["groupName"] or "(default)"
            lines.append(
                f"  step {step['step']}: {name}[{group['groupIndex']}] {', '.join(step['clusters'])}"
            )
    return "\n".join(lines)
