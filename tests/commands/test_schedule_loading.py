"""Reading manifests for `schedule`: files, folders, stdin, multi-document YAML, JSON lists, legacy forms."""

import io
import json
from pathlib import Path

from placement.manifests import STDIN_SOURCE, load_manifests
from placement.scheduler.offline import parse_documents
from tests.commands.conftest import FLEET_HUB, MANIFESTS, NOW, OCM_HUB, cluster_row

CLUSTER = {"apiVersion": "cluster.open-cluster-management.io/v1", "kind": "ManagedCluster"}


def _cluster(name: str) -> dict[str, object]:
    return {**CLUSTER, "metadata": {"name": name}}


def _no_stdin() -> io.StringIO:
    return io.StringIO("")


def test_folder_is_read_recursively_in_sorted_order(tmp_path: Path) -> None:
    (tmp_path / "b").mkdir()
    (tmp_path / "b" / "z.yaml").write_text(json.dumps(_cluster("from-b-z")))
    (tmp_path / "a.yml").write_text(json.dumps(_cluster("from-a")))
    (tmp_path / "c.json").write_text(json.dumps(_cluster("from-c")))
    (tmp_path / "notes.txt").write_text("not a manifest")

    loaded = load_manifests([str(tmp_path)], _no_stdin())

    assert [d.name for d in loaded.documents] == ["from-a", "from-b-z", "from-c"]
    assert loaded.problems == []


def test_documents_are_numbered_from_one_and_empty_documents_count(tmp_path: Path) -> None:
    path = tmp_path / "clusters.yaml"
    one, three = json.dumps(_cluster("one")), json.dumps(_cluster("three"))
    path.write_text(f"# leading comment only\n---\n{one}\n---\n---\n{three}\n")

    loaded = load_manifests([str(path)], _no_stdin())

    assert [(d.number, d.name) for d in loaded.documents] == [(1, "one"), (3, "three")]
    assert loaded.documents[0].where == f"{path}: document 1"


def test_json_file_may_hold_one_object_a_list_or_a_kind_list(tmp_path: Path) -> None:
    (tmp_path / "1-object.json").write_text(json.dumps(_cluster("single")))
    (tmp_path / "2-array.json").write_text(json.dumps([_cluster("array-1"), _cluster("array-2")]))
    (tmp_path / "3-list.json").write_text(
        json.dumps({"apiVersion": "v1", "kind": "List", "items": [_cluster("list-1"), _cluster("list-2")]})
    )

    loaded = load_manifests([str(tmp_path)], _no_stdin())

    assert [(Path(d.source).name, d.number, d.name) for d in loaded.documents] == [
        ("1-object.json", 1, "single"),
        ("2-array.json", 1, "array-1"),
        ("2-array.json", 2, "array-2"),
        ("3-list.json", 1, "list-1"),
        ("3-list.json", 2, "list-2"),
    ]


def test_dash_reads_stdin() -> None:
    loaded = load_manifests(["-"], io.StringIO(json.dumps(_cluster("piped"))))

    assert [(d.source, d.number, d.name) for d in loaded.documents] == [(STDIN_SOURCE, 1, "piped")]


def test_timestamps_stay_strings_as_the_apiserver_reads_them(tmp_path: Path) -> None:
    path = tmp_path / "cluster.yaml"
    path.write_text(
        "apiVersion: cluster.open-cluster-management.io/v1\nkind: ManagedCluster\nmetadata:\n  name: c1\n"
        "spec:\n  taints:\n  - key: k\n    effect: NoSelect\n    timeAdded: 2024-05-01T11:58:20Z\n"
    )

    (document,) = load_manifests([str(path)], _no_stdin()).documents

    assert document.body["spec"]["taints"][0]["timeAdded"] == "2024-05-01T11:58:20Z"


def test_a_broken_document_does_not_hide_the_next_ones(tmp_path: Path) -> None:
    path = tmp_path / "mixed.yaml"
    path.write_text("a: [\n---\n" + json.dumps(_cluster("after-the-break")) + "\n")

    loaded = load_manifests([str(path)], _no_stdin())

    assert [d.name for d in loaded.documents] == ["after-the-break"]
    assert [p.document for p in loaded.problems] == [1]


def test_unknown_kinds_are_ignored_with_a_warning(tmp_path: Path) -> None:
    path = tmp_path / "mixed.yaml"
    path.write_text("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: settings\n")
    warnings: list[str] = []

    parsed = parse_documents(load_manifests([str(path)], _no_stdin()).documents, warnings.append)

    assert parsed.objects == []
    assert warnings == [
        f"{path}: document 1: kind ConfigMap (apiVersion v1) is not used by the scheduler; ignored",
    ]


def test_hub_fixture_folders_load_without_problems() -> None:
    loaded = load_manifests([str(OCM_HUB), str(FLEET_HUB)], _no_stdin())
    parsed = parse_documents(loaded.documents, lambda _warning: None)

    assert loaded.problems == []
    assert parsed.problems == []
    kinds = {(item.family.value, item.document.kind) for item in parsed.objects}
    assert ("ocm", "AddOnPlacementScore") in kinds
    assert ("fleet", "MemberCluster") in kinds


def test_legacy_set_label_and_prioritizer_name_are_read_as_upstream_maps_them(schedule_json) -> None:
    report = schedule_json(MANIFESTS / "ocm-legacy.yaml")["legacy-app"]

    # LegacyClusterSetLabel == ExclusiveClusterSetLabel: both clusters are members of "legacy".
    # `{name: Balance, weight: 2}` == BuiltIn Balance weight 2, mode Exact: Balance is the only prioritizer.
    # The unlabelled decision in team-b counts (Balance skips only decisions labelled as the placement's own):
    # old-east count 1 = max -> 2 * int(100 * (0.5 - 1.0)) = -100; old-west has no entry -> 100.
    # Totals x2: -200 and 200.
    assert report["weights"] == {"Balance": 2}
    assert cluster_row(report, "old-west")["scores"] == {"Balance": 100}
    assert cluster_row(report, "old-west")["total"] == 200
    assert cluster_row(report, "old-east")["total"] == -200
    assert report["selected"] == ["old-west"]


def test_metric_sorter_is_read_as_property_sorter_with_a_warning(run_schedule) -> None:
    _, stderr = run_schedule("-f", str(FLEET_HUB), "--now", NOW, "-o", "json")

    placements = FLEET_HUB / "placements.yaml"
    warning = next(line for line in stderr.splitlines() if "metricSorter" in line)
    assert f"{placements}: document 1: " in warning
    assert "propertySorter" in warning
