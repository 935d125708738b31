"""Form fields for the inventory filters: they turn query-string text into validated values or form errors."""

from django import forms

from placement.scheduler.labels import (
    LabelSelector,
    SelectorError,
    parse_selector_query,
    qualified_name_error,
)


class LabelSelectorField(forms.CharField):
    """kubectl's `-l` syntax (`region=us-west-1,vendor in (A,B),!spot`) parsed to a LabelSelector."""

    def __init__(self, **kwargs: object) -> None:
        kwargs.setdefault("max_length", 2000)
        super().__init__(**kwargs)

    def clean(self, value: str | None) -> LabelSelector | None:
        text = super().clean(value)
        if not text:
            return None
        try:
            return parse_selector_query(text)
        except SelectorError as exc:
            raise forms.ValidationError(f"invalid label selector: {exc.message}", code="invalid") from exc


class TaintKeyField(forms.CharField):
    """One taint key (a qualified name such as `cluster.open-cluster-management.io/unreachable`)."""

    def __init__(self, **kwargs: object) -> None:
        kwargs.setdefault("max_length", 317)
        super().__init__(**kwargs)

    def clean(self, value: str | None) -> str:
        key = super().clean(value).strip()
        if key and (why := qualified_name_error(key)) is not None:
            raise forms.ValidationError(f"invalid taint key {key!r}: {why}", code="invalid")
        return key
