"""The access management tab of a cluster set or of a namespace: its forms and what its template shows.

The rules (who may see or change what, the last-admin rule, the audit) live in inventory.roles; this
module turns form input into users and groups and gathers the tab's rows, whatever the scope.
"""

from typing import Any

from django import forms
from django.contrib.auth import get_user_model
from django.contrib.auth.base_user import AbstractBaseUser
from django.contrib.auth.models import Group
from django.http import HttpRequest
from django.urls import reverse

from inventory import roles
from inventory.models import NamespaceRole

Choices = list[tuple[str, str]]
SET_ROLES: Choices = [(roles.ADMIN, "Cluster set admin"), (roles.VIEW, "Cluster set view")]
NAMESPACE_ROLES: Choices = [
    (NamespaceRole.Role.ADMIN, "Namespace admin"),
    (NamespaceRole.Role.EDIT, "Namespace edit"),
    (NamespaceRole.Role.VIEW, "Namespace view"),
]
SET_SUMMARY = (
    "Cluster set admins edit taints of its clusters, bind it to the namespaces they administer, approve "
    "rollouts that touch its clusters and grant roles on it. Cluster set viewers see the set, its clusters "
    "and the placements that can use it. Superusers can do everything."
)
NAMESPACE_SUMMARY = (
    "Namespace viewers see its placements and bindings; editors also add, change and delete its "
    "placements; admins also bind the cluster sets they administer into it and grant roles in it. "
    "Superusers can do everything."
)


def role_choices(scope: roles.Scope) -> Choices:
    return NAMESPACE_ROLES if isinstance(scope, roles.Namespace) else SET_ROLES


def _offer_roles(form: forms.Form, choices: Choices) -> None:
    """Offer the scope's roles in the form's `role` field (declared as a ChoiceField)."""
    field = form.fields["role"]
    assert isinstance(field, forms.ChoiceField)
    field.choices = choices


class GrantForm(forms.Form):
    """Add a user or a group, by name, with one of the scope's roles."""

    kind = forms.ChoiceField(label="Type", choices=[("user", "User"), ("group", "Group")], initial="user")
    name = forms.CharField(label="User or group name", max_length=150)
    role = forms.ChoiceField(choices=SET_ROLES, initial=roles.VIEW)

    def __init__(self, *args: Any, choices: Choices = SET_ROLES, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        _offer_roles(self, choices)

    def clean(self) -> dict[str, Any]:
        super().clean()
        cleaned = self.cleaned_data
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
    role = forms.ChoiceField(choices=SET_ROLES)

    def __init__(self, *args: Any, choices: Choices = SET_ROLES, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        _offer_roles(self, choices)


def urls(scope: roles.Scope) -> tuple[str, tuple[Any, ...], list[tuple[str, str]]]:
    """The URL name prefix of the scope's access views, the arguments they share, and the crumbs of the
    page the tab stands on (label, URL)."""
    hub = scope.hub
    if isinstance(scope, roles.Namespace):
        args: tuple[Any, ...] = (hub.pk, scope.name)
        crumbs = [
            ("Hubs", reverse("inventory:hub-list")),
            (hub.name, reverse("inventory:hub-detail", args=[hub.pk])),
            (scope.name, reverse("inventory:namespace-access", args=args)),
        ]
        return "inventory:namespace-access", args, crumbs
    crumbs = [
        ("Cluster sets", reverse("inventory:clusterset-list")),
        (hub.name, hub.get_absolute_url()),
        (scope.name, reverse("inventory:clusterset-detail", args=[scope.pk])),
    ]
    return "inventory:clusterset-access", (scope.pk,), crumbs


def tab_context(
    request: HttpRequest,
    scope: roles.Scope,
    grant_form: GrantForm | None = None,
    errors: dict[int, list[str]] | None = None,
) -> dict[str, Any]:
    """What inventory/_access_section.html shows; `errors`: role pk -> why its change or removal failed."""
    name, args, crumbs = urls(scope)
    rows = list(roles.restrict(roles.holders(scope), request.user))
    choices = dict(role_choices(scope))
    for row in rows:
        row.errors = (errors or {}).get(row.pk, [])
        row.role_label = choices.get(row.role, row.role)
        row.change_url = reverse(f"{name}-change", args=[*args, row.pk])
        row.remove_url = reverse(f"{name}-remove", args=[*args, row.pk])
    namespace = isinstance(scope, roles.Namespace)
    return {
        "access_scope": scope,
        "access_scope_name": scope.name,
        "access_noun": "namespace" if namespace else "set",
        "access_summary": NAMESPACE_SUMMARY if namespace else SET_SUMMARY,
        "access_url": reverse(name, args=args),
        "access_crumbs": crumbs,
        "access_rows": rows,
        "access_can_manage": roles.can_manage_roles(request.user, scope),
        "access_form": grant_form or GrantForm(choices=role_choices(scope)),
        "access_role_choices": role_choices(scope),
    }
