"""A real hub on loopback: etcd and kube-apiserver built from the upstream modules (conformance/realhub.py).

`RealHub(workdir).start()` writes a CA, the apiserver's serving certificate, an admin client certificate
(group system:masters, which RBAC lets do anything) and a service-account signing key under `workdir`,
starts etcd with its data there and kube-apiserver against it with TLS, RBAC and a service-account
issuer, and waits for /readyz. `compact()` compacts etcd and restarts the apiserver, so old resourceVersions
are 410 Gone. `stop()` ends both processes and waits for them.
"""

from __future__ import annotations

import base64
import datetime
import ipaddress
import json
import os
import signal
import ssl
import subprocess
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any, Self

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

from conformance.realhub import BIN_DIR
from core.lifecycle import Started
from tests.servers import free_port

START_TIMEOUT = 120.0
STOP_TIMEOUT = 15.0
LOG_TAIL = 3000


class RealHubError(RuntimeError):
    """etcd or kube-apiserver did not start, or exited early."""


@dataclass(frozen=True)
class Credentials:
    ca: Path
    client_cert: Path
    client_key: Path


def _write_key(path: Path) -> ec.EllipticCurvePrivateKey:
    # P-256 keys: generated in microseconds, unlike RSA, and every party here accepts them (TLS, and
    # ES256 service-account tokens)
    key = ec.generate_private_key(ec.SECP256R1())
    path.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
        )
    )
    return key


def _certificate(
    subject: x509.Name,
    key: ec.EllipticCurvePrivateKey,
    issuer: tuple[x509.Name, ec.EllipticCurvePrivateKey] | None,
    *,
    ca: bool = False,
    usage: x509.ObjectIdentifier | None = None,
    names: list[x509.GeneralName] | None = None,
) -> x509.Certificate:
    now = datetime.datetime.now(datetime.UTC)
    issuer_name, issuer_key = issuer if issuer is not None else (subject, key)
    builder = (
        x509.CertificateBuilder()
        .subject_name(subject)
        .issuer_name(issuer_name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(x509.BasicConstraints(ca=ca, path_length=None), critical=True)
    )
    if ca:
        builder = builder.add_extension(
            x509.KeyUsage(False, False, False, False, False, True, True, False, False), critical=True
        )
    if usage is not None:
        builder = builder.add_extension(x509.ExtendedKeyUsage([usage]), critical=False)
    if names:
        builder = builder.add_extension(x509.SubjectAlternativeName(names), critical=False)
    return builder.sign(issuer_key, hashes.SHA256())


def write_pki(directory: Path) -> Credentials:
    """The CA, the serving and admin client certificates, and the service-account key, as PEM files."""
    directory.mkdir(parents=True, exist_ok=True)
    ca_name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "realhub-ca")])
    ca_key = _write_key(directory / "ca.key")
    ca_cert = _certificate(ca_name, ca_key, None, ca=True)
    (directory / "ca.crt").write_bytes(ca_cert.public_bytes(serialization.Encoding.PEM))

    serving_key = _write_key(directory / "apiserver.key")
    serving = _certificate(
        x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "kube-apiserver")]),
        serving_key,
        (ca_name, ca_key),
        usage=ExtendedKeyUsageOID.SERVER_AUTH,
        names=[x509.IPAddress(ipaddress.ip_address("127.0.0.1")), x509.DNSName("localhost")],
    )
    (directory / "apiserver.crt").write_bytes(serving.public_bytes(serialization.Encoding.PEM))

    admin_key = _write_key(directory / "admin.key")
    admin = _certificate(
        x509.Name(
            [
                x509.NameAttribute(NameOID.ORGANIZATION_NAME, "system:masters"),
                x509.NameAttribute(NameOID.COMMON_NAME, "realhub-admin"),
            ]
        ),
        admin_key,
        (ca_name, ca_key),
        usage=ExtendedKeyUsageOID.CLIENT_AUTH,
    )
    (directory / "admin.crt").write_bytes(admin.public_bytes(serialization.Encoding.PEM))

    signing_key = _write_key(directory / "sa.key")
    (directory / "sa.pub").write_bytes(
        signing_key.public_key().public_bytes(
            serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
        )
    )
    return Credentials(
        ca=directory / "ca.crt", client_cert=directory / "admin.crt", client_key=directory / "admin.key"
    )


class ServerProcess:
    """One server process, its output in a log file of the hub's directory."""

    def __init__(self, name: str, command: list[str], log: Path, env: dict[str, str] | None = None) -> None:
        self.name = name
        self.log = log
        self._log: IO[bytes] = log.open("ab")
        # a session of its own: a Ctrl-C meant for pytest reaches the hub only through stop()
        self.popen = subprocess.Popen(
            command,
            stdin=subprocess.DEVNULL,
            stdout=self._log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
            env=env,
        )

    def check_alive(self) -> None:
        if self.popen.poll() is not None:
            raise RealHubError(f"{self.name} exited with status {self.popen.returncode}:\n{self.tail()}")

    def tail(self) -> str:
        return self.log.read_text(errors="replace")[-LOG_TAIL:]

    def rss_bytes(self) -> int:
        """Resident memory, from /proc (Linux)."""
        for line in Path(f"/proc/{self.popen.pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
        return 0

    def stop(self, grace: float = STOP_TIMEOUT) -> None:
        """SIGTERM, and SIGKILL if it has not exited `grace` seconds later."""
        if self.popen.poll() is None:
            self.popen.send_signal(signal.SIGTERM)
            try:
                self.popen.wait(timeout=grace)
            except subprocess.TimeoutExpired:
                self.popen.kill()
                self.popen.wait()
        self._log.close()


def wait_ready(processes: list[ServerProcess], ready: Callable[[], bool]) -> None:
    """Poll `ready` until it answers True; RealHubError when one of `processes` exits first, or when the
    last of them, the one being started, is not ready within START_TIMEOUT. A probe that cannot connect
    yet (OSError) counts as not ready."""
    deadline = time.monotonic() + START_TIMEOUT
    while True:
        for process in processes:
            process.check_alive()
        try:
            if ready():
                return
        except OSError:
            pass  # not listening yet
        if time.monotonic() > deadline:
            starting = processes[-1]
            raise RealHubError(
                f"{starting.name} was not ready within {START_TIMEOUT:g} s:\n{starting.tail()}"
            )
        time.sleep(0.2)


class RealHub(Started):
    """etcd and kube-apiserver of one test session, on free loopback ports, all state under `workdir`."""

    def __init__(self, workdir: Path, bin_dir: Path = BIN_DIR) -> None:
        self.workdir = workdir
        self.bin_dir = bin_dir
        self.etcd_url = ""
        self.server = ""
        self.credentials: Credentials | None = None
        self.started_in = 0.0
        # the CRDs installed on it (names), set by whoever installs them
        self.crds: list[str] = []
        self._processes: list[ServerProcess] = []
        self._api_port = 0

    def missing_binaries(self) -> list[str]:
        return [name for name in ("etcd", "kube-apiserver") if not (self.bin_dir / name).exists()]

    def start(self) -> Self:
        self.workdir.mkdir(parents=True, exist_ok=True)
        self.credentials = write_pki(self.workdir / "pki")
        client_port, peer_port, self._api_port = free_port(), free_port(), free_port()
        self.etcd_url = f"http://127.0.0.1:{client_port}"
        self.server = f"https://127.0.0.1:{self._api_port}"
        peer = f"http://127.0.0.1:{peer_port}"
        began = time.monotonic()
        try:
            self._processes.append(
                ServerProcess(
                    "etcd",
                    [
                        str(self.bin_dir / "etcd"),
                        "--name=realhub",
                        f"--data-dir={self.workdir / 'etcd'}",
                        f"--listen-client-urls={self.etcd_url}",
                        f"--advertise-client-urls={self.etcd_url}",
                        f"--listen-peer-urls={peer}",
                        f"--initial-advertise-peer-urls={peer}",
                        f"--initial-cluster=realhub={peer}",
                        "--log-level=warn",
                        # a test hub's data dies with the test: no reason to wait for the disk
                        "--unsafe-no-fsync",
                    ],
                    self.workdir / "etcd.log",
                )
            )
            self._start_apiserver()
        except BaseException:
            self.stop()
            raise
        self.started_in = time.monotonic() - began
        return self

    def _start_apiserver(self) -> None:
        pki = self.workdir / "pki"
        self._processes.append(
            ServerProcess(
                "kube-apiserver",
                [
                    str(self.bin_dir / "kube-apiserver"),
                    f"--etcd-servers={self.etcd_url}",
                    "--bind-address=127.0.0.1",
                    "--advertise-address=127.0.0.1",
                    f"--secure-port={self._api_port}",
                    f"--cert-dir={pki}",
                    f"--tls-cert-file={pki / 'apiserver.crt'}",
                    f"--tls-private-key-file={pki / 'apiserver.key'}",
                    f"--client-ca-file={pki / 'ca.crt'}",
                    # published in kube-system/extension-apiserver-authentication, where controllers'
                    # delegated authentication looks for it (they log an error every minute without it);
                    # no front proxy runs here, so no name is allowed to use it
                    f"--requestheader-client-ca-file={pki / 'ca.crt'}",
                    "--requestheader-allowed-names=front-proxy-client",
                    "--requestheader-username-headers=X-Remote-User",
                    f"--service-account-issuer={self.server}",
                    f"--service-account-key-file={pki / 'sa.pub'}",
                    f"--service-account-signing-key-file={pki / 'sa.key'}",
                    "--authorization-mode=RBAC",
                    "--service-cluster-ip-range=10.96.0.0/24",
                    "--profiling=false",
                ],
                # appended to, so a restart keeps the earlier run's log
                self.workdir / "kube-apiserver.log",
            )
        )
        self._wait_ready()

    def _etcd(self, method: str, body: dict[str, object]) -> dict[str, Any]:
        """A call of etcd's JSON gateway (the v3 API over HTTP)."""
        request = urllib.request.Request(
            f"{self.etcd_url}/v3/{method}",
            data=json.dumps(body).encode(),
            headers={"Content-Type": "application/json"},
        )
        with urllib.request.urlopen(request, timeout=5) as answer:
            result: dict[str, Any] = json.loads(answer.read())
            return result

    def etcd_revision(self) -> int:
        """etcd's current revision: the resourceVersion of the latest write to the hub."""
        return int(self._etcd("kv/range", {"key": base64.b64encode(b"/").decode()})["header"]["revision"])

    def compact(self) -> int:
        """Compact etcd up to its current revision, as the apiserver does every five minutes, and restart
        the apiserver: its watch cache would otherwise go on serving the compacted history from memory
        (kube-apiserver 1.34 answers watches and paged lists from it), while a restarted one knows only
        the present, so older resourceVersions and continue tokens are answered 410 Gone. Answers the
        revision compacted to."""
        revision = self.etcd_revision()
        self._etcd("kv/compaction", {"revision": str(revision), "physical": True})
        apiserver = self._processes.pop()
        apiserver.stop()
        self._start_apiserver()
        return revision

    def ssl_context(self) -> ssl.SSLContext:
        assert self.credentials is not None, "start() first"
        context = ssl.create_default_context(cafile=str(self.credentials.ca))
        context.load_cert_chain(str(self.credentials.client_cert), str(self.credentials.client_key))
        return context

    def get(self, path: str) -> tuple[int, str]:
        """A GET as the admin, answered (status, body), error statuses included."""
        try:
            with urllib.request.urlopen(self.server + path, context=self.ssl_context(), timeout=5) as answer:
                return answer.status, answer.read().decode()
        except urllib.error.HTTPError as error:
            return error.code, error.read().decode()

    def _wait_ready(self) -> None:
        def ready() -> bool:
            status, _ = self.get("/readyz")
            return status == 200

        wait_ready(self._processes, ready)

    def rss_bytes(self) -> dict[str, int]:
        return {process.name: process.rss_bytes() for process in self._processes}

    def stop(self) -> None:
        """The apiserver first, so it never sees its etcd gone; both waited for."""
        for process in reversed(self._processes):
            process.stop()
        self._processes.clear()

    def pids(self) -> list[int]:
        return [process.popen.pid for process in self._processes]


def process_exists(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True
