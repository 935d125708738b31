"""`hubs add|list|remove` and `sync_hubs`: real hubs over HTTP; bad input exits 2 and loses nothing."""

import subprocess
import sys
from io import StringIO
from pathlib import Path

import pytest
import yaml
from django.core.management import CommandError, call_command

from demohub import DemoHub
from inventory.models import Hub, ManagedCluster, SyncRun

pytestmark = pytest.mark.django_db
BASE_DIR = Path(__file__).resolve().parents[2]


def run(*args: str) -> str:
    out = StringIO()
    call_command(*args, stdout=out, stderr=StringIO())
    return out.getvalue()


def fails(*args: str, match: str) -> None:
    with pytest.raises(CommandError, match=match) as error:
        run(*args)
    assert error.value.returncode == 2


def kubeconfig(tmp_path: Path, server: str) -> Path:
    path = tmp_path / "kubeconfig"
    path.write_text(
        yaml.safe_dump(
            {
                "apiVersion": "v1",
                "kind": "Config",
                "clusters": [{"name": "hub", "cluster": {"server": server}}],
                "users": [{"name": "admin", "user": {"token": "kubeconfig-token"}}],
                "contexts": [{"name": "hub-admin", "context": {"cluster": "hub", "user": "admin"}}],
                "current-context": "hub-admin",
            }
        )
    )
    return path


def test_add_sync_list_remove(demo_hub: DemoHub) -> None:
    assert "added" in run("hubs", "add", "demo", "--server", demo_hub.url, "--fleet", "--interval", "30")
    assert "updated" in run("hubs", "add", "demo", "--server", demo_hub.url, "--fleet")  # idempotent
    hub = Hub.objects.get(name="demo")
    assert (hub.serves_ocm, hub.serves_fleet, hub.sync_interval_seconds) == (True, True, 30)

    out = run("sync_hubs", "demo")
    assert "demo: succeeded" in out and f"ManagedCluster: {demo_hub.seeded['ManagedCluster']} listed" in out
    assert SyncRun.objects.get().trigger == SyncRun.Trigger.COMMAND

    listing = run("hubs", "list")
    assert (
        "OCM,Fleet" in listing and " ok " in listing and str(2 * demo_hub.seeded["ManagedCluster"]) in listing
    )

    run("hubs", "remove", "demo")
    assert not Hub.objects.exists() and not ManagedCluster.objects.exists()


def test_kubeconfig_with_context_gives_the_server_and_credentials(tmp_path: Path, demo_hub: DemoHub) -> None:
    path = kubeconfig(tmp_path, demo_hub.url)
    run("hubs", "add", "kc", "--kubeconfig", str(path), "--context", "hub-admin")
    hub = Hub.objects.get(name="kc")
    assert hub.server_url == demo_hub.url and hub.credentials["context"] == "hub-admin"
    assert "kc: succeeded" in run("sync_hubs", "kc")
    fails("hubs", "add", "kc2", "--kubeconfig", str(path), "--context", "nope", match="nope")
    assert not Hub.objects.filter(name="kc2").exists()


@pytest.mark.parametrize(
    ("args", "reason"),
    [
        (("hubs", "add", "bad name", "--server", "http://x"), "may only hold letters"),
        (("hubs", "add", "x", "--server", "ftp://x"), "not an http"),
        (("hubs", "add", "x"), "--server is required"),
        (("hubs", "add", "x", "--server", "http://x", "--token-file", "/nonexistent/token"), "cannot read"),
        (("hubs", "add", "x", "--server", "http://x", "--interval", "0"), "at least 1 second"),
        (("hubs", "add", "x", "--server", "http://x", "--context", "c"), "--context needs --kubeconfig"),
        (("hubs", "remove", "nope"), "no hub named 'nope'"),
        (("sync_hubs", "nope"), "no hub named nope"),
        (("sync_hubs",), "no hubs registered"),
    ],
)
def test_bad_arguments_exit_2(args: tuple[str, ...], reason: str) -> None:
    fails(*args, match=reason)
    assert not Hub.objects.exists()


def test_an_unreachable_hub_exits_2_and_deletes_nothing(demo_hub: DemoHub) -> None:
    run("hubs", "add", "demo", "--server", demo_hub.url, "--fleet")
    run("sync_hubs", "demo")
    count = ManagedCluster.objects.count()
    run("hubs", "add", "demo", "--server", "http://127.0.0.1:9")

    fails("sync_hubs", "demo", match="sync failed for demo; nothing was deleted")

    assert ManagedCluster.objects.count() == count and not ManagedCluster.objects.filter(stale=False).exists()
    assert SyncRun.objects.first().state == SyncRun.State.FAILED


def test_exit_code_2_from_the_command_line() -> None:
    result = subprocess.run(
        [sys.executable, "manage.py", "hubs", "add", "x", "--server", "ftp://x"],
        cwd=BASE_DIR,
        capture_output=True,
        text=True,
        timeout=60,
        env={"PATH": "/usr/bin:/bin", "DEBUG": "1"},
    )
    assert result.returncode == 2 and "not an http" in result.stderr
    assert (
        "usage:"
        in subprocess.run(
            [sys.executable, "manage.py", "hubs", "frobnicate"],
            cwd=BASE_DIR,
            capture_output=True,
            text=True,
            timeout=60,
            env={"PATH": "/usr/bin:/bin", "DEBUG": "1"},
        ).stderr
    )
