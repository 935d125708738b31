"""`python -m conformance`: arguments, the per-family and last lines, shrinking and regression files.

The oracle is replaced by a stand-in that answers with our own verdicts, altered where a case holds a
cluster tainted `gpu`, so the run meets a disagreement whatever state the real oracle is in.
"""

from __future__ import annotations

import io
import json
import random
from pathlib import Path
from typing import Any

import pytest

from conformance import __main__ as cli
from conformance.cases import Case
from conformance.verdict import our_result
from tests.conformance.cases import clusters_tainted, ocm_case
from tests.vector_adapters.conformance_cases import run_conformance_case


class DisagreeingOracle:
    """Answers our verdicts, except that a case with a `gpu`-tainted cluster has one more feasible cluster."""

    def __init__(self) -> None:
        self.calls = 0

    def __enter__(self) -> DisagreeingOracle:
        return self

    def __exit__(self, *exc_info: object) -> None:
        return None

    def run(self, case: Case) -> dict[str, Any]:
        self.calls += 1
        result = our_result(case) | {"id": case["id"], "error": ""}
        if clusters_tainted(case, "gpu") and "placements" in result:
            for verdict in result["placements"]:
                verdict["feasible"] = [*(verdict["feasible"] or []), "upstream-only"]
        return result


def hand_cases(rng: random.Random, case_id: str) -> Case:
    case = ocm_case() | {"id": case_id}
    if rng.random() < 0.5:
        # without the tainted cluster both sides agree
        case["manifests"] = [m for m in case["manifests"] if m["metadata"]["name"] != "c4"]
    return case


@pytest.fixture
def stand_ins(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    monkeypatch.setattr(cli, "build", lambda: False)
    monkeypatch.setattr(cli, "Oracle", DisagreeingOracle)
    monkeypatch.setattr(cli, "generator", lambda family: hand_cases)
    monkeypatch.setattr(cli.regressions, "FOLDER", tmp_path)
    return tmp_path


def _disagreeing(seed: int, cases: int) -> list[int]:
    return [
        index
        for index in range(cases)
        if clusters_tainted(hand_cases(cli.case_rng("ocm", seed, index), "x"), "gpu")
    ]


def test_a_run_reports_shrinks_and_stores_each_disagreement(stand_ins: Path) -> None:
    out = io.StringIO()

    status = cli.main(["--family", "ocm", "--cases", "6", "--seed", "5", "--write-regressions"], out)

    lines = out.getvalue().splitlines()
    disagreeing = _disagreeing(5, 6)
    assert disagreeing, "the seed should give at least one disagreeing case"
    assert status == 1
    assert lines[0] == "conformance: seed 5 (replay with make conformance SEED=5)"
    assert lines[-1] == f"conformance: 6 cases, {len(disagreeing)} disagreements (seed 5)"
    assert lines[-2].startswith(f"conformance ocm: 6 cases, {len(disagreeing)} disagreements, ours ")
    first = disagreeing[0]
    assert f"conformance ocm: case ocm-seed-5-case-{first} disagrees:" in lines
    feasible = '["c1", "c2", "c3", "upstream-only"], ours ["c1", "c2", "c3"]'
    assert f"  Placement web/frontend: feasible: upstream {feasible}" in lines
    assert "  shrunk from 11 to 2 manifests" in lines

    vectors = json.loads((stand_ins / "ocm.json").read_text())["vectors"]
    assert [v["id"] for v in vectors] == [f"ocm-seed-5-case-{index}" for index in disagreeing]
    stored = vectors[0]
    assert stored["plugin"] == "Conformance"
    assert stored["source"] == f"make conformance SEED=5, case {first}, shrunk"
    assert [m["kind"] for m in stored["manifests"]] == ["ManagedCluster", "Placement"]
    # the stored expectation is the stand-in oracle's, so our side still fails it, line by line
    with pytest.raises(AssertionError, match="feasible: upstream"):
        run_conformance_case(stored)


def test_a_replay_writes_the_same_vectors_again_not_twice(stand_ins: Path) -> None:
    arguments = ["--family", "ocm", "--cases", "4", "--seed", "5", "--write-regressions"]
    cli.main(arguments, io.StringIO())
    first = (stand_ins / "ocm.json").read_text()

    cli.main(arguments, io.StringIO())

    assert (stand_ins / "ocm.json").read_text() == first


def test_without_write_regressions_nothing_is_stored(stand_ins: Path) -> None:
    cli.main(["--family", "ocm", "--cases", "4", "--seed", "5"], io.StringIO())

    assert list(stand_ins.iterdir()) == []


def test_a_fresh_seed_is_printed_first_and_agreement_exits_0(stand_ins: Path) -> None:
    out = io.StringIO()

    status = cli.main(["--family", "ocm", "--cases", "0"], out)

    first, *_, last = out.getvalue().splitlines()
    seed = first.split()[2]
    assert status == 0
    assert last == f"conformance: 0 cases, 0 disagreements (seed {seed})"


@pytest.mark.parametrize(
    "arguments", [["--cases", "-1"], ["--cases", "many"], ["--family", "karmada"], ["--seed"]]
)
def test_bad_arguments_exit_2(arguments: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as raised:
        cli.main(arguments, io.StringIO())

    assert raised.value.code == 2
    assert "usage: python -m conformance" in capsys.readouterr().err


def test_an_oracle_that_fails_exits_2_with_its_message(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    def broken() -> bool:
        raise cli.OracleError("go build ./cmd/oracle failed (exit 1)")

    monkeypatch.setattr(cli, "build", broken)

    assert cli.main(["--cases", "1", "--seed", "3"], io.StringIO()) == 2
    assert "conformance: go build ./cmd/oracle failed (exit 1)" in capsys.readouterr().err


def test_only_the_first_disagreements_of_a_family_are_shrunk(
    stand_ins: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(cli, "MAX_SHRUNK", 1)
    out = io.StringIO()

    cli.main(["--family", "ocm", "--cases", "6", "--seed", "5", "--write-regressions"], out)

    disagreeing = _disagreeing(5, 6)
    assert len(disagreeing) > 1, "the seed should give more than one disagreeing case"
    assert out.getvalue().count("  shrunk from") == 1
    skipped = "  not shrunk: only the first 1 disagreements of a family are"
    assert out.getvalue().count(skipped) == len(disagreeing) - 1
    assert len(json.loads((stand_ins / "ocm.json").read_text())["vectors"]) == 1
