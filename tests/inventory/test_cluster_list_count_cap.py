"""The cluster list counts at most `ClusterTable.count_cap` rows and one more: past the cap its count reads
"N+", its pager "of P+", and the pages go as far as the counted rows; below the cap the count is exact."""

import re

import pytest
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext

from inventory.tables import ClusterTable
from tests.factories import HubFactory, ManagedClusterFactory, UserFactory
from tests.pages import shown

pytestmark = pytest.mark.django_db


@pytest.fixture
def clusters(client: Client, monkeypatch: pytest.MonkeyPatch) -> None:
    """Seven clusters read by a superuser, the list counting at most five."""
    monkeypatch.setattr(ClusterTable, "count_cap", 5)
    hub = HubFactory(name="east")
    for index in range(7):
        ManagedClusterFactory(hub=hub, name=f"c-{index}")
    client.force_login(UserFactory(username="root", is_superuser=True))


def _summary(html: str) -> tuple[str, str]:
    count = re.search(r'id="result-count">([^<]*)<', html)
    pages = re.search(r'class="page-number">([^<]*)<', html)
    assert count is not None and pages is not None
    return count.group(1), pages.group(1)


def test_past_the_cap_the_count_and_the_pages_say_there_are_more(client: Client, clusters: None) -> None:
    with CaptureQueriesContext(connection) as queries:
        response = client.get("/clusters/?per_page=2")
    assert _summary(response.content.decode()) == ("5+", "Page 1 of 3+")
    [count] = [
        q["sql"] for q in queries.captured_queries if "COUNT(" in q["sql"] and "managedcluster" in q["sql"]
    ]
    assert "LIMIT 6" in count
    last = client.get("/clusters/?per_page=2&page=3")
    assert [c.name for c in shown(last)] == ["c-4", "c-5"]


def test_up_to_the_cap_the_count_is_exact(
    client: Client, clusters: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(ClusterTable, "count_cap", 7)
    assert _summary(client.get("/clusters/?per_page=2").content.decode()) == ("7", "Page 1 of 4")
    assert client.get("/clusters/?name=c-1").context["table"].count_text == "1"
