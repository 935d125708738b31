"""Shared fixtures: users, the demo fleet, the demo hub over HTTP with the real client to it, and the real
services (PostgreSQL, Redis) CI provides. Under pytest-xdist each worker gets a Redis database of its own."""

import os
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import NoReturn

import pytest
from celery.signals import task_prerun
from django.contrib.auth.models import User
from django.core.cache import cache
from django.core.management import call_command
from django.test import Client
from kubernetes.client import ApiClient, Configuration, CustomObjectsApi

from demohub import DemoHub
from tests.factories import PASSWORD, UserFactory
from tests.realhub.hub import RealHub
from tests.servers import RedisServer, on_redis_database

IN_CI = os.environ.get("CI", "").lower() in {"1", "true", "yes"}


def pytest_configure(config: pytest.Config) -> None:
    """Each pytest-xdist worker ("gw0", "gw1", ...) queues its Celery tasks on a Redis database of its
    own (1 + its number), as pytest-django gives it a test database of its own: a worker's Celery worker
    would otherwise take the other's tasks and run them on the wrong database, and its queue purge
    would drop them. Celery reads CELERY_BROKER_URL from the environment before Django's settings, and
    the worker processes the tests start inherit it or take it from the `broker_url` fixture."""
    worker = os.environ.get("PYTEST_XDIST_WORKER", "")
    broker = os.environ.get("CELERY_BROKER_URL", "")
    if worker and broker.startswith("redis://"):
        os.environ["CELERY_BROKER_URL"] = on_redis_database(broker, 1 + int(worker.removeprefix("gw")))


def unavailable(message: str) -> NoReturn:
    """What a test needs is missing: it fails in CI, where everything must be there, and skips elsewhere."""
    if IN_CI:
        pytest.fail(message)
    pytest.skip(message)


def require_service(variable: str, what: str) -> str:
    """The service URL from the environment; missing fails in CI (services are mandatory there)."""
    url = os.environ.get(variable)
    if url:
        return url
    if IN_CI:
        pytest.fail(f"{variable} must be set in CI so {what} is tested against the real service")
    pytest.skip(f"{variable} is not set; {what} is not under test locally")


@pytest.fixture(autouse=True)
def empty_cache() -> None:
    """Each test starts with an empty cache (Django's default, in the process's memory): keys built from
    primary keys, which an in-memory database hands out again after a test's rollback, would otherwise
    find an earlier test's entries."""
    cache.clear()


@pytest.fixture
def password() -> str:
    return PASSWORD


@pytest.fixture
def user(db: None) -> User:
    return UserFactory(username="alice")


@pytest.fixture
def logged_in_client(client: Client, user: User) -> Client:
    client.force_login(user)
    return client


@pytest.fixture
def demo_fleet(db: None) -> None:
    """The shipped demo manifests, loaded the way `make run` loads them."""
    call_command("load_demo")


@pytest.fixture
def broker_url() -> str:
    return require_service("CELERY_BROKER_URL", "the Celery broker (Redis)")


@pytest.fixture
def database_url() -> str:
    return require_service("DATABASE_URL", "the external database")


@pytest.fixture
def own_redis(tmp_path: Path) -> Iterator[RedisServer]:
    """A redis-server of this test alone, not started yet, killed afterwards; for taking a broker down."""
    if shutil.which("redis-server") is None:
        unavailable("redis-server is not installed (make services installs it)")
    server = RedisServer(tmp_path)
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def demo_hub() -> Iterator[DemoHub]:
    with DemoHub(clusters=24, fleet=True, seed=7, bookmark_seconds=0.2) as hub:
        yield hub


@pytest.fixture(scope="session")
def real_hub(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RealHub]:
    """One real hub for the session (each xdist worker its own), the OCM and KubeFleet CRDs installed;
    here rather than in tests/realhub/, since the hub contract tests of tests/demohub/ run on it too."""
    # imported when needed: the real hub's conftest imports this module
    from tests.realhub.conftest import start_real_hub

    yield from start_real_hub(tmp_path_factory.mktemp("realhub"))


@pytest.fixture
def api_client(demo_hub: DemoHub) -> Iterator[ApiClient]:
    configuration = Configuration(host=demo_hub.url)
    configuration.api_key = {"authorization": "any-token-will-do"}
    configuration.api_key_prefix = {"authorization": "Bearer"}
    with ApiClient(configuration) as client:
        yield client


@pytest.fixture
def custom_objects(api_client: ApiClient) -> CustomObjectsApi:
    return CustomObjectsApi(api_client)


@pytest.fixture
def tasks_in_process(monkeypatch: pytest.MonkeyPatch) -> None:
    """Celery tasks run inside the test, as without a broker, even when CI configures one.

    Celery reads its settings once, so the app's own config is patched, not Django's settings.
    """
    from fleetui.celery import app

    monkeypatch.setitem(app.conf, "task_always_eager", True)
    monkeypatch.setitem(app.conf, "task_eager_propagates", True)


@pytest.fixture
def reschedules() -> Iterator[list[int]]:
    """Placement ids of the reschedule runs, in the order Celery starts them."""
    runs: list[int] = []

    def started(sender: object = None, args: tuple = (), **_: object) -> None:
        if getattr(sender, "name", "") == "placement.tasks.reschedule_placement":
            runs.append(args[0])

    task_prerun.connect(started, weak=False)
    yield runs
    task_prerun.disconnect(started)
