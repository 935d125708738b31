"""JSON nested 500 deep, to the what-if Apply and to an API PATCH of the live site: 400 naming the limit,
in well under a second, and the spec unchanged."""

import json

import pytest
from django.contrib.auth.models import User
from django.urls import reverse

from placement.models import Owner, Placement
from tests.factories import PlacementFactory, UserFactory
from tests.security.bounded import LiveSite

pytestmark = pytest.mark.django_db(transaction=True)

DEEP = "[" * 500 + "]" * 500
REFUSAL = "nested more than 64 levels deep"


@pytest.fixture
def admin() -> User:
    return UserFactory(is_superuser=True, is_staff=True)


@pytest.fixture
def placement() -> Placement:
    return PlacementFactory(owner=Owner.DASHBOARD, spec={"numberOfClusters": 2})


def test_whatif_apply(live_site: LiveSite, admin: User, placement: Placement) -> None:
    path = reverse("placement:placement-whatif-apply", args=[placement.pk])

    answer = live_site.request(
        live_site.session(admin), "POST", path, data={"spec": DEEP}, headers={"HX-Request": "true"}
    )

    assert answer.response.status_code == 400 and REFUSAL in answer.response.text
    assert answer.elapsed < 1.0 and live_site.alive()
    placement.refresh_from_db()
    assert placement.spec == {"numberOfClusters": 2}


def test_api_patch(live_site: LiveSite, admin: User, placement: Placement) -> None:
    body = '{"spec": {"numberOfClusters": 1, "predicates": ' + DEEP + "}}"

    answer = live_site.request(
        live_site.session(admin),
        "PATCH",
        f"/api/placements/{placement.pk}/",
        data=body,
        headers={"Content-Type": "application/json"},
    )

    assert answer.response.status_code == 400
    assert REFUSAL in json.loads(answer.response.text)["detail"]
    assert answer.elapsed < 1.0 and live_site.alive()
    placement.refresh_from_db()
    assert placement.spec == {"numberOfClusters": 2}


def test_api_patch_at_the_limit_is_read(live_site: LiveSite, admin: User, placement: Placement) -> None:
    """64 levels (the body, its spec, then 62 lists) are read: the spec's own check answers."""
    body = '{"spec": {"predicates": ' + "[" * 62 + "]" * 62 + "}}"

    answer = live_site.request(
        live_site.session(admin),
        "PATCH",
        f"/api/placements/{placement.pk}/",
        data=body,
        headers={"Content-Type": "application/json"},
    )

    assert answer.response.status_code == 400 and REFUSAL not in answer.response.text
    assert "spec.predicates" in answer.response.text
