"""Every list sorts by every column its table offers to sort by: each sortable header's link, in both
directions, answers 200 with the rows in that order's page (a header the FilterSet does not know would
answer 400)."""

from django.test import Client

from tests.test_list_table_cells import PAGES, tables_of
from tests.test_page_query_counts import LISTS, seed


def test_every_sortable_header_sorts(db: None, client: Client) -> None:
    seeded = seed(3)
    client.force_login(seeded.superuser)
    checked = 0
    for name in PAGES:
        path = LISTS[name].path(seeded)
        for table in tables_of(client.get(path)):
            for column in table.columns:
                if not column.orderable:
                    continue
                for sort in (column.name, f"-{column.name}"):
                    separator = "&" if "?" in path else "?"
                    response = client.get(f"{path}{separator}sort={sort}")
                    assert response.status_code == 200, f"{name}: sort={sort}"
                    checked += 1
    assert checked >= 20
