"""Which changes of a hub object a scheduler can notice, and which are noise.

A hub rewrites its objects all the time without changing what a scheduler decides: Fleet member agents
report a heartbeat every minute, and conditions carry the time they were last written. Such a change is
still stored (the pages show it), but it neither marks the hub's snapshot stale nor reschedules anything.
The comparison is made on the scheduler's own inputs (`inventory.scheduler_inputs`), with the moments
the scheduler never reads taken out. The commonest noise, a live member's heartbeat, is also told from
the stored row's fields alone (`heartbeat_only`), so the sync and the watch store it without building
either side's scheduler input.
"""

import hashlib
import json
from collections.abc import Collection, Mapping
from dataclasses import replace
from datetime import datetime
from typing import Any

import orjson

from placement.scheduler.fleet.eligibility import HEARTBEAT_TIMEOUT
from placement.scheduler.fleet.types import AGENT_HEALTHY, AgentStatus, MemberCluster
from placement.scheduler.ocm import types
from placement.scheduler.timeutil import ZERO_TIME, parse_time

# Condition fields that record when a condition was last written or probed. OCM's scheduler reads a
# ManagedCluster's conditions only through their type and status; a CEL predicate could read these
# times, and sees them on the cluster's next relevant change or the periodic resync.
CONDITION_TIMES = frozenset({"lastTransitionTime", "lastHeartbeatTime", "lastProbeTime", "lastUpdateTime"})
# The fields of a MemberCluster row a member agent's heartbeat rewrites (besides the time it was stored).
HEARTBEAT_FIELDS = frozenset({"agent_status", "resource_version"})
HEARTBEAT = "lastReceivedHeartbeat"
# The column of a MemberCluster row holding a digest of its other mirrored fields (`fields_digest`). A
# heartbeat leaves it as it was, so the sync and the watch tell a heartbeat from the stored row's digest
# and heartbeat fields alone, without reading and decoding its other columns.
DIGEST_FIELD = "fields_digest"


def changed(old: Any, new: Any, now: datetime) -> bool:
    """Whether a scheduler reading `new` instead of `old` (scheduler inputs, None: absent) at `now` can
    decide differently. Only clusters have noise; any difference of another kind counts."""
    if old is None or new is None:
        return old is not new
    if isinstance(old, types.ManagedCluster):
        return _ocm_view(old) != _ocm_view(new)
    if isinstance(old, MemberCluster):
        return _member_changed(old, new, now)
    return bool(old != new)


def _ocm_view(cluster: types.ManagedCluster) -> types.ManagedCluster:
    conditions = tuple(
        {key: value for key, value in condition.items() if key not in CONDITION_TIMES}
        for condition in cluster.conditions
    )
    return replace(cluster, conditions=conditions)


def _member_changed(old: MemberCluster, new: MemberCluster, now: datetime) -> bool:
    """A member's heartbeat is a scheduler input only through eligibility: a member whose last heartbeat
    is older than HEARTBEAT_TIMEOUT is not eligible. A heartbeat is therefore relevant when it changes
    the member's eligibility now (a stale member reports again) or moves backwards; a fresh member's
    next heartbeat is noise.

    Two things keep that safe. Expiry (a member that stops reporting) comes with no event at all: the
    periodic resync notices it, as upstream's own scheduler does. And a hub snapshot holding a heartbeat
    older than the stored one must not call that member stale: `placement.service.hub_snapshot`
    reads its members' heartbeats again once any heartbeat it holds would expire
    (`HubSnapshot.fresh_until`).
    """
    old_beats, new_beats = _heartbeats(old), _heartbeats(new)
    if any(new_beats.get(agent, ZERO_TIME) < beat for agent, beat in old_beats.items()):
        return True
    return _member_view(old, now) != _member_view(new, now)


def _heartbeats(member: MemberCluster) -> dict[str, datetime]:
    return {agent.type: agent.last_received_heartbeat or ZERO_TIME for agent in member.agent_status}


def _member_view(member: MemberCluster, now: datetime) -> tuple[Any, ...]:
    properties = {name: replace(value, observation_time=None) for name, value in member.properties.items()}
    agents = tuple(_agent_view(agent, now) for agent in member.agent_status)
    return replace(member, properties=properties, agent_status=()), agents


def _agent_view(agent: AgentStatus, now: datetime) -> tuple[Any, ...]:
    fresh = now - (agent.last_received_heartbeat or ZERO_TIME) <= HEARTBEAT_TIMEOUT
    # an unhealthy agent's transition time is read: it becomes ineligible once unhealthy for long
    conditions = tuple(
        c if c.type == AGENT_HEALTHY and c.status != "True" else replace(c, last_transition_time=None)
        for c in agent.conditions
    )
    return agent.type, conditions, fresh


def fields_digest(values: Mapping[str, Any], left_out: Collection[str]) -> str:
    """A digest of a row's values but `HEARTBEAT_FIELDS`, the digest itself and `left_out`: equal digests
    mean equal values. orjson writes the values (keys sorted) about ten times faster than `json`; a value
    it refuses (an integer beyond 64 bits from the hub's JSON) is written by `json` instead."""
    kept = {
        field: value
        for field, value in values.items()
        if field not in HEARTBEAT_FIELDS and field != DIGEST_FIELD and field not in left_out
    }
    try:
        data = orjson.dumps(kept, option=orjson.OPT_SORT_KEYS)
    except TypeError:
        data = json.dumps(kept, sort_keys=True, default=str).encode()
    return hashlib.blake2b(data, digest_size=16).hexdigest()


def heartbeat_only(
    differing: Collection[str], old: Mapping[str, Any], new: Mapping[str, Any], now: datetime
) -> bool:
    """Whether a MemberCluster row whose fields `differing` differ between its stored values `old` and
    the hub's `new` changed in nothing `changed` would notice at `now`: only in `HEARTBEAT_FIELDS`, its
    agents as they were but for later heartbeats, each agent fresh before. False whenever that is not
    certain (the change is then judged by `changed` on both sides' scheduler inputs)."""
    if not differing or not HEARTBEAT_FIELDS.issuperset(differing):
        return False
    before, after = old["agent_status"], new["agent_status"]
    if not isinstance(before, list) or not isinstance(after, list) or len(before) != len(after):
        return False
    return all(_later_beat(was, now_is, now) for was, now_is in zip(before, after, strict=True))


def _later_beat(old: Any, new: Any, now: datetime) -> bool:
    """An agent's status the same but for a later heartbeat, the earlier one fresh at `now`."""
    if not isinstance(old, dict) or not isinstance(new, dict) or old.keys() != new.keys():
        return False
    if any(value != new[key] for key, value in old.items() if key != HEARTBEAT):
        return False
    was, is_now = old.get(HEARTBEAT), new.get(HEARTBEAT)
    if not isinstance(was, str) or not isinstance(is_now, str):
        return False
    try:
        earlier, later = parse_time(was), parse_time(is_now)
    except ValueError:
        return False
    return (
        earlier is not None and later is not None and earlier <= later and now - earlier <= HEARTBEAT_TIMEOUT
    )
