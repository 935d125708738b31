"""`python manage.py runs list|show|run|stop|step|resume` — staged update runs from the shell.

- `list [--hub H] [--owner hub|dashboard] [-o json]`: one line per run, like `kubectl get csur`.
- `show NAME [--hub H] [-o json|yaml]`: the run, its stages with their clusters in update order and
  their tasks, and its conditions; `-o json` / `-o yaml` print the ClusterStagedUpdateRun object.
- `run NAME` / `stop NAME`: set a dashboard-owned run's state (audited as this command).
- `step NAME`: reconcile a dashboard-owned run once, now, and print what happened.
- `resume NAME`: step a stuck dashboard-owned run now, its failed attempts forgotten (audited as this
  command); the runner (celery beat, or run_periodic without a broker) takes its later steps.
"""

import json
from datetime import timedelta
from typing import Any

import yaml
from django.core.exceptions import PermissionDenied, ValidationError
from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.utils import timezone

from placement.models import StagedUpdateRun
from placement.rollouts import runs as rollouts
from placement.rollouts import tables
from placement.scheduler.render import aligned

BAD_INPUT = 2
ACTOR = "manage.py runs"
OUTPUTS = ("table", "json", "yaml")


class Command(BaseCommand):
    help = "List, show, run, stop, step or resume staged update runs."

    def add_arguments(self, parser: CommandParser) -> None:
        commands = parser.add_subparsers(dest="command", required=True)
        listing = commands.add_parser("list", help="every run, one line each")
        listing.add_argument("--owner", choices=["hub", "dashboard"])
        for name, text in (
            ("show", "one run: stages, clusters, tasks, conditions"),
            ("run", "set a dashboard-owned run's state to Run"),
            ("stop", "set a dashboard-owned run's state to Stop"),
            ("step", "reconcile a dashboard-owned run once, now"),
            ("resume", "step a stuck dashboard-owned run now (audited)"),
        ):
            commands.add_parser(name, help=text).add_argument("name")
        for sub in commands.choices.values():
            sub.add_argument("--hub", metavar="NAME", help="the hub (needed when several hold the name)")
            sub.add_argument("-o", "--output", choices=OUTPUTS, default="table")

    def handle(self, *args: Any, **options: Any) -> None:
        command = options["command"]
        if command == "list":
            self._list(options)
            return
        run = _find(options["name"], options["hub"])
        if command in ("run", "stop"):
            run = _set_state(run, rollouts.RUN if command == "run" else rollouts.STOP)
        elif command == "step":
            self.stdout.write(_step(run))
            run.refresh_from_db()
        elif command == "resume":
            run = _resume(run)
        self.stdout.write(_render(run, options["output"]))

    def _list(self, options: dict[str, Any]) -> None:
        runs = rollouts.with_pending_approvals(StagedUpdateRun.objects.order_by("hub__name", "name"))
        if options["hub"]:
            runs = runs.filter(hub__name=options["hub"])
        if options["owner"]:
            runs = runs.filter(owner=options["owner"])
        if options["output"] != "table":
            items = {"apiVersion": "v1", "kind": "List", "items": [rollouts.run_object(r) for r in runs]}
            self.stdout.write(_dump(items, options["output"]))
            return
        self.stdout.write("\n".join(_table([_row(run) for run in runs])))


HEADERS = (
    "HUB",
    "NAME",
    "OWNER",
    "PLACEMENT",
    "STRATEGY",
    "STATE",
    "INITIALIZED",
    "PROGRESSING",
    "SUCCEEDED",
    "STAGE",
    "APPROVALS",
)


def _table(rows: list[list[str]]) -> list[str]:
    # kubectl style: no indent, two spaces between columns
    return [line[2:] for line in aligned(HEADERS, rows)] if rows else ["No runs."]


def _row(run: "rollouts.RunWithApprovals") -> list[str]:
    summary = tables.RunSummary.of(run.status or {})
    conditions = [(c or {}).get("status", "") for _, c, _, _ in summary.chips]
    return [
        run.hub.name,
        run.name,
        run.owner,
        run.placement_name,
        run.strategy_name,
        str(run.spec.get("state") or rollouts.INITIALIZE),
        *conditions,
        summary.current_stage,
        str(run.pending_approvals),
    ]


def _find(name: str, hub: str | None) -> StagedUpdateRun:
    found = StagedUpdateRun.objects.filter(name=name).select_related("hub", "placement")
    if hub:
        found = found.filter(hub__name=hub)
    runs = list(found[:2])
    if not runs:
        raise CommandError(f'ClusterStagedUpdateRun "{name}" not found', returncode=BAD_INPUT)
    if len(runs) > 1:
        raise CommandError(
            f"ClusterStagedUpdateRun {name} exists on several hubs; give --hub", returncode=BAD_INPUT
        )
    return runs[0]


def _set_state(run: StagedUpdateRun, state: str) -> StagedUpdateRun:
    try:
        return rollouts.set_run_state(run, state, ACTOR)
    except PermissionDenied as exc:
        raise CommandError(str(exc), returncode=BAD_INPUT) from exc
    except ValidationError as exc:
        text = "; ".join(f"{path}: {', '.join(m)}" for path, m in exc.message_dict.items())
        raise CommandError(text, returncode=BAD_INPUT) from exc


def _step(run: StagedUpdateRun) -> str:
    if run.read_only:
        why = f"{run.name} belongs to hub {run.hub.name}; its controller runs it"
        raise CommandError(why, returncode=BAD_INPUT)
    answer = rollouts.reconcile_run(run.pk, force=True)
    if answer["state"] == "failed":
        raise CommandError(f"the step failed (attempt {answer['attempts']}): {answer['error']}")
    if answer["state"] != "reconciled":
        return f"Nothing to do ({answer['state']}).\n"
    after = answer["requeue_after"]
    next_step = "no further step" if after is None else f"next step in {timedelta(seconds=after)}"
    return "\n".join([*answer["events"], f"({next_step})", ""])


def _resume(run: StagedUpdateRun) -> StagedUpdateRun:
    try:
        return rollouts.resume_run(run, ACTOR)
    except PermissionDenied as exc:
        raise CommandError(str(exc), returncode=BAD_INPUT) from exc


def _dump(value: Any, output: str) -> str:
    if output == "json":
        return json.dumps(value, indent=2)
    return yaml.safe_dump(value, sort_keys=False).rstrip("\n")


def _render(run: StagedUpdateRun, output: str) -> str:
    if output != "table":
        return _dump(rollouts.run_object(run), output)
    status = run.status or {}
    summary = tables.RunSummary.of(status)
    lines = [
        f"Name:         {run.name}",
        f"Hub:          {run.hub.name} ({'hub-owned, read-only' if run.read_only else 'dashboard-owned'})",
        f"Placement:    {run.placement_name}",
        f"Strategy:     {run.strategy_name}",
        f"State:        {run.spec.get('state') or rollouts.INITIALIZE}",
        f"Snapshots:    resource {status.get('resourceSnapshotIndexUsed', '-')}, "
        f"policy {status.get('policySnapshotIndexUsed', '-')}",
        f"Stage:        {summary.current_stage or '-'}",
    ]
    if not run.read_only:
        lines.append(f"Next step:    {run.requeue_at.isoformat() if run.requeue_at else '-'}")
    if run.last_error:
        lines.append(f"Last error:   {run.last_error} (failed {run.attempts} time(s) in a row)")
    if summary.started or run.read_only:
        lines += ["Stages:", *_stages(status)]
    else:
        preview = rollouts.preview(run)
        body = [f"  {preview.error}"] if preview.error else _stages(preview.status)
        lines += ["Preview (before the run starts):", *body]
    return "\n".join([*lines, "Conditions:", *_conditions(status)])


def _stages(status: dict[str, Any]) -> list[str]:
    lines = []
    for stage in tables.stage_rows(status, {}, timezone.now()):
        lines.append(f"  {stage.name}: {stage.state}")
        lines += [f"    {i}. {c.name}: {c.state}" for i, c in enumerate(stage.clusters, 1)]
        for task in stage.tasks:
            detail = task.request_name or task.wait_text
            lines.append(f"    {task.when}-stage {task.type}: {task.state} {detail}".rstrip())
    return lines or ["  <none>"]


def _conditions(status: dict[str, Any]) -> list[str]:
    keys = ("type", "status", "reason", "message")
    rows = [[str(c.get(key, "")) for key in keys] for c in status.get("conditions") or ()]
    return aligned(["Type", "Status", "Reason", "Message"], rows) if rows else ["  <none>"]
