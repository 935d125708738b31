"""Forms of the rollout pages: a staged update strategy and a run, each pasted or typed as YAML."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from django import forms
from django.core.exceptions import ValidationError

from inventory.models import Hub
from placement.forms import ServiceForm, SpecField

EXAMPLE_STRATEGY: dict[str, Any] = {
    "stages": [
        {
            "name": "staging",
            "labelSelector": {"matchLabels": {"environment": "staging"}},
            "afterStageTasks": [{"type": "Approval"}],
        },
        {
            "name": "prod",
            "labelSelector": {"matchLabels": {"environment": "prod"}},
            "maxConcurrency": "50%",
            "afterStageTasks": [{"type": "TimedWait", "waitTime": "10m"}],
        },
    ]
}


def manifest_parts(document: Mapping[str, Any], kind: str) -> tuple[str, Any]:
    """(metadata.name, spec) of a whole `kind` manifest pasted as YAML; ("", document) for a bare spec."""
    if "kind" not in document and "spec" not in document:
        return "", document
    if document.get("kind") not in (None, kind):
        raise ValidationError(f'kind: expected {kind}, not "{document.get("kind")}"', code="invalid")
    name = (document.get("metadata") or {}).get("name") or ""
    return str(name), document.get("spec")


def _fleet_hubs() -> Any:
    return Hub.objects.filter(serves_fleet=True).order_by("name")


class StrategyForm(ServiceForm):
    """A new dashboard-owned ClusterStagedUpdateStrategy: its spec, or the whole object, as YAML."""

    hub = forms.ModelChoiceField(_fleet_hubs(), empty_label=None)
    name = forms.CharField(
        max_length=253, required=False, help_text="Empty: the pasted object's metadata.name."
    )
    spec = SpecField(label="Spec or whole ClusterStagedUpdateStrategy (YAML)")

    def clean(self) -> dict[str, Any]:
        super().clean()
        data = self.cleaned_data
        if "spec" in data:
            name, data["spec"] = manifest_parts(data["spec"], "ClusterStagedUpdateStrategy")
            data["name"] = data.get("name") or name
        return data

    def strategy_fields(self) -> dict[str, Any]:
        """The keyword arguments of `rollouts.create_strategy` (call after `is_valid`)."""
        return {key: self.cleaned_data[key] for key in ("hub", "name", "spec")}


class RunForm(ServiceForm):
    """A new dashboard-owned ClusterStagedUpdateRun: the fields, or the whole object as YAML."""

    # the service's field paths, shown on the field that holds them
    FIELD_PATHS = {
        "metadata.name": "name",
        "spec.placementName": "placement_name",
        "spec.stagedRolloutStrategyName": "strategy_name",
        "spec.resourceSnapshotIndex": "resource_snapshot_index",
        "spec.state": "state",
    }

    hub = forms.ModelChoiceField(_fleet_hubs(), empty_label=None)
    name = forms.CharField(max_length=253, required=False)
    placement_name = forms.CharField(
        label="Placement",
        max_length=255,
        required=False,
        help_text="A dashboard-owned ClusterResourcePlacement with strategy type External.",
        widget=forms.TextInput(attrs={"list": "placement-names"}),
    )
    strategy_name = forms.CharField(
        label="Strategy",
        max_length=253,
        required=False,
        widget=forms.TextInput(attrs={"list": "strategy-names"}),
    )
    resource_snapshot_index = forms.CharField(
        label="Resource snapshot index",
        max_length=20,
        required=False,
        help_text="Empty: the placement's latest resource snapshot.",
    )
    state = forms.ChoiceField(choices=[(s, s) for s in ("Initialize", "Run", "Stop")], initial="Initialize")
    manifest = SpecField(
        label="Or the whole ClusterStagedUpdateRun (YAML)",
        help_text="When given, its metadata.name and spec are used instead of the fields above.",
    )

    def error_field(self, path: str) -> str | None:
        if self.cleaned_data.get("manifest"):
            return "manifest"
        return self.FIELD_PATHS.get(path, "manifest" if path.startswith("spec") else None)

    def clean(self) -> dict[str, Any]:
        super().clean()
        data = self.cleaned_data
        if data.get("manifest"):
            name, data["spec"] = manifest_parts(data["manifest"], "ClusterStagedUpdateRun")
            data["name"] = name or data.get("name", "")
        else:
            data["spec"] = {
                "placementName": data.get("placement_name", ""),
                "stagedRolloutStrategyName": data.get("strategy_name", ""),
                "resourceSnapshotIndex": data.get("resource_snapshot_index", ""),
                "state": data.get("state", "Initialize"),
            }
        return data

    def run_fields(self) -> dict[str, Any]:
        """The keyword arguments of `rollouts.create_run` (call after `is_valid`)."""
        return {key: self.cleaned_data[key] for key in ("hub", "name", "spec")}
