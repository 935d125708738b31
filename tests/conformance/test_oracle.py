"""The oracle process wrapper against the real built oracle: one process, JSON Lines, clear failures."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from conformance.oracle import Oracle, OracleError, build, needs_build
from tests.conformance.cases import fleet_case, ocm_case


def test_one_process_answers_case_after_case_in_order(oracle_binary: Path) -> None:
    with Oracle(oracle_binary) as oracle:
        results = [oracle.run(case) for case in (ocm_case(), fleet_case(), ocm_case())]

    assert [result["id"] for result in results] == ["ocm-hand-1", "fleet-hand-1", "ocm-hand-1"]
    for result in results:
        # a verdict per placement, or the reason the upstream side refused the case
        assert len(result.get("placements") or []) == 1 or result["error"]
        assert isinstance(result["elapsedNs"], int)


def test_an_unknown_family_is_refused_by_the_oracle_not_the_wrapper(oracle_binary: Path) -> None:
    case = ocm_case() | {"family": "karmada"}

    with Oracle(oracle_binary) as oracle:
        result = oracle.run(case)  # type: ignore[arg-type]

    assert result["error"] == 'unknown family "karmada" (want ocm or fleet)'


def test_the_build_is_skipped_while_the_binary_is_newer_than_every_go_file(oracle_binary: Path) -> None:
    assert not needs_build(oracle_binary)
    assert build(oracle_binary) is False


def test_a_go_file_newer_than_the_binary_asks_for_a_build(tmp_path: Path) -> None:
    module, binary = tmp_path / "module", tmp_path / "oracle"
    (module / "cmd").mkdir(parents=True)
    source = module / "cmd" / "main.go"
    source.write_text("package main\n")
    binary.write_text("")
    os.utime(source, (1_000, 1_000))
    os.utime(binary, (2_000, 2_000))
    assert not needs_build(binary, module)

    os.utime(source, (3_000, 3_000))
    assert needs_build(binary, module)


def _script(tmp_path: Path, body: str) -> Path:
    path = tmp_path / "fake-oracle"
    path.write_text(f"#!/bin/sh\n{body}\n")
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return path


def test_a_process_that_dies_is_reported_with_its_status_and_stderr(tmp_path: Path) -> None:
    dying = _script(tmp_path, "read line; echo 'oracle: reading a case: boom' >&2; exit 2")

    with Oracle(dying) as oracle, pytest.raises(OracleError) as raised:
        oracle.run(ocm_case())

    assert "the oracle exited with status 2 on case ocm-hand-1" in str(raised.value)
    assert "oracle: reading a case: boom" in str(raised.value)


def test_a_case_without_an_answer_in_time_is_an_error(tmp_path: Path) -> None:
    silent = _script(tmp_path, "read line; exec sleep 30")

    with (
        Oracle(silent, timeout=0.2) as oracle,
        pytest.raises(OracleError, match="no answer for case ocm-hand-1"),
    ):
        oracle.run(ocm_case())


def test_an_answer_for_another_case_is_an_error(tmp_path: Path) -> None:
    confused = _script(tmp_path, 'read line; echo \'{"id": "other", "placements": []}\'; cat >/dev/null')

    with Oracle(confused) as oracle, pytest.raises(OracleError, match="answered case 'other'"):
        oracle.run(ocm_case())
