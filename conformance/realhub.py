"""A real hub's parts, built from upstream Go modules pinned in this repository, never downloaded prebuilt.

`build()` builds kube-apiserver (k8s.io/kubernetes), etcd (go.etcd.io/etcd/server/v3) and KubeFleet's hub
agent (github.com/kubefleet-dev/kubefleet/cmd/hubagent) from this folder's module, and the OCM placement
controller from the sibling module realhub/, into var/realhub/bin/: the controller of OCM v1.0.0 does not
compile against the Kubernetes v0.34 libraries this module (KubeFleet's oracle, kube-apiserver v1.34) selects,
so realhub/ builds it with the versions OCM released it with. Each binary is built only when it is missing or
older than its module's go.mod/go.sum or this file (the `tool` directives in go.mod pin them; this file holds
how they are built). `crd_paths()` lists the OCM and KubeFleet CRD manifests where they lie in the module
cache, so they are never copied into the repository.

    python -m conformance.realhub build   # the binaries (`make realhub-bin`)
    python -m conformance.realhub crds    # one CRD manifest path a line
"""

from __future__ import annotations

import json
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

MODULE = Path(__file__).resolve().parent
REPOSITORY = MODULE.parent
# programs whose upstream pins older Kubernetes libraries than this module selects
OLDER_KUBERNETES_MODULE = REPOSITORY / "realhub"
BIN_DIR = REPOSITORY / "var" / "realhub" / "bin"


class RealHubError(RuntimeError):
    """A binary could not be built, or a module's CRDs could not be found."""


@dataclass(frozen=True)
class Binary:
    name: str
    package: str
    # the Go module (a directory of this repository) whose go.mod pins it
    module: Path = MODULE
    # the module whose release the binary reports as its version, when a release build would stamp one
    stamped_by: str | None = None


BINARIES = (
    # kube-apiserver reports its release on /version and to clients' discovery; outside the Kubernetes
    # release tooling nothing stamps it, and it would report v0.0.0-master
    Binary("kube-apiserver", "k8s.io/kubernetes/cmd/kube-apiserver", stamped_by="k8s.io/kubernetes"),
    # etcd's server module is itself the etcd command (its main.go calls etcdmain.Main)
    Binary("etcd", "go.etcd.io/etcd/server/v3"),
    Binary("placement", "open-cluster-management.io/ocm/cmd/placement", OLDER_KUBERNETES_MODULE),
    # KubeFleet's control plane (scheduler, rollout, work generator, staged update runs): the same module
    # and Kubernetes v0.34 libraries as the KubeFleet oracle
    Binary("hubagent", "github.com/kubefleet-dev/kubefleet/cmd/hubagent"),
)

# (module, glob under the module's directory) of the CustomResourceDefinitions a real hub serves
CRD_SOURCES = (
    ("open-cluster-management.io/api", "**/*.crd.yaml"),
    ("github.com/kubefleet-dev/kubefleet", "config/crd/bases/*.yaml"),
)


def _go(*args: str, module: Path = MODULE) -> str:
    try:
        done = subprocess.run(["go", *args], cwd=module, capture_output=True, text=True, check=False)
    except FileNotFoundError as exc:
        raise RealHubError("go is not installed: the real hub cannot be built") from exc
    if done.returncode != 0:
        raise RealHubError(f"go {' '.join(args)} failed (exit {done.returncode}):\n{done.stderr.strip()}")
    return done.stdout


def binary_path(name: str, bin_dir: Path = BIN_DIR) -> Path:
    return bin_dir / name


def build_inputs(binary: Binary) -> list[Path]:
    return [binary.module / "go.mod", binary.module / "go.sum", Path(__file__).resolve()]


def needs_build(binary: Binary, bin_dir: Path = BIN_DIR) -> bool:
    """True when the binary is missing or older than its module's go.mod, go.sum or this file."""
    path = binary_path(binary.name, bin_dir)
    if not path.exists():
        return True
    built = path.stat().st_mtime
    return any(source.stat().st_mtime > built for source in build_inputs(binary))


def _ldflags(binary: Binary) -> list[str]:
    if binary.stamped_by is None:
        return []
    version = _go("list", "-m", "-f", "{{.Version}}", binary.stamped_by, module=binary.module).strip()
    major, minor = version.removeprefix("v").split(".")[:2]
    base = "k8s.io/component-base/version"
    flags = f"-X {base}.gitVersion={version} -X {base}.gitMajor={major} -X {base}.gitMinor={minor}"
    return ["-ldflags", flags]


def build(bin_dir: Path = BIN_DIR) -> list[str]:
    """Build every binary that `needs_build`; the names built. Go's build cache makes a rebuild cheap.

    One `go build` a binary: they are named after the binary, not the package's last path element
    (etcd's is `v3`), and only kube-apiserver gets its release stamped.
    """
    bin_dir.mkdir(parents=True, exist_ok=True)
    built = []
    for binary in BINARIES:
        if needs_build(binary, bin_dir):
            path = binary_path(binary.name, bin_dir)
            _go("build", "-o", str(path), *_ldflags(binary), binary.package, module=binary.module)
            built.append(binary.name)
    return built


def module_dir(module: str) -> Path:
    """The module cache directory of `module` at the version go.mod selects, downloaded when missing."""
    info = json.loads(_go("mod", "download", "-json", module))
    if info.get("Error") or not info.get("Dir"):
        raise RealHubError(f"module {module} is not in the module cache: {info.get('Error')}")
    return Path(info["Dir"])


def crd_paths() -> list[Path]:
    """The OCM and KubeFleet CRD manifests, in the module cache, sorted within each module."""
    paths: list[Path] = []
    for module, pattern in CRD_SOURCES:
        found = sorted(module_dir(module).glob(pattern))
        if not found:
            raise RealHubError(f"module {module} has no CRD manifests matching {pattern}")
        paths.extend(found)
    return paths


def main(argv: list[str]) -> int:
    if argv == ["build"]:
        built = build()
        print(f"realhub: built {', '.join(built)}" if built else "realhub: binaries up to date")
        return 0
    if argv == ["crds"]:
        print("\n".join(str(path) for path in crd_paths()))
        return 0
    print("usage: python -m conformance.realhub build|crds", file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
