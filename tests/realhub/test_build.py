"""How the real hub's binaries and CRDs are found: no binary needed, only Go and its module cache."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from conformance.realhub import BINARIES, Binary, crd_paths, needs_build
from tests.conftest import unavailable


@pytest.fixture
def go() -> None:
    if shutil.which("go") is None:
        unavailable("go is not installed: the real hub's CRDs are found through its module cache")


def test_every_binary_is_a_tool_of_a_module_of_the_repository() -> None:
    assert [binary.name for binary in BINARIES] == ["kube-apiserver", "etcd", "placement", "hubagent"]
    for binary in BINARIES:
        # a `tool` directive (in a block or alone) pins the package with its module's requirements
        lines = {
            line.strip().removeprefix("tool ") for line in (binary.module / "go.mod").read_text().splitlines()
        }
        assert binary.package in lines


def test_a_binary_is_built_when_missing_or_older_than_its_go_mod(tmp_path: Path) -> None:
    module, bin_dir = tmp_path / "module", tmp_path / "bin"
    module.mkdir()
    bin_dir.mkdir()
    for name in ("go.mod", "go.sum"):
        (module / name).write_text("")
        os.utime(module / name, (1_000, 1_000))
    binary = Binary("etcd", "go.etcd.io/etcd/server/v3", module)
    assert needs_build(binary, bin_dir)

    (bin_dir / "etcd").write_text("")
    os.utime(bin_dir / "etcd", (4_000_000_000, 4_000_000_000))
    assert not needs_build(binary, bin_dir)

    os.utime(module / "go.sum", (4_000_000_001, 4_000_000_001))
    assert needs_build(binary, bin_dir)


@pytest.mark.usefixtures("go")
def test_the_crds_are_read_from_the_module_cache_not_the_repository() -> None:
    paths = crd_paths()
    names = {path.name for path in paths}
    assert "0000_00_clusters.open-cluster-management.io_managedclusters.crd.yaml" in names
    assert "placement.kubernetes-fleet.io_clusterapprovalrequests.yaml" in names
    repository = Path(__file__).resolve().parents[2]
    assert not any(path.is_relative_to(repository) for path in paths)
    assert all(path.is_file() for path in paths)
