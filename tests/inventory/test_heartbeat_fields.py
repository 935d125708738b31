"""`inventory.relevance.heartbeat_only`: a MemberCluster row rewritten by a heartbeat alone is told from its
stored fields, without building either side's scheduler input; whatever it calls noise, `changed` (on the
scheduler inputs) calls noise too, and whatever it is unsure of it leaves to `changed`."""

import copy
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from inventory import relevance, scheduler_inputs
from inventory.models import ManagedCluster

NOW = datetime(2026, 11, 25, 12, 0, tzinfo=UTC)


def at(moment: datetime) -> str:
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")


def member_fields(heartbeat: str | None, healthy: str = "True") -> dict[str, Any]:
    """The fields of a MemberCluster row as the sync compares them."""
    agent: dict[str, Any] = {
        "type": "MemberAgent",
        "conditions": [
            {
                "type": "Joined",
                "status": "True",
                "reason": "J",
                "lastTransitionTime": at(NOW - timedelta(hours=1)),
            },
            {
                "type": "Healthy",
                "status": healthy,
                "reason": "H",
                "lastTransitionTime": at(NOW - timedelta(hours=1)),
            },
        ],
    }
    if heartbeat is not None:
        agent["lastReceivedHeartbeat"] = heartbeat
    return {
        "name": "m1",
        "labels": {"env": "prod"},
        "taints": [],
        "conditions": [],
        "properties": {},
        "resource_usage": {},
        "agent_status": [agent],
        "resource_version": "7",
    }


def rewritten(old: dict[str, Any], **changes: Any) -> dict[str, Any]:
    new = copy.deepcopy(old)
    new["resource_version"] = "8"
    for key, value in changes.items():
        if key == "heartbeat":
            new["agent_status"][0]["lastReceivedHeartbeat"] = value
        else:
            new[key] = value
    return new


def judged(old: dict[str, Any], new: dict[str, Any]) -> tuple[bool, bool]:
    """(heartbeat_only on the fields, changed on the scheduler inputs) of one rewrite."""
    differing = [field for field in new if old[field] != new[field]]
    on_fields = relevance.heartbeat_only(differing, old, new, NOW)
    views = [
        scheduler_inputs.member_cluster(ManagedCluster(kind=ManagedCluster.Kind.MEMBER_CLUSTER, **fields))
        for fields in (old, new)
    ]
    return on_fields, relevance.changed(*views, NOW)


def test_a_live_members_later_heartbeat_is_noise_on_the_fields_as_on_the_inputs() -> None:
    old = member_fields(at(NOW - timedelta(minutes=1)))
    assert judged(old, rewritten(old, heartbeat=at(NOW))) == (True, False)


@pytest.mark.parametrize(
    ("before", "after", "changes", "inputs_changed"),
    [
        # a stale member reporting again becomes eligible
        (at(NOW - timedelta(minutes=6)), at(NOW), {}, True),
        # a heartbeat moving backwards
        (at(NOW), at(NOW - timedelta(minutes=1)), {}, True),
        # a label beside the heartbeat
        (at(NOW - timedelta(minutes=1)), at(NOW), {"labels": {"env": "dev"}}, True),
        # no heartbeat before: the member was not eligible
        (None, at(NOW), {}, True),
        # the same heartbeat, only the version moved: no difference a scheduler reads, but nothing to store
        (at(NOW - timedelta(minutes=1)), at(NOW - timedelta(minutes=1)), {}, False),
    ],
)
def test_anything_else_is_left_to_the_scheduler_inputs(
    before: str | None, after: str, changes: dict[str, Any], inputs_changed: bool
) -> None:
    old = member_fields(before)
    new = rewritten(old, heartbeat=after, **changes)

    on_fields, on_inputs = judged(old, new)

    assert on_inputs is inputs_changed
    # the version alone moving is harmless either way; otherwise the fields never claim noise here
    assert on_fields is (not changes and before == after)


def test_an_agents_other_field_or_an_unreadable_heartbeat_is_not_noise_on_the_fields() -> None:
    old = member_fields(at(NOW - timedelta(minutes=1)))
    unhealthy = rewritten(old, heartbeat=at(NOW))
    unhealthy["agent_status"][0]["conditions"][1]["status"] = "False"
    unreadable = rewritten(old, heartbeat="yesterday")
    numeric = rewritten(old, heartbeat=12)
    another_agent = rewritten(old, heartbeat=at(NOW))
    another_agent["agent_status"].append(copy.deepcopy(another_agent["agent_status"][0]))

    for new in (unhealthy, unreadable, numeric, another_agent):
        differing = [field for field in new if old[field] != new[field]]
        assert not relevance.heartbeat_only(differing, old, new, NOW)
