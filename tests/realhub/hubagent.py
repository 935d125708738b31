"""KubeFleet's hub agent (cmd/hubagent of github.com/kubefleet-dev/kubefleet) run against a real hub.

The agent is the upstream KubeFleet control plane: the MemberCluster controller, the scheduler, the
rollout and work generator controllers and the staged update run controller. `HubAgent(hub,
workdir).start()` writes a kubeconfig of the hub's admin, starts the agent with it, and waits until its
health probe answers. Webhooks are off: the agent registers them with the apiserver at
https://fleetwebhook.fleet-system.svc.cluster.local:9443, a name only a cluster's DNS resolves (there is no
cluster DNS or Service proxy beside a bare apiserver), on a fixed port with certificates in a fixed /tmp
folder; they only police the writes these tests make as the admin. Leader election is off (one agent). The
ClusterProfile controller is off too: it writes cluster profiles to the fleet-system namespace for the
multicluster cluster-inventory API, which nothing here reads.
"""

from __future__ import annotations

import time
import urllib.request
from pathlib import Path
from types import TracebackType

import yaml

from conformance.realhub import BIN_DIR
from tests.realhub.hub import RealHub, RealHubError, ServerProcess, wait_ready
from tests.servers import free_port

NAME = "hubagent"
# The agent never exits on SIGTERM: its controllers stop at once, but the scheduler's Run (package
# pkg/scheduler) waits for its workers before it shuts their queue down, and they wait on that queue. A
# cluster kills it after the pod's grace period; the tests give it a short one.
STOP_GRACE = 3.0


def write_kubeconfig(hub: RealHub, path: Path) -> Path:
    """A kubeconfig of the hub's admin (client certificate), as controllers read one."""
    assert hub.credentials is not None, "start the hub first"
    config = {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [
            {
                "name": "realhub",
                "cluster": {"server": hub.server, "certificate-authority": str(hub.credentials.ca)},
            }
        ],
        "users": [
            {
                "name": "admin",
                "user": {
                    "client-certificate": str(hub.credentials.client_cert),
                    "client-key": str(hub.credentials.client_key),
                },
            }
        ],
        "contexts": [{"name": "realhub", "context": {"cluster": "realhub", "user": "admin"}}],
        "current-context": "realhub",
    }
    path.write_text(yaml.safe_dump(config))
    return path


class HubAgent:
    """One hub agent process on `hub`, its log and kubeconfig under `workdir`."""

    def __init__(self, hub: RealHub, workdir: Path, bin_dir: Path = BIN_DIR) -> None:
        self.hub = hub
        self.workdir = workdir
        self.binary = bin_dir / NAME
        self.started_in = 0.0
        self._process: ServerProcess | None = None

    def start(self) -> HubAgent:
        self.workdir.mkdir(parents=True, exist_ok=True)
        kubeconfig = write_kubeconfig(self.hub, self.workdir / "kubeconfig")
        health = free_port()
        began = time.monotonic()
        self._process = ServerProcess(
            NAME,
            [
                str(self.binary),
                f"--kubeconfig={kubeconfig}",
                "--enable-webhook=false",
                "--leader-elect=false",
                "--enable-cluster-inventory-apis=false",
                f"--health-probe-bind-address=127.0.0.1:{health}",
                f"--metrics-bind-address=127.0.0.1:{free_port()}",
                # the log says what each controller did with an object: what a failing test needs
                "-v=2",
            ],
            self.workdir / f"{NAME}.log",
        )

        def ready() -> bool:
            with urllib.request.urlopen(f"http://127.0.0.1:{health}/readyz", timeout=5) as answer:
                return bool(answer.status == 200)

        try:
            wait_ready([self._process], ready)
        except BaseException:
            self.stop()
            raise
        self.started_in = time.monotonic() - began
        return self

    def check_alive(self) -> None:
        if self._process is None:
            raise RealHubError(f"{NAME} is not started")
        self._process.check_alive()

    def tail(self) -> str:
        return self._process.tail() if self._process is not None else ""

    def rss_bytes(self) -> int:
        return self._process.rss_bytes() if self._process is not None else 0

    def pid(self) -> int:
        assert self._process is not None, "start() first"
        return self._process.popen.pid

    def stop(self) -> None:
        if self._process is not None:
            self._process.stop(grace=STOP_GRACE)
            self._process = None

    def __enter__(self) -> HubAgent:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.stop()
