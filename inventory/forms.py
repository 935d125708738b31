"""Inventory forms: filter fields that turn query-string text into validated values or form errors, and
the editors' forms (taints, set bindings), which carry text for inventory.editing to judge."""

from collections.abc import Sequence
from typing import Any, cast

from django import forms
from django.core.exceptions import NON_FIELD_ERRORS, ValidationError
from django.http import QueryDict

from core.editors import KnownValuesSelect, RowFormSet
from inventory import editing
from inventory.models import ManagedCluster
from placement.scheduler.labels import (
    LabelSelector,
    SelectorError,
    parse_selector_query,
    qualified_name_error,
)


class LabelSelectorField(forms.CharField):
    """kubectl's `-l` syntax (`region=us-west-1,vendor in (A,B),!spot`) parsed to a LabelSelector."""

    def __init__(self, **kwargs: Any) -> None:
        kwargs.setdefault("max_length", 2000)
        super().__init__(**kwargs)

    def clean(self, value: str | None) -> LabelSelector | None:
        text = super().clean(value)
        if not text:
            return None
        try:
            return parse_selector_query(text)
        except SelectorError as exc:
            # the reason quotes user input, so it goes in as a parameter: a "%" in it is not a placeholder
            raise forms.ValidationError(
                "invalid label selector: %(reason)s", code="invalid", params={"reason": exc.message}
            ) from exc


class TaintKeyField(forms.CharField):
    """One taint key (a qualified name such as `cluster.open-cluster-management.io/unreachable`)."""

    def __init__(self, **kwargs: Any) -> None:
        kwargs.setdefault("max_length", 317)
        super().__init__(**kwargs)

    def clean(self, value: str | None) -> str:
        text: str = super().clean(value)
        key = text.strip()
        if key and (why := qualified_name_error(key)) is not None:
            raise forms.ValidationError(
                "invalid taint key %(key)r: %(why)s", code="invalid", params={"key": key, "why": why}
            )
        return key


class AuditFilterForm(forms.Form):
    """The audit log's filters: `until` before `since` is an error on `until`, not an empty page."""

    def clean(self) -> dict[str, Any]:
        super().clean()
        data = self.cleaned_data
        since, until = data.get("since"), data.get("until")
        if since is not None and until is not None and until < since:
            self.add_error("until", "must not be before since")
        return data


# --- editors: the forms only carry text; inventory.editing judges it and names the field it rejects ---


def add_errors(form: forms.Form, exc: ValidationError) -> None:
    """A domain ValidationError({field: reason}) on the form field it names (else on the form)."""
    errors = exc.message_dict if hasattr(exc, "error_dict") else {NON_FIELD_ERRORS: exc.messages}
    for name, messages in errors.items():
        for message in messages:
            form.add_error(name if name in form.fields else None, message)


class TaintForm(forms.Form):
    """One taint; its rules (qualified-name key, label value, the kind's effects) are inventory.editing's."""

    key = forms.CharField(required=False, widget=forms.TextInput(attrs={"spellcheck": "false"}))
    value = forms.CharField(required=False, widget=forms.TextInput(attrs={"spellcheck": "false"}))
    effect = forms.CharField(required=False, widget=KnownValuesSelect)

    def __init__(self, *args: Any, effects: Sequence[str] = (), **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        effect = self.fields["effect"]
        effect.widget.choices = [(name, name) for name in effects]
        effect.initial = effects[0] if effects else ""

    @property
    def note(self) -> str:
        """When the hub stamped the stored taint (blank for new rows, and where the hub does not stamp)."""
        return str(self.initial.get(editing.TIME_ADDED, ""))


class BaseTaintFormSet(RowFormSet):
    path = "taints"
    note_heading = "Added"

    def __init__(self, data: QueryDict | None = None, *, cluster: ManagedCluster, **kwargs: Any) -> None:
        kwargs.setdefault("initial", editing.taint_rows(cluster))
        effects = editing.EFFECTS[cluster.kind]
        super().__init__(data, prefix="taints", form_kwargs={"effects": effects}, **kwargs)


# formset_factory answers a subclass of `formset`; its stub says only BaseFormSet
TaintFormSet = cast(
    type[BaseTaintFormSet],
    forms.formset_factory(TaintForm, formset=BaseTaintFormSet, extra=1, can_delete=True),
)


class BindingForm(forms.Form):
    """Bind the set to a namespace (validated as an RFC 1123 label by inventory.editing)."""

    namespace = forms.CharField(
        required=False, widget=forms.TextInput(attrs={"spellcheck": "false", "placeholder": "namespace"})
    )
