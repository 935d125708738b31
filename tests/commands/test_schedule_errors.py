"""`schedule` on bad input: exit code 2 and one `FILE: document N: FIELD: message` line per problem.

Misconfigured-but-accepted input is not bad input: it yields the upstream Misconfigured condition, exit 0.
"""

import os
import subprocess
import sys
from pathlib import Path

import pytest
from django.core.management.base import CommandError

from tests.commands.conftest import BAD, MANIFESTS, NOW, OCM_HUB, condition

REPO = Path(__file__).resolve().parents[2]


def _problem_lines(run_schedule, *args: str) -> list[str]:
    with pytest.raises(CommandError) as caught:
        run_schedule(*args, "--now", NOW, "-o", "json")
    assert caught.value.returncode == 2
    header, *lines = str(caught.value).splitlines()
    assert header == f"the input has {len(lines)} problem(s):"
    return lines


def test_every_problem_is_reported_with_file_document_and_field(run_schedule) -> None:
    invalid_yaml, placements = BAD / "invalid-yaml.yaml", BAD / "placements.yaml"

    lines = _problem_lines(run_schedule, "-f", str(BAD))

    assert lines[:2] == [
        # `   clusterSets:` is indented one column deeper than `numberOfClusters:` above it
        f"{invalid_yaml}: document 2: invalid YAML at line 13, column 15: "
        "mapping values are not allowed in this context",
        f"{placements}: document 1: metadata.name: Required value: name is required",
    ]
    weight, values, number = lines[2:]
    # the CRD's maximum, worded as the apiserver words it
    assert weight == (
        f"{placements}: document 2: spec.prioritizerPolicy.configurations[0].weight: Invalid value: 11: "
        "spec.prioritizerPolicy.configurations[0].weight in body should be less than or equal to 10"
    )
    assert values == (
        f"{placements}: document 3: "
        "spec.predicates[0].requiredClusterSelector.labelSelector.matchExpressions[0].values: "
        "must be a list of strings"
    )
    assert number.startswith(f"{placements}: document 4: spec.numberOfClusters: ")
    assert "integer" in number


def test_reading_and_parsing_problems_are_reported_together(run_schedule, tmp_path: Path) -> None:
    missing = tmp_path / "nowhere.yaml"

    lines = _problem_lines(run_schedule, "-f", str(missing), "-f", str(BAD / "placements.yaml"))

    assert lines[0] == f"{missing}: no such file or directory"
    assert len(lines) == 5


def test_wrong_types_in_metadata_name_the_field(run_schedule, tmp_path: Path) -> None:
    path = tmp_path / "cluster.json"
    path.write_text(
        '{"apiVersion": "cluster.open-cluster-management.io/v1", "kind": "ManagedCluster",'
        ' "metadata": {"name": "c1", "labels": {"replicas": 3}}}'
    )

    lines = _problem_lines(run_schedule, "-f", str(path))

    assert lines == [
        f"{path}: document 1: metadata.labels.replicas: Invalid type: expected string, got integer",
    ]


def test_stdin_problems_are_named_stdin(run_schedule) -> None:
    text = "just a string\n---\napiVersion: cluster.open-cluster-management.io/v1\nmetadata:\n  name: c1\n"

    with pytest.raises(CommandError) as caught:
        run_schedule("-f", "-", "--now", NOW, stdin=text)

    assert caught.value.returncode == 2
    assert str(caught.value).splitlines()[1:] == [
        "<stdin>: document 1: expected a Kubernetes object (a mapping), got string",
        "<stdin>: document 2: kind: Required value",
    ]


def test_duplicate_objects_are_a_problem(run_schedule) -> None:
    clusters = OCM_HUB / "clusters.yaml"

    lines = _problem_lines(run_schedule, "-f", str(clusters), "-f", str(clusters))

    assert lines[0] == (
        f'{clusters}: document 1: metadata.name: Duplicate value: "cluster1": '
        f"ManagedCluster already defined in {clusters}: document 1"
    )


def test_bad_now_and_bad_output_are_exit_2(run_schedule) -> None:
    with pytest.raises(CommandError) as bad_now:
        run_schedule("-f", str(OCM_HUB), "--now", "yesterday")
    with pytest.raises(CommandError) as bad_output:
        run_schedule("-f", str(OCM_HUB), "-o", "xml")

    assert bad_now.value.returncode == 2
    assert str(bad_now.value).startswith("--now: ")
    assert bad_output.value.returncode == 2
    assert "json, yaml, table" in str(bad_output.value)


def test_misconfigured_placements_are_reported_not_rejected(schedule_json) -> None:
    reports = schedule_json(OCM_HUB, MANIFESTS / "ocm-misconfigured.yaml")

    # upstream: the plugin name is empty for weight/mode problems, hence the leading ":"
    mode_foo, spread = reports["mode-foo"], reports["builtin-spread"]
    assert condition(mode_foo, "PlacementMisconfigured") == {
        "type": "PlacementMisconfigured",
        "status": "True",
        "reason": "Misconfigured",
        "message": ":incorrect prioritizer policy mode: Foo",
    }
    assert condition(spread, "PlacementMisconfigured")["message"] == ":incorrect builtin prioritizer: Spread"
    # the Predicate plugin converts the selector with apimachinery, whose error it reports
    operator = reports["foo-operator"]
    assert condition(operator, "PlacementMisconfigured")["message"] == (
        'Predicate:"Foo" is not a valid label selector operator'
    )
    # nothing is selected, so PlacementSatisfied ends at NoManagedClusterMatched (as upstream)
    for report in (mode_foo, spread, operator):
        assert report["selected"] == []
        satisfied = condition(report, "PlacementSatisfied")
        assert (satisfied["status"], satisfied["reason"]) == ("False", "NoManagedClusterMatched")


def _manage(*args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "fleetui.settings"}
    return subprocess.run(
        [sys.executable, "manage.py", "schedule", *args],
        cwd=REPO,
        env=env,
        input=stdin,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def test_exit_code_is_2_for_bad_input_from_the_command_line() -> None:
    result = _manage("-f", str(BAD / "placements.yaml"), "--now", NOW)

    assert result.returncode == 2
    assert result.stdout == ""
    weight = "spec.prioritizerPolicy.configurations[0].weight"
    assert f"{BAD / 'placements.yaml'}: document 2: {weight}: Invalid value: 11: " in result.stderr


def test_exit_code_is_0_for_unsatisfied_and_misconfigured_placements() -> None:
    result = _manage("-f", str(OCM_HUB), "-f", str(MANIFESTS / "ocm-misconfigured.yaml"), "--now", NOW)

    assert result.returncode == 0, result.stderr
    assert "incorrect prioritizer policy mode: Foo" in result.stdout


def test_unknown_kinds_warn_on_stderr_and_exit_0() -> None:
    config_map = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: settings\n"

    result = _manage("-f", "-", "-o", "json", "--now", NOW, stdin=config_map)

    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == '{\n  "placements": []\n}'
    ignored = "<stdin>: document 1: kind ConfigMap (apiVersion v1) is not used by the scheduler; ignored"
    assert ignored in result.stderr


def test_missing_filename_is_a_usage_error() -> None:
    result = _manage("--now", NOW)

    assert result.returncode == 2
    assert "-f/--filename" in result.stderr
