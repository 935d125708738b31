"""The prologue every change to a placement shares: the role first, then the placement's owner, each
refusal audited except where nobody attempted a change (a form opened with GET, a system trigger)."""

import pytest
from django.contrib.auth.models import User
from django.core.exceptions import PermissionDenied
from django.test import RequestFactory

from inventory.models import AuditEntry, Hub
from placement import access
from placement.models import Placement
from tests.factories import UserFactory

ACTION = "placement.spec"


@pytest.fixture(name="mirror")
def mirror_fixture(manifests_hub: Hub) -> Placement:
    return Placement.objects.get(hub=manifests_hub, namespace="web", name="frontend")


def _refusals() -> list[tuple[str, str, object]]:
    return list(
        AuditEntry.objects.filter(outcome=AuditEntry.Outcome.DENIED)
        .order_by("pk")
        .values_list("actor_name", "action", "before")
    )


def test_the_role_is_checked_before_the_owner(mirror: Placement) -> None:
    outsider = UserFactory(username="outsider")
    with pytest.raises(PermissionDenied) as refused:
        access.authorise_change(outsider, mirror, ACTION, before=["a"])
    assert not isinstance(refused.value, access.ReadOnlyPlacement)
    assert str(refused.value) == access.CHANGE_DENIED
    assert _refusals() == [("outsider", ACTION, ["a"])]


def test_hub_owned_placements_are_refused_to_whoever_may_change_them(mirror: Placement, editor: User) -> None:
    with pytest.raises(access.ReadOnlyPlacement) as refused:
        access.authorise_change(editor, mirror, ACTION, verb="roll it out")
    assert str(refused.value) == "web/frontend is a read-only mirror of hub manifests; roll it out there"
    with pytest.raises(access.ReadOnlyPlacement):
        access.authorise_change("ops shell", mirror, ACTION)
    assert _refusals() == [("editor", ACTION, None), ("ops shell", ACTION, None)]


def test_refusals_nobody_attempted_are_not_audited(mirror: Placement, editor: User) -> None:
    opened = RequestFactory().get("/")
    for actor in (editor, UserFactory(username="outsider")):
        with pytest.raises(PermissionDenied):
            access.authorise_change(actor, mirror, ACTION, request=opened)
    with pytest.raises(access.ReadOnlyPlacement):
        access.authorise_change(None, mirror, ACTION)
    assert _refusals() == []


def test_who_may_change_a_dashboard_placement_passes(web_placement: Placement, editor: User) -> None:
    access.authorise_change(editor, web_placement, ACTION, request=RequestFactory().post("/"))
    assert _refusals() == []
