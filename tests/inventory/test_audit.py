"""The audit log: one append-only entry per mutation, with the request id and the client address."""

import pytest
from django.test import Client, RequestFactory

from inventory import audit
from inventory.models import AuditEntry
from tests.factories import HubFactory, UserFactory

pytestmark = pytest.mark.django_db


def test_record_keeps_actor_target_request_id_and_address() -> None:
    hub = HubFactory(name="east")
    user = UserFactory(username="carol")
    request = RequestFactory().post("/x", REMOTE_ADDR="10.1.2.3")
    request.request_id = "req-42"

    entry = audit.record(
        user, "hub.change", hub, hub=hub, before={"a": 1}, after={"a": 2}, hub_answer="ok", request=request
    )

    entry.refresh_from_db()
    assert (entry.actor, entry.actor_name, entry.action) == (user, "carol", "hub.change")
    assert (entry.target_type, entry.target_id, entry.target) == ("inventory.hub", str(hub.pk), "east")
    assert (entry.before, entry.after, entry.outcome) == ({"a": 1}, {"a": 2}, AuditEntry.Outcome.OK)
    assert (entry.request_id, entry.source_address) == ("req-42", "10.1.2.3")
    assert list(audit.entries_for(hub)) == [entry]


def test_commands_are_recorded_by_name_and_entries_are_append_only() -> None:
    hub = HubFactory()
    entry = audit.record("manage.py apply", "placement.spec", hub, outcome=AuditEntry.Outcome.NO_OP)

    assert entry.actor is None and entry.actor_name == "manage.py apply"
    entry.action = "rewritten"
    with pytest.raises(ValueError, match="append-only"):
        entry.save()


@pytest.mark.parametrize(
    ("sent", "kept"), [("abc-123", True), ("", False), ("bad id with spaces", False), ("x" * 65, False)]
)
def test_every_response_carries_a_request_id(client: Client, sent: str, kept: bool) -> None:
    response = client.get("/accounts/login/", HTTP_X_REQUEST_ID=sent)

    request_id = response["X-Request-ID"]
    assert (request_id == sent) is kept
    assert 1 <= len(request_id) <= 64
