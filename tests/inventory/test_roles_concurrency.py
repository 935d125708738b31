"""Two admins remove each other at the same moment (threads, each with its own PostgreSQL connection):
the set's lock runs one after the other: the second finds itself no longer an admin, and one admin stays."""

import threading
from typing import Any

import pytest
from django.core.exceptions import PermissionDenied
from django.db import connection

from inventory import roles
from inventory.models import AuditEntry, ClusterSetRole
from tests.factories import ClusterSetRoleFactory, UserFactory

pytestmark = [pytest.mark.services, pytest.mark.django_db(transaction=True)]


def test_two_admins_removing_each_other_leave_one(database_url: str, prod, monkeypatch) -> None:
    ana, ben = (
        ClusterSetRoleFactory(
            cluster_set=prod, role=ClusterSetRole.Role.ADMIN, user=UserFactory(username=name)
        )
        for name in ("ana", "ben")
    )
    check = roles._keep_an_admin

    def slow_check(*args: Any) -> None:
        # without the lock both would pass the admin checks and delete: the set would keep no admin
        threading.Event().wait(0.2)
        check(*args)

    monkeypatch.setattr(roles, "_keep_an_admin", slow_check)
    outcomes: dict[str, str] = {}
    start = threading.Barrier(2)

    def remove(actor_row: ClusterSetRole, target: ClusterSetRole) -> None:
        try:
            start.wait()
            roles.revoke(actor_row.user, target)
            outcomes[actor_row.user.username] = "removed"
        except PermissionDenied:
            outcomes[actor_row.user.username] = "denied"
        finally:
            connection.close()

    threads = [threading.Thread(target=remove, args=pair) for pair in ((ana, ben), (ben, ana))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)

    assert sorted(outcomes.values()) == ["denied", "removed"]
    assert ClusterSetRole.objects.filter(cluster_set=prod, role=ClusterSetRole.Role.ADMIN).count() == 1
    revokes = AuditEntry.objects.filter(action="role.revoke").order_by("pk").values_list("outcome", flat=True)
    assert list(revokes) == ["ok", "denied"]
