"""KubeFleet's hub agent (cmd/hubagent of github.com/kubefleet-dev/kubefleet) run against a real hub.

The agent is the upstream KubeFleet control plane: the MemberCluster controller, the scheduler, the
rollout and work generator controllers and the staged update run controller. `HubAgent(hub,
directory).start()` writes a kubeconfig of the hub's admin, starts the agent with it, and waits until its
health probe answers. Webhooks are off: the agent registers them with the apiserver at
https://fleetwebhook.fleet-system.svc.cluster.local:9443, a name only a cluster's DNS resolves (there is no
cluster DNS or Service proxy beside a bare apiserver), on a fixed port with certificates in a fixed /tmp
folder; they only police the writes these tests make as the admin. Leader election is off (one agent). The
ClusterProfile controller is off too: it writes cluster profiles to the fleet-system namespace for the
multicluster cluster-inventory API, which nothing here reads.
"""

from __future__ import annotations

import urllib.request
from pathlib import Path

from tests.realhub.controllers import Controller
from tests.realhub.hub import RealHub
from tests.servers import free_port

NAME = "hubagent"
# The agent never exits on SIGTERM: its controllers stop at once, but the scheduler's Run (package
# pkg/scheduler) waits for its workers before it shuts their queue down, and they wait on that queue. A
# cluster kills it after the pod's grace period; the tests give it a short one.
STOP_GRACE = 3.0


class HubAgent(Controller):
    """The hub agent of one real hub."""

    name = NAME
    stop_grace = STOP_GRACE

    def __init__(self, hub: RealHub, directory: Path | None = None) -> None:
        super().__init__(hub, directory)
        self._health = 0

    def command(self, kubeconfig: Path) -> list[str]:
        self._health = free_port()
        return [
            f"--kubeconfig={kubeconfig}",
            "--enable-webhook=false",
            "--leader-elect=false",
            "--enable-cluster-inventory-apis=false",
            f"--health-probe-bind-address=127.0.0.1:{self._health}",
            f"--metrics-bind-address=127.0.0.1:{free_port()}",
            # the log says what each controller did with an object: what a failing test needs
            "-v=2",
        ]

    def ready(self) -> bool:
        with urllib.request.urlopen(f"http://127.0.0.1:{self._health}/readyz", timeout=5) as answer:
            return bool(answer.status == 200)
