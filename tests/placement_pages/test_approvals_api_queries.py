"""GET /api/approvals/ decides who may approve which for the whole page at once: the query count does not
grow with the rows (it used to be one query per row)."""

import pytest
from django.contrib.auth.models import User
from rest_framework.test import APIClient

from inventory.models import Hub
from tests.placement.runs_support import ADMIN, EAST_PROD, approval_request, east_fixture, role_holder

__all__ = ["east_fixture"]


@pytest.mark.parametrize("rows", [2, 30])
def test_the_list_answers_can_approve_in_a_fixed_number_of_queries(
    east: Hub, django_assert_num_queries, rows: int
) -> None:
    for index in range(rows):
        # every other stage holds a cluster outside set prod: its admin may not approve that one
        clusters = EAST_PROD if index % 2 else [*EAST_PROD, "elsewhere"]
        approval_request(east, f"r-{index:02d}", clusters)
    admin: User = role_holder(east, "prod", ADMIN, username="prod-admin")
    client = APIClient()
    client.force_authenticate(admin)
    # count, the page with hub and run, the sets' members covering the stages
    with django_assert_num_queries(3):
        response = client.get("/api/approvals/", {"per_page": 100})
    results = response.json()["results"]
    assert len(results) == rows
    assert [row["can_approve"] for row in results] == [bool(index % 2) for index in range(rows)]
