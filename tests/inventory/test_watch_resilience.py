"""A watch event the database refuses (PostgreSQL refuses the row: a trigger stands in for any such
refusal) is passed over, counted and logged with its object; the events beside it and after it are
written, and no watch thread dies or restarts."""

from collections.abc import Iterator

import pytest
from django.db import connection

from demohub import DemoHub
from inventory.models import Hub, ManagedCluster
from inventory.watch import HubWatcher
from tests.inventory.watch_support import wait_for, watched

pytestmark = [pytest.mark.services, pytest.mark.django_db(transaction=True)]
POISONED = "poisoned"
REFUSE = f"""
CREATE FUNCTION fleetui_test_refuse() RETURNS trigger AS $$
BEGIN
    IF NEW.name = '{POISONED}' THEN
        RAISE EXCEPTION 'refused by the test' USING ERRCODE = 'data_exception';
    END IF;
    RETURN NEW;
END $$ LANGUAGE plpgsql;
CREATE TRIGGER fleetui_test_refuse BEFORE INSERT OR UPDATE ON inventory_managedcluster
    FOR EACH ROW EXECUTE FUNCTION fleetui_test_refuse();
"""
ALLOW = "DROP TRIGGER fleetui_test_refuse ON inventory_managedcluster; DROP FUNCTION fleetui_test_refuse();"


@pytest.fixture
def refusing_database(database_url: str) -> Iterator[None]:
    if connection.vendor != "postgresql":
        pytest.skip("DATABASE_URL is not a PostgreSQL database")
    with connection.cursor() as cursor:
        cursor.execute(REFUSE)
    try:
        yield
    finally:
        with connection.cursor() as cursor:
            cursor.execute(ALLOW)


@pytest.fixture
def watching(demo_hub: DemoHub, refusing_database: None) -> Iterator[tuple[Hub, HubWatcher]]:
    with watched(demo_hub) as pair:
        yield pair


def tier(hub: Hub, name: str) -> str | None:
    return ManagedCluster.objects.get(hub=hub, kind="ManagedCluster", name=name).labels.get("tier")


def test_a_refused_event_is_passed_over_and_the_watch_goes_on(demo_hub: DemoHub, watching, caplog) -> None:
    hub, watcher = watching
    first, second = demo_hub.store.names("ManagedCluster")[:2]
    template = demo_hub.store.get("ManagedCluster", first)
    # one burst: the refused cluster and a valid change arrive in the same batch
    demo_hub.store.create({**template, "metadata": {"name": POISONED, "labels": {"tier": "gold"}}})
    demo_hub.store.patch("ManagedCluster", first, {"metadata": {"labels": {"tier": "gold"}}})
    wait_for(lambda: tier(hub, first) == "gold")
    demo_hub.store.patch("ManagedCluster", second, {"metadata": {"labels": {"tier": "silver"}}})
    wait_for(lambda: tier(hub, second) == "silver")

    assert watcher.failed_events == {"ManagedCluster": 1}
    assert sum(watcher.restarts.values()) == 0
    assert all(thread.is_alive() for thread in watcher.threads)
    assert not ManagedCluster.objects.filter(name=POISONED).exists()
    passed_over = [r.getMessage() for r in caplog.records if "event passed over" in r.getMessage()]
    assert passed_over == [f'hub demo: ManagedCluster event passed over: ADDED "{POISONED}" not written']
