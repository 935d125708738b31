"""Tolerations: validated as upstream (the parsers' messages, and OCM's toleration rules before saving),
previewed as a what-if decision diff, saved through the placement service (history, reschedule) and audited;
hub-owned placements are read-only."""

from datetime import UTC, datetime

import pytest
from django.contrib.auth.models import Permission
from django.core.exceptions import PermissionDenied, ValidationError

from inventory.models import AuditEntry, Hub
from placement import access, service, tolerations
from placement.models import Placement
from tests.editors import dashboard_copy
from tests.factories import UserFactory, placement_role
from tests.placement_pages.access_support import VIEW

pytestmark = pytest.mark.django_db

DEMO_NOW = datetime(2026, 11, 20, 12, tzinfo=UTC)
GPU = {"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSelect"}
UNREACHABLE = {
    "key": "cluster.open-cluster-management.io/unreachable",
    "operator": "Exists",
    "tolerationSeconds": 600,
}


@pytest.fixture
def gpu_copy(demo_fleet, ops) -> Placement:
    """A dashboard-owned copy of gpu-inference that takes every feasible cluster."""
    return dashboard_copy("gpu-inference", "gpu-copy", ops, drop=("numberOfClusters",))


@pytest.fixture
def web_copy(demo_fleet, ops) -> Placement:
    return dashboard_copy("web-app", "web-copy", ops)


def test_preview_is_the_decision_diff_and_writes_nothing(gpu_copy: Placement) -> None:
    assert tolerations.current(gpu_copy) == [GPU, UNREACHABLE]
    answer = tolerations.preview(gpu_copy, [UNREACHABLE], now=DEMO_NOW)
    assert answer["diff"]["removed"] == ["prod-usw2-gpu"]
    assert tolerations.removed_with_reasons(answer) == [
        ("prod-usw2-gpu", "taint nvidia.com/gpu=a100:NoSelect is not tolerated")
    ]
    gpu_copy.refresh_from_db()
    assert tolerations.current(gpu_copy) == [GPU, UNREACHABLE]


def test_save_goes_through_the_service_into_the_history_and_the_audit_log(gpu_copy: Placement, ops) -> None:
    tolerations.save(gpu_copy, [UNREACHABLE], actor=ops)
    gpu_copy.refresh_from_db()
    assert gpu_copy.spec["tolerations"] == [UNREACHABLE]
    change = gpu_copy.history.filter(trigger="tolerations edited").first()
    assert change is not None and change.actor == ops
    assert "prod-usw2-gpu" not in service.evaluate(gpu_copy, now=DEMO_NOW).selected
    entry = AuditEntry.objects.get(action="placement.tolerations")
    assert (entry.before, entry.after, entry.outcome) == ([GPU, UNREACHABLE], [UNREACHABLE], "ok")
    tolerations.save(gpu_copy, [], actor=ops)
    gpu_copy.refresh_from_db()
    assert "tolerations" not in gpu_copy.spec


@pytest.mark.parametrize(
    ("toleration", "field", "message"),
    [
        (
            {"operator": "Equal", "value": "x"},
            "spec.tolerations[1]",
            "If the key is empty, operator must be Exists.",
        ),
        (
            {"key": "gpu", "operator": "Exists", "value": "x"},
            "spec.tolerations[1]",
            "If the operator is Exists, the value should be empty.",
        ),
        (
            {"key": "gpu", "operator": "Sometimes"},
            "spec.tolerations[1].operator",
            'Unsupported value: "Sometimes": supported values: "Exists", "Equal"',
        ),
        (
            {"key": "gpu", "effect": "NoSchedule"},
            "spec.tolerations[1].effect",
            'Unsupported value: "NoSchedule"'
            ': supported values: "NoSelect", "PreferNoSelect", "NoSelectIfNew"',
        ),
        (
            {"key": "gpu", "tolerationSeconds": "ten"},
            "spec.tolerations[1].tolerationSeconds",
            'Invalid value: "string": spec.tolerations[1].tolerationSeconds in body must be of type integer',
        ),
        ({"key": "bad key"}, "spec.tolerations[1].key", 'Invalid value: "bad key": name part must consist'),
    ],
)
def test_ocm_tolerations_are_refused_with_upstream_messages(gpu_copy, ops, toleration, field, message):
    for attempt in (tolerations.preview, lambda *args: tolerations.save(*args, actor=ops)):
        with pytest.raises(ValidationError) as caught:
            attempt(gpu_copy, [GPU, toleration])
        [reason] = caught.value.message_dict[field]
        assert reason.startswith(message)
    gpu_copy.refresh_from_db()
    assert tolerations.current(gpu_copy) == [GPU, UNREACHABLE]


def test_fleet_tolerations_live_in_the_policy_and_use_the_fleet_rules(web_copy: Placement, ops) -> None:
    drain = {"key": "example.com/drain", "operator": "Exists", "effect": "NoSchedule"}
    tolerations.save(web_copy, [drain], actor=ops)
    web_copy.refresh_from_db()
    assert web_copy.spec["policy"]["tolerations"] == [drain]
    assert tolerations.current(web_copy) == [drain]
    with pytest.raises(ValidationError) as caught:
        tolerations.save(web_copy, [{"operator": "Equal", "value": "x"}], actor=ops)
    assert caught.value.message_dict == {
        "spec.policy.tolerations[0].key": [
            "invalid toleration {Key: Operator:Equal Value:x Effect:}: "
            "toleration key cannot be empty, when operator is Equal"
        ]
    }


def test_hub_owned_placements_are_read_only_and_refusals_are_audited(demo_fleet, ops) -> None:
    mirror = Placement.objects.get(name="gpu-inference")
    assert not tolerations.can_edit(ops, mirror)
    with pytest.raises(access.ReadOnlyPlacement):
        tolerations.save(mirror, [], actor=ops)
    mirror.refresh_from_db()
    assert tolerations.current(mirror) == [GPU, UNREACHABLE]
    entry = AuditEntry.objects.get(action="placement.tolerations")
    assert (entry.outcome, entry.before) == ("denied", [GPU, UNREACHABLE])


def test_changing_tolerations_needs_the_admin_role_on_a_set_bound_to_the_namespace(
    gpu_copy: Placement, manifests: Hub
) -> None:
    """gpu-copy is in namespace ml, bound to set global: its viewers, staff with the model permission and
    admins of the sets bound to web may not save (each refusal audited); an admin of global may."""
    reader = placement_role(manifests, ("ml",), role=VIEW, username="reader")
    staff = UserFactory(username="staff", is_staff=True)
    staff.user_permissions.add(Permission.objects.get(codename="change_placement"))
    web_admin = placement_role(manifests, ("web",), username="web-admin")
    for refused in (reader, staff, web_admin):
        assert not tolerations.can_edit(refused, gpu_copy)
        with pytest.raises(PermissionDenied) as caught:
            tolerations.save(gpu_copy, [], actor=refused)
        assert str(caught.value) == access.CHANGE_DENIED
    denied = AuditEntry.objects.filter(action="placement.tolerations", outcome=AuditEntry.Outcome.DENIED)
    assert sorted(denied.values_list("actor_name", flat=True)) == ["reader", "staff", "web-admin"]
    gpu_copy.refresh_from_db()
    assert tolerations.current(gpu_copy) == [GPU, UNREACHABLE]
    ml_admin = placement_role(manifests, ("ml",), username="ml-admin")
    tolerations.save(gpu_copy, [GPU], actor=ml_admin)
    gpu_copy.refresh_from_db()
    assert tolerations.current(gpu_copy) == [GPU]
