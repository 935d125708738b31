"""The list tables draw their cells themselves (`core.tables.ListTable.shown_rows`, faster than tables2's
per-cell path); every cell must come out as tables2's own `BoundRow.get_cell` draws it, in every table
of every list page and the placement page's score table."""

from typing import Any

import pytest
from django.test import Client
from django.utils.html import conditional_escape

from core.tables import ListTable
from tests.test_page_query_counts import LISTS, seed

PAGES = [name for name in LISTS if not name.startswith("API")]


def tables_of(response: Any) -> list[ListTable]:
    found = []
    for context in response.context or []:
        for value in context.flatten().values():
            if isinstance(value, ListTable) and all(value is not table for table in found):
                found.append(value)
    return found


@pytest.mark.parametrize("reader", ["superuser", "viewer"])
def test_every_cell_is_drawn_as_tables2_draws_it(db: None, client: Client, reader: str) -> None:
    seeded = seed(5)
    client.force_login(getattr(seeded, reader))
    paths = [LISTS[name].path(seeded) for name in PAGES]
    paths += [f"/placements/{seeded.ocm.pk}/", f"/placements/{seeded.crp.pk}/"]
    compared = 0
    for path in paths:
        response = client.get(path)
        assert response.status_code == 200, path
        for table in tables_of(response):
            for row, html in table.shown_rows():
                expected = "".join(
                    f"<td{f' class={chr(34)}{css}{chr(34)}' if css else ''}>"
                    f"{conditional_escape(row.get_cell(column.name))}</td>"
                    for column in table.columns
                    for css in [column.attrs["td"].get("class") or ""]
                )
                assert html == expected, path
                compared += 1
    assert compared > 30
