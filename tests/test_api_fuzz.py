"""Schemathesis over our OpenAPI schema: every operation of /api/ gets a bounded number of
generated requests (FLEETUI_FUZZ_EXAMPLES, default 8) on the demo fleet, authenticated with a token, and
none may answer with a server error. Writes that reach hub "manifests" meet a closed port and must
answer 502 with the hub's message, not 500.
"""

import os
from collections.abc import Iterator

import pytest
import schemathesis
from django.core.signals import request_finished, request_started
from django.db import close_old_connections
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from rest_framework.authtoken.models import Token
from schemathesis.checks import not_a_server_error
from schemathesis.schemas import APIOperation

from fleetui.wsgi import application
from tests.factories import UserFactory

EXAMPLES = int(os.environ.get("FLEETUI_FUZZ_EXAMPLES", "8"))
HUB_UNREACHABLE = 502

schema = schemathesis.openapi.from_wsgi("/api/schema/", application)
# One pytest test per operation, with the operation in its id: schemathesis' own parametrization gives
# every operation the same node id, and pytest-xdist, which schedules by node id, would run only one.
OPERATIONS = [result.ok() for result in schema.get_all_operations()]


@pytest.fixture(autouse=True)
def one_connection_per_test() -> Iterator[None]:
    """Schemathesis calls the WSGI application itself, so each request's end would close the database
    connection that holds the test's transaction (PostgreSQL; SQLite in memory is spared). Django's test
    client unhooks the same handler for the same reason."""
    for signal in (request_started, request_finished):
        signal.disconnect(close_old_connections)
    yield
    for signal in (request_started, request_finished):
        signal.connect(close_old_connections)


@pytest.fixture(name="token")
def token_fixture(demo_fleet: None, tasks_in_process: None) -> str:
    return Token.objects.create(user=UserFactory(username="fuzz", is_superuser=True, is_staff=True)).key


@pytest.mark.parametrize("operation", OPERATIONS, ids=[operation.label for operation in OPERATIONS])
@settings(
    max_examples=EXAMPLES,
    deadline=None,
    # the same examples on every run, so CI's verdict does not depend on luck; raise
    # FLEETUI_FUZZ_EXAMPLES locally to explore further
    derandomize=True,
    # the demo fleet is loaded once per operation, and its rows are shared by that operation's examples
    suppress_health_check=[
        HealthCheck.function_scoped_fixture,
        HealthCheck.too_slow,
        HealthCheck.filter_too_much,
    ],
)
@given(data=st.data())
def test_no_generated_request_makes_a_server_error(
    operation: APIOperation, data: st.DataObject, token: str
) -> None:
    case = data.draw(operation.as_strategy())
    response = case.call(headers={"Authorization": f"Token {token}"})
    if response.status_code == HUB_UNREACHABLE:
        assert response.json(), "a hub failure answers with the hub's message"
        return
    case.validate_response(response, checks=[not_a_server_error])
