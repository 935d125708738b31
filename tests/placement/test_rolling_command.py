"""`manage.py rollout`: a CRP's waves as text or JSON, rolling out a new snapshot, running a round."""

import json
from io import StringIO

import pytest
from django.core.management import CommandError, call_command

from inventory.models import AuditEntry
from placement.models import Owner
from placement.rollouts import rolling
from tests.placement.rollout_hub import AVAILABLE, offline_crp

pytestmark = pytest.mark.django_db


def rollout(*args: str) -> str:
    out = StringIO()
    call_command("rollout", *args, stdout=out)
    return out.getvalue()


def test_text_shows_the_wave_budgets_and_bindings() -> None:
    placement = offline_crp()
    rolling.run_round(placement)
    text = rollout("crp", "web")
    assert "Resource snapshot: web-0-snapshot" in text and "Wave: 1 m1, m2, m3" in text
    assert "maxUnavailable=1" in text and "Next round: 20" in text
    assert "  CLUSTER  STATE  SNAPSHOT        RolloutStarted  Applied  Available  VERDICT" in text
    assert "  m1       Bound  web-0-snapshot  True            -        -          -" in text


def test_new_snapshot_and_a_round_as_json() -> None:
    placement = offline_crp()
    rolling.run_round(placement)
    placement.bindings.update(status=AVAILABLE)
    state = json.loads(rollout("crp", "web", "--new-snapshot", "--round", "-o", "json"))
    assert state["resourceSnapshot"]["index"] == 1 and state["rollout"]["updated"] == ["m1"]
    assert AuditEntry.objects.get(action="placement.rollout").actor_name == "rollout command"


def test_hub_mirrors_are_refused() -> None:
    offline_crp(owner=Owner.HUB)
    with pytest.raises(CommandError, match="roll it out there"):
        rollout("crp", "web", "--new-snapshot")
