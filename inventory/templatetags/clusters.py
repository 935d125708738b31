"""`{% cluster_link hub_id kind name %}`: a cluster that another object names (a decision, a binding, a
stage, an approval) as a link to its page, for templates that know its hub, kind and name but not its row.
"""

from django import template
from django.utils.safestring import SafeString

from inventory.tables import cluster_link as link

register = template.Library()


@register.simple_tag
def cluster_link(hub_id: int, kind: str, name: object) -> SafeString:
    return link(hub_id, kind, name)
