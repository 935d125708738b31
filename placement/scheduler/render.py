"""Rendering scheduling reports (the `to_report()` dicts of OCM and Fleet results) as text.

- `render_json`: `{"placements": [...]}`, the reports as they are.
- `render_yaml`: the PlacementDecision and ClusterResourceBinding manifests, a stream for `kubectl apply`.
- `render_table`: per placement an `oc describe`-like block, then its score matrix.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import yaml

Report = Mapping[str, Any]

PLACEMENT_KIND = "Placement"
ABSENT = "-"
SELECTED_MARK = "*"

_BOLD, _GREEN, _DIM, _RESET = "\033[1m", "\033[32m", "\033[2m", "\033[0m"


def render_json(reports: Sequence[Report]) -> str:
    """The `-o json` document: `{"placements": [report, ...]}` in input order."""
    return json.dumps({"placements": list(reports)}, indent=2, ensure_ascii=False) + "\n"


def render_yaml(reports: Sequence[Report]) -> str:
    """The objects the schedulers would write, as one multi-document YAML stream.

    OCM placements contribute their PlacementDecisions, CRPs the ClusterResourceBindings the scheduler
    would create or patch. `status.decisions` is kept: `kubectl apply` ignores it (a subresource), but it
    is the decision itself, so a reader needs it.
    """
    documents = [
        f"# {_title(report)}\n" + yaml.safe_dump(manifest, sort_keys=False, default_flow_style=False)
        for report in reports
        for manifest in _written_manifests(report)
    ]
    return "".join(f"---\n{document}" for document in documents)


def _written_manifests(report: Report) -> list[Mapping[str, Any]]:
    if report["kind"] == PLACEMENT_KIND:
        return list(report.get("decisions") or [])
    return list(report.get("bindings") or [])


def render_table(reports: Sequence[Report], *, color: bool = False) -> str:
    """Human output: for each placement a describe block and its score matrix; ANSI colours if `color`."""
    paint = _painter(color)
    blocks = [_describe(report, paint) for report in reports]
    if not blocks:
        return "No Placements or ClusterResourcePlacements in the input.\n"
    return "\n\n".join(blocks) + "\n"


Paint = Callable[[str, str], str]


def _painter(color: bool) -> Paint:
    if not color:
        return lambda _code, text: text
    return lambda code, text: f"{code}{text}{_RESET}" if code else text


def _describe(report: Report, paint: Paint) -> str:
    is_ocm = report["kind"] == PLACEMENT_KIND
    lines = _header_lines(report)
    lines += section("Conditions", conditions_table(report))
    if is_ocm:
        lines += section("Decision Groups", decision_groups_table(report))
        lines += section("Decisions", placement_decisions_table(report))
    else:
        lines += section("Bindings", bindings_table(report))
        lines += section("Decisions", _cluster_decisions_table(report))
    lines += section("Events", _events_table(report))
    if report.get("notes"):
        lines += section("Notes", [f"  {note}" for note in report["notes"]])
    header = [paint(_BOLD, line) if not line.startswith(" ") else line for line in lines]
    matrix = _ocm_score_matrix(report, paint) if is_ocm else _fleet_score_matrix(report, paint)
    return "\n".join([*header, paint(_BOLD, "Scores:"), *matrix])


def _title(report: Report) -> str:
    namespace = report.get("namespace")
    name = f"{namespace}/{report['name']}" if namespace else report["name"]
    return f"{report['kind']} {name}"


def _header_lines(report: Report) -> list[str]:
    selected = list(report.get("selected") or [])
    fields = [
        ("Name", report["name"]),
        ("Namespace", report.get("namespace") or ""),
        ("Kind", report["kind"]),
        ("Number of selected clusters", str(report.get("numberOfSelectedClusters", len(selected)))),
        ("Selected clusters", ", ".join(selected) or "<none>"),
    ]
    requeue = report.get("requeueAfterSeconds")
    if requeue is not None:
        fields.append(("Requeue after", f"{requeue:g}s"))
    if report.get("skipped"):
        fields.append(("Skipped", "being deleted or scheduling disabled: upstream leaves it untouched"))
    if report.get("error"):
        fields.append(("Error", report["error"]))
    width = max(len(label) for label, _ in fields) + 2
    return [f"{label + ':':<{width}}{value}".rstrip() for label, value in fields]


def section(title: str, body: list[str]) -> list[str]:
    return [f"{title}:", *(body or ["  <none>"])]


def conditions_table(report: Report) -> list[str]:
    rows = [
        [c.get("type", ""), c.get("status", ""), c.get("reason", ""), c.get("message", "")]
        for c in report.get("conditions") or []
    ]
    return aligned(["Type", "Status", "Reason", "Message"], rows, underline=True) if rows else []


def decision_groups_table(report: Report) -> list[str]:
    rows = [
        [
            str(g.get("decisionGroupIndex", "")),
            g.get("decisionGroupName", ""),
            str(g.get("clusterCount", "")),
            ", ".join(g.get("decisions") or []),
        ]
        for g in report.get("decisionGroups") or []
    ]
    return aligned(["Index", "Name", "Clusters", "PlacementDecisions"], rows, underline=True) if rows else []


def placement_decisions_table(report: Report) -> list[str]:
    rows = []
    for manifest in report.get("decisions") or []:
        names = [d.get("clusterName", "") for d in (manifest.get("status") or {}).get("decisions") or []]
        rows.append([manifest["metadata"]["name"], ", ".join(names) or "<none>"])
    return aligned(["Name", "Clusters"], rows, underline=True) if rows else []


def bindings_table(report: Report) -> list[str]:
    specs = [(b["metadata"]["name"], b.get("spec") or {}) for b in report.get("bindings") or []]
    rows = [[name, spec.get("targetCluster", ""), spec.get("state", "")] for name, spec in specs]
    return aligned(["Name", "Cluster", "State"], rows, underline=True) if rows else []


def _cluster_decisions_table(report: Report) -> list[str]:
    rows = [
        [d.get("clusterName", ""), _yes_no(d.get("selected")), d.get("reason", "")]
        for d in report.get("decisions") or []
    ]
    return aligned(["Cluster", "Selected", "Reason"], rows, underline=True) if rows else []


def _events_table(report: Report) -> list[str]:
    rows = [[e.get(key, "") for key in ("type", "reason", "message")] for e in report.get("events") or []]
    return aligned(["Type", "Reason", "Message"], rows, underline=True) if rows else []


def _ocm_score_matrix(report: Report, paint: Paint) -> list[str]:
    """Cluster x prioritizer raw scores, a weights row, total, rank, selected marker and filteredBy."""
    prioritizers = list(report.get("weights") or {})
    clusters = list(report.get("clusters") or [])
    headers = ["CLUSTER", *prioritizers, "TOTAL", "RANK", "SELECTED", "FILTERED BY"]
    weights_row = ["(weight)", *(str(report["weights"][p]) for p in prioritizers), "", "", "", ""]
    rows = [weights_row]
    for cluster in clusters:
        scores = cluster.get("scores") or {}
        rows.append(
            [
                cluster["name"],
                *(_number(scores.get(p)) for p in prioritizers),
                _number(cluster.get("total")),
                _number(cluster.get("rank")),
                SELECTED_MARK if cluster.get("selected") else "",
                cluster.get("filteredBy") or "",
            ]
        )
    return _painted_rows(aligned(headers, rows), [None, *clusters], paint)


def _fleet_score_matrix(report: Report, paint: Paint) -> list[str]:
    """Cluster x (affinity, topology spread) scores, selected marker and filteredBy."""
    clusters = list(report.get("clusters") or [])
    headers = ["CLUSTER", "AFFINITY", "TOPOLOGY SPREAD", "SELECTED", "FILTERED BY"]
    rows = [
        [
            cluster["name"],
            _number(cluster.get("affinityScore")),
            _number(cluster.get("topologySpreadScore")),
            SELECTED_MARK if cluster.get("selected") else "",
            cluster.get("filteredBy") or "",
        ]
        for cluster in clusters
    ]
    return _painted_rows(aligned(headers, rows), clusters, paint)


def _painted_rows(lines: list[str], clusters: Sequence[Mapping[str, Any] | None], paint: Paint) -> list[str]:
    """Header bold, selected clusters green, filtered-out clusters dim (only when painting)."""
    painted = [paint(_BOLD, lines[0])]
    for line, cluster in zip(lines[1:], clusters, strict=True):
        code = ""
        if cluster is not None and cluster.get("selected"):
            code = _GREEN
        elif cluster is not None and cluster.get("filteredBy"):
            code = _DIM
        painted.append(paint(code, line))
    return painted


def aligned(headers: Sequence[str], rows: Sequence[Sequence[str]], *, underline: bool = False) -> list[str]:
    """Left-aligned columns two spaces apart, indented by two, with no trailing spaces."""
    table = [list(headers)]
    if underline:
        table.append(["-" * len(h) for h in headers])
    table += [list(row) for row in rows]
    widths = [max(len(row[i]) for row in table) for i in range(len(headers))]
    return ["  " + "  ".join(cell.ljust(widths[i]) for i, cell in enumerate(row)).rstrip() for row in table]


def _number(value: Any) -> str:
    return ABSENT if value is None else str(value)


def _yes_no(value: Any) -> str:
    return "yes" if value else "no"
