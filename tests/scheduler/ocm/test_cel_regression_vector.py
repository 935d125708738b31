"""The CEL-libraries regression vector, run through our scheduler against its upstream verdict.

The vector (tests/vectors/regressions/ocm-cel.json) holds the verdict the upstream OCM scheduler gave
for a Placement whose celSelector uses the semver, regex, lists, IP/CIDR, URL, format and strings
libraries; each cluster but one fails a different library's expression.
"""

import json
from datetime import datetime
from pathlib import Path
from typing import Any

from placement.scheduler.documents import Document
from placement.scheduler.offline import run_offline

VECTORS = Path(__file__).resolve().parents[2] / "vectors" / "regressions" / "ocm-cel.json"


def _vector() -> dict[str, Any]:
    (vector,) = json.loads(VECTORS.read_text())["vectors"]
    return vector


def _our_report() -> dict[str, Any]:
    vector = _vector()
    documents = [Document("ocm-cel.json", n, body) for n, body in enumerate(vector["manifests"], start=1)]
    now = datetime.fromisoformat(vector["now"].replace("Z", "+00:00"))
    (report,) = run_offline(documents, now).reports
    return report


def test_our_scheduler_gives_the_upstream_verdict() -> None:
    (expected,) = _vector()["expected"]["placements"]
    report = _our_report()
    feasible = sorted(c["name"] for c in report["clusters"] if c["filteredBy"] is None)
    assert feasible == expected["feasible"]
    assert {c["name"]: c["scores"] for c in report["clusters"] if c["filteredBy"] is None} == {
        name: {plugin: scores[name] for plugin, scores in expected["scores"].items()} for name in feasible
    }
    assert {c["name"]: c["total"] for c in report["clusters"] if c["filteredBy"] is None} == expected[
        "totals"
    ]
    assert [{k: c[k] for k in ("type", "status", "reason")} for c in report["conditions"]] == expected[
        "conditions"
    ]
    assert [
        [d["clusterName"] for d in decision["status"]["decisions"]] for decision in report["decisions"]
    ] == [decision["clusters"] for decision in expected["decisions"]]
    assert report["numberOfSelectedClusters"] == expected["numberOfSelectedClusters"]
    assert report["decisionGroups"] == expected["decisionGroups"]
    assert report["requeueAfterSeconds"] == expected["requeueAfterSeconds"]


def test_each_excluded_cluster_fails_the_cel_selector() -> None:
    excluded = {c["name"]: c["filteredBy"] for c in _our_report()["clusters"] if c["filteredBy"] is not None}
    assert sorted(excluded) == ["edge", "lab", "west"]
    assert all("celSelector" in reason for reason in excluded.values())
