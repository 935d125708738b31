"""Reading pages in tests: the records of a list's shown page, and tables and links as the HTML shows them."""

from dataclasses import dataclass, field
from html.parser import HTMLParser
from typing import Any


def shown(response: Any) -> list[Any]:
    """The records on the page a list view answered, in table order."""
    return [row.record for row in response.context["table"].page.object_list]


@dataclass
class Cell:
    """A table cell: its class, its text (whitespace collapsed) and the links in it as (href, text)."""

    css: str
    text: str = ""
    links: list[tuple[str, str]] = field(default_factory=list)


class _Tables(HTMLParser):
    """Every table's body rows by table id (tables without one under ""), and every link of the page."""

    def __init__(self) -> None:
        super().__init__()
        self.tables: dict[str, list[list[Cell]]] = {}
        self.links: list[tuple[str, str]] = []
        self._table_ids: list[str] = []
        self._cell: Cell | None = None
        self._link: list[Any] | None = None
        self._in_head = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        attributes = dict(attrs)
        if tag == "table":
            self._table_ids.append(attributes.get("id") or "")
            self.tables.setdefault(self._table_ids[-1], [])
        elif tag == "thead":
            self._in_head = True
        elif tag == "tr" and self._table_ids and not self._in_head:
            self.tables[self._table_ids[-1]].append([])
        elif tag == "td" and self._table_ids and not self._in_head:
            self._cell = Cell(attributes.get("class") or "")
            self.tables[self._table_ids[-1]][-1].append(self._cell)
        elif tag == "a" and attributes.get("href"):
            self._link = [attributes["href"], ""]

    def handle_endtag(self, tag: str) -> None:
        if tag == "table" and self._table_ids:
            self._table_ids.pop()
        elif tag == "thead":
            self._in_head = False
        elif tag == "td":
            self._cell = None
        elif tag == "a" and self._link is not None:
            link = (self._link[0], " ".join(self._link[1].split()))
            self.links.append(link)
            if self._cell is not None:
                self._cell.links.append(link)
            self._link = None

    def handle_data(self, data: str) -> None:
        if self._cell is not None:
            self._cell.text = " ".join(f"{self._cell.text} {data}".split())
        if self._link is not None:
            self._link[1] += data


def read_html(response: Any) -> _Tables:
    """The tables (`.tables[id]`: body rows of cells) and links (`.links`: (href, text)) of a page."""
    parser = _Tables()
    parser.feed(response.content.decode())
    return parser
