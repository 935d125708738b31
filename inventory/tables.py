"""How inventory lists are shown: sortable columns, page sizes, and quantities in human units."""

from dataclasses import dataclass

from django.http import QueryDict

PER_PAGE = 50
MAX_PER_PAGE = 500

_BINARY_UNITS = ("", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei")


@dataclass(frozen=True)
class Column:
    header: str
    # The `sort` value of the column's FilterSet; blank when the column does not sort.
    sort: str = ""


CLUSTER_COLUMNS = (
    Column("Name", "name"),
    Column("Hub", "hub"),
    Column("Sets"),
    Column("Labels"),
    Column("Availability", "availability"),
    Column("CPU", "cpu"),
    Column("Memory", "memory"),
    Column("Taints"),
    Column("Placements"),
)

CLUSTER_SET_COLUMNS = (
    Column("Name", "name"),
    Column("Hub", "hub"),
    Column("Selector"),
    Column("Members", "members"),
    Column("Availability"),
    Column("Bound namespaces"),
)


def per_page(params: QueryDict) -> int:
    """`per_page` from the query string, PER_PAGE when absent or not a number, at most MAX_PER_PAGE."""
    try:
        wanted = int(params.get("per_page", PER_PAGE))
    except ValueError:
        return PER_PAGE
    return min(max(wanted, 1), MAX_PER_PAGE)


def human_cpu(cores: float | None) -> str:
    """Cores as `8`, `1.5` or `250m`."""
    if cores is None:
        return ""
    if cores < 1:
        return f"{round(cores * 1000)}m"
    return f"{cores:.2f}".rstrip("0").rstrip(".")


def human_bytes(amount: float | None) -> str:
    """Bytes in binary units as Kubernetes writes them: `31.4Gi`, `512Mi`."""
    if amount is None:
        return ""
    unit = 0
    while amount >= 1024 and unit < len(_BINARY_UNITS) - 1:
        amount /= 1024
        unit += 1
    return f"{amount:.1f}".rstrip("0").rstrip(".") + _BINARY_UNITS[unit]


def sort_links(columns: tuple[Column, ...], params: QueryDict) -> list[dict[str, str]]:
    """Per column: its header, the query string that sorts by it (toggling direction), and aria-sort."""
    current = params.get("sort", "")
    links = []
    for column in columns:
        link = {"header": column.header, "query": "", "aria_sort": "none"}
        if column.sort:
            query = params.copy()
            query.pop("page", None)
            query["sort"] = f"-{column.sort}" if current == column.sort else column.sort
            link["query"] = query.urlencode()
            if current in (column.sort, f"-{column.sort}"):
                link["aria_sort"] = "descending" if current.startswith("-") else "ascending"
        links.append(link)
    return links


def page_query(params: QueryDict, number: int) -> str:
    """The query string of page `number` with every other parameter kept."""
    query = params.copy()
    query["page"] = str(number)
    return query.urlencode()
