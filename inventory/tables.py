"""How inventory lists are shown: sortable columns, page sizes, and quantities in human units."""

from fleetui.listing import Column

_BINARY_UNITS = ("", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei")


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
