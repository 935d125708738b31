"""Breadcrumbs: the trail from a list page down to the page shown, above its heading, drawn the same way on
every page below the top level (`_breadcrumbs.html`: a `nav` landmark, an ordered list, the last item
marked as the current page).

    {% load breadcrumbs %}
    {% breadcrumbs "Clusters"|crumb_to:"inventory:cluster-list" cluster.hub cluster %}

Each argument is a crumb: an object with a page (`get_absolute_url`, labelled by its `str`), a (label, url)
pair (`crumb_to` makes one from a URL name), a sequence of those (the crumbs a view built), or a plain
label (a page with no link, such as "Edit spec" after its placement). Empty arguments are left out.
"""

from collections.abc import Iterator, Sequence
from typing import Any, NamedTuple

from django import template
from django.urls import reverse

register = template.Library()


class Crumb(NamedTuple):
    """One step of the trail; a blank url is plain text."""

    label: str
    url: str = ""


@register.filter
def crumb_to(label: str, view: str) -> Crumb:
    """The crumb `label` linking to the named view (one without arguments, such as a list page)."""
    return Crumb(str(label), reverse(view))


def _crumbs(item: Any) -> Iterator[Crumb]:
    if item is None or item == "":
        return
    if isinstance(item, str):
        yield Crumb(item)
    elif hasattr(item, "get_absolute_url"):
        yield Crumb(str(item), item.get_absolute_url())
    elif isinstance(item, Sequence) and len(item) == 2 and all(isinstance(part, str) for part in item):
        yield Crumb(*item)
    elif isinstance(item, Sequence):
        for part in item:
            yield from _crumbs(part)
    else:
        raise template.TemplateSyntaxError(f"breadcrumbs: {item!r} is not a crumb")


@register.inclusion_tag("_breadcrumbs.html")
def breadcrumbs(*items: Any) -> dict[str, list[Crumb]]:
    """The trail of `items`, in order; the last is the page shown."""
    return {"crumbs": [crumb for item in items for crumb in _crumbs(item)]}
