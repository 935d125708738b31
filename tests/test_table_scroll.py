"""Wide tables scroll inside their own container, never the page: every table of every page sits in a
`.table-scroll` wrapper (its overflow rule is in site.css)."""

from html.parser import HTMLParser

import pytest
from django.test import Client

from tests.test_page_query_counts import DETAILS, LISTS, seed

PAGES = {name: page for name, page in {**LISTS, **DETAILS}.items() if not name.startswith("API ")}


class TableParents(HTMLParser):
    """For each <table>, whether an element around it has the class `table-scroll`."""

    VOID = {
        "area",
        "base",
        "br",
        "col",
        "embed",
        "hr",
        "img",
        "input",
        "link",
        "meta",
        "source",
        "track",
        "wbr",
    }

    def __init__(self) -> None:
        super().__init__()
        self.open: list[tuple[str, bool]] = []
        self.tables: list[bool] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "table":
            self.tables.append(any(scrolls for _, scrolls in self.open))
        if tag not in self.VOID:
            classes = (dict(attrs).get("class") or "").split()
            self.open.append((tag, "table-scroll" in classes))

    def handle_endtag(self, tag: str) -> None:
        for index in range(len(self.open) - 1, -1, -1):
            if self.open[index][0] == tag:
                del self.open[index:]
                return


def wrapped(html: str) -> list[bool]:
    parser = TableParents()
    parser.feed(html)
    return parser.tables


def test_the_parser_sees_a_bare_table() -> None:
    assert wrapped(
        '<div class="card"><table></table></div><div class="table-scroll"><table></table></div>'
    ) == [
        False,
        True,
    ]


@pytest.mark.django_db
def test_every_table_of_every_page_scrolls_in_its_own_container(client: Client) -> None:
    seeded = seed(3)
    client.force_login(seeded.superuser)
    paths = {name: page.path(seeded) for name, page in PAGES.items()}  # with every placement tab
    tables = 0
    for name, path in paths.items():
        response = client.get(path)
        assert response.status_code == 200, name
        found = wrapped(response.content.decode())
        assert all(found), f"{name}: GET {path}: a table outside .table-scroll"
        tables += len(found)
    assert tables > 20  # the pages do show tables
