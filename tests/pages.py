"""Reading list pages in tests: the records of the shown page of a list's table."""

from typing import Any


def shown(response: Any) -> list[Any]:
    """The records on the page a list view answered, in table order."""
    return [row.record for row in response.context["table"].page.object_list]
