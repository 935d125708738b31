"""The access management tab of a cluster set: its forms and what its template shows.

The rules (who may see or change what, the last-admin rule, the audit) live in inventory.roles; this
module turns form input into users and groups and gathers the tab's rows.
"""

from typing import Any

from django import forms
from django.contrib.auth import get_user_model
from django.contrib.auth.base_user import AbstractBaseUser
from django.contrib.auth.models import Group
from django.http import HttpRequest

from inventory import roles
from inventory.models import ManagedClusterSet

ROLE_CHOICES = [(roles.ADMIN, "Cluster set admin"), (roles.VIEW, "Cluster set view")]


class GrantForm(forms.Form):
    """Add a user or a group, by name, with a role."""

    kind = forms.ChoiceField(label="Type", choices=[("user", "User"), ("group", "Group")], initial="user")
    name = forms.CharField(label="User or group name", max_length=150)
    role = forms.ChoiceField(choices=ROLE_CHOICES, initial=roles.VIEW)

    def clean(self) -> dict[str, Any]:
        cleaned = super().clean()
        if "kind" in cleaned and "name" in cleaned:
            cleaned["principal"] = self._principal(cleaned["kind"], cleaned["name"].strip())
        return cleaned

    def _principal(self, kind: str, name: str) -> AbstractBaseUser | Group | None:
        try:
            if kind == "group":
                return Group.objects.get_by_natural_key(name)
            return get_user_model()._default_manager.get_by_natural_key(name)
        except (Group.DoesNotExist, get_user_model().DoesNotExist):
            self.add_error("name", f"No {kind} named {name!r}.")
            return None


class ChangeForm(forms.Form):
    role = forms.ChoiceField(choices=ROLE_CHOICES)


def tab_context(
    request: HttpRequest,
    cluster_set: ManagedClusterSet,
    grant_form: GrantForm | None = None,
    errors: dict[int, list[str]] | None = None,
) -> dict[str, Any]:
    """What inventory/_access_section.html shows; `errors`: role pk -> why its change or removal failed."""
    rows = list(roles.holders(cluster_set))
    for row in rows:
        row.errors = (errors or {}).get(row.pk, [])
    return {
        "access_set": cluster_set,
        "access_rows": rows,
        "access_can_manage": roles.can_administer_set(request.user, cluster_set),
        "access_form": grant_form or GrantForm(),
        "access_role_choices": ROLE_CHOICES,
    }
