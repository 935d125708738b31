"""Forms of the placement pages: a spec edited as YAML, a new placement, an upload of manifests.

The forms only read text into values; the scheduler's parsers judge them through `placement.service`,
whose `ValidationError({field: message})` is shown on the form field it names (`add_service_error`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, cast

import yaml
from django import forms
from django.core.exceptions import ValidationError
from django.http import QueryDict

from core.editors import KnownValuesSelect, RowFormSet
from inventory import editing
from inventory.models import Hub
from placement import service, tolerations
from placement.models import Placement
from placement.scheduler.labels import dns_subdomain_error
from placement.scheduler.ocm.types import EQUAL, EXISTS
from placement.scheduler.untrusted import MAX_BYTES, InputError, load_yaml

# Sensible first specs: what the "New placement" page starts from for each kind.
EXAMPLE_SPECS: dict[str, dict[str, Any]] = {
    Placement.Kind.PLACEMENT: {
        "numberOfClusters": 2,
        "predicates": [
            {"requiredClusterSelector": {"labelSelector": {"matchLabels": {"vendor": "OpenShift"}}}}
        ],
        "prioritizerPolicy": {
            "mode": "Additive",
            "configurations": [
                {"scoreCoordinate": {"type": "BuiltIn", "builtIn": "ResourceAllocatableMemory"}, "weight": 1}
            ],
        },
    },
    Placement.Kind.CLUSTER_RESOURCE_PLACEMENT: {
        "resourceSelectors": [{"group": "", "version": "v1", "kind": "Namespace", "name": "web"}],
        "policy": {
            "placementType": "PickN",
            "numberOfClusters": 2,
            "affinity": {
                "clusterAffinity": {
                    "preferredDuringSchedulingIgnoredDuringExecution": [
                        {"weight": 20, "preference": {"labelSelector": {"matchLabels": {"env": "prod"}}}}
                    ]
                }
            },
        },
    },
}
# service errors on metadata land on the simple fields; spec.* errors on the YAML
METADATA_FIELDS = {"metadata.name": "name", "metadata.namespace": "namespace", "kind": "kind"}


def as_yaml(value: Mapping[str, Any]) -> str:
    """A spec or manifest as block YAML, keys in the order written."""
    return yaml.safe_dump(dict(value), sort_keys=False, default_flow_style=False, allow_unicode=True)


class SpecField(forms.Field):
    """A placement spec typed as YAML; read as the apiserver reads it, into a mapping."""

    def __init__(self, **kwargs: Any) -> None:
        attrs = {"rows": 22, "spellcheck": "false", "class": "yaml"}
        kwargs.setdefault("widget", forms.Textarea(attrs=attrs))
        kwargs.setdefault("required", False)  # an empty spec is valid (OCM: every bound cluster)
        super().__init__(**kwargs)

    def to_python(self, value: Any) -> dict[str, Any]:
        text = "" if value in self.empty_values else str(value)  # as typed: YAML keeps its indentation
        try:
            spec = load_yaml(text) if text.strip() else {}
        except InputError as exc:
            raise ValidationError(f"spec: {exc}", code="invalid") from None
        if spec is None:
            return {}
        if not isinstance(spec, dict):
            raise ValidationError(f"spec: expected a mapping, not {type(spec).__name__}", code="invalid")
        return spec


class ServiceForm(forms.Form):
    """A form whose values a service judges: its `ValidationError({path: message})` lands on a field."""

    def error_field(self, path: str) -> str | None:
        """The form field that shows an error on `path` (None: the form's own errors)."""
        return METADATA_FIELDS.get(path, "spec" if path.startswith("spec") else None)

    def add_service_error(self, exc: ValidationError) -> None:
        """Show the service's `{field: message}` on the form field it names, keeping the field path."""
        errors = exc.message_dict if hasattr(exc, "error_dict") else {"": exc.messages}
        for path, messages in errors.items():
            target = self.error_field(path)
            for message in messages:
                text = f"{path}: {message}" if path else message
                self.add_error(target if target in self.fields else None, text)


class SpecForm(ServiceForm):
    """The spec of an existing dashboard-owned placement."""

    spec = SpecField(label="Spec (YAML)")


class PlacementForm(SpecForm):
    """A new dashboard-owned placement: the simple fields are its metadata, the YAML its spec."""

    hub = forms.ModelChoiceField(Hub.objects.order_by("name"), empty_label=None)
    kind = forms.ChoiceField(choices=Placement.Kind.choices)
    namespace = forms.CharField(required=False, max_length=63, help_text="OCM Placements only.")
    name = forms.CharField(max_length=253)

    field_order = ("hub", "kind", "namespace", "name", "spec")

    def clean_name(self) -> str:
        return _object_name("metadata.name", self.cleaned_data["name"])

    def clean_namespace(self) -> str:
        namespace = self.cleaned_data["namespace"]
        return _object_name("metadata.namespace", namespace) if namespace else ""

    @classmethod
    def initial_for(cls, kind: str | None) -> dict[str, Any]:
        """Initial values for `kind` (OCM when unknown), its example spec included."""
        kind = kind if kind in EXAMPLE_SPECS else Placement.Kind.PLACEMENT.value
        hub = Hub.objects.order_by("name").first()
        return {"hub": hub, "kind": kind, "namespace": "default", "spec": as_yaml(EXAMPLE_SPECS[kind])}

    def placement_fields(self) -> dict[str, Any]:
        """The keyword arguments of `service.create_placement` (call after `is_valid`)."""
        data = self.cleaned_data
        return {key: data[key] for key in ("hub", "kind", "namespace", "name", "spec")}

    def manifest_yaml(self) -> str:
        """The YAML view: the whole object as it will be applied, from what the form holds now."""
        try:
            spec = self.fields["spec"].to_python(self["spec"].value())
        except ValidationError:
            return ""  # the spec's own error says what to fix
        metadata = {name: self[name].value() or "" for name in ("kind", "namespace", "name")}
        return as_yaml(service.manifest(Placement(spec=spec, **metadata)))


def _object_name(path: str, value: str) -> str:
    # the apiserver's check of object names; the scheduler's parsers take names as given
    if (why := dns_subdomain_error(value)) is not None:
        raise ValidationError(f'{path}: Invalid value: "{value}": {why}', code="invalid")
    return value


class UploadForm(forms.Form):
    """Manifests to import (multi-document YAML or JSON) and the hub they belong to."""

    hub = forms.ModelChoiceField(Hub.objects.order_by("name"), empty_label=None)
    manifests = forms.FileField(
        help_text="YAML (multi-document) or JSON; Placements and ClusterResourcePlacements are applied."
    )

    def clean_manifests(self) -> tuple[str, str]:
        """(file name, text); a file that is not UTF-8 is a field error."""
        upload = self.cleaned_data["manifests"]
        if upload.size > MAX_BYTES:
            message = f"{upload.name}: the file is too large: {upload.size} bytes (at most {MAX_BYTES})"
            raise ValidationError(message, code="too_large")
        try:
            return upload.name, upload.read().decode("utf-8")
        except UnicodeDecodeError as exc:
            raise ValidationError(f"{upload.name}: cannot read: {exc}", code="invalid") from None


# --- the toleration editor: rows of text for placement.tolerations to judge


class TolerationForm(forms.Form):
    """One toleration; upstream's rules are placement.tolerations' (the scheduler's parsers)."""

    key = forms.CharField(required=False, widget=forms.TextInput(attrs={"spellcheck": "false"}))
    # static/js/row-editor.js disables the row's value while the operator is Exists
    operator = forms.CharField(
        required=False,
        initial=EQUAL,
        widget=KnownValuesSelect(attrs={"data-operator": ""}, choices=[(EQUAL, EQUAL), (EXISTS, EXISTS)]),
    )
    value = forms.CharField(
        required=False, widget=forms.TextInput(attrs={"spellcheck": "false", "data-operand": ""})
    )
    effect = forms.CharField(required=False, widget=KnownValuesSelect)
    # named as in the API, so the parsers' `spec.tolerations[0].tolerationSeconds` lands on this field
    tolerationSeconds = forms.IntegerField(label="tolerationSeconds", required=False)

    def __init__(self, *args: Any, effects: Sequence[str] = (), seconds: bool = True, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.fields["effect"].widget.choices = [("", "(any)"), *((name, name) for name in effects)]
        if not seconds:
            del self.fields["tolerationSeconds"]

    def clean(self) -> dict[str, Any]:
        """Exists matches any value: a value typed before choosing Exists is ignored, not refused."""
        super().clean()
        data = self.cleaned_data
        if data.get("operator") == EXISTS:
            data["value"] = ""
        return data


class BaseTolerationFormSet(RowFormSet):
    def __init__(self, data: QueryDict | None = None, *, placement: Placement, **kwargs: Any) -> None:
        family = placement.family
        self.path = family.tolerations_path
        kwargs.setdefault("initial", tolerations.current(placement))
        form_kwargs = {
            "effects": editing.EFFECTS[family.cluster_kind],
            "seconds": family.has_toleration_seconds,
        }
        super().__init__(data, prefix="tolerations", form_kwargs=form_kwargs, **kwargs)


# formset_factory answers a subclass of `formset`; its stub says only BaseFormSet
TolerationFormSet = cast(
    type[BaseTolerationFormSet],
    forms.formset_factory(TolerationForm, formset=BaseTolerationFormSet, extra=1, can_delete=True),
)
