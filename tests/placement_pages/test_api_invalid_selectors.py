"""The dashboard refuses, in the placements it writes, a label selector apimachinery cannot convert.

A hub may hold such a selector (the CRD schema checks only its types) and the scheduler reports it; the
dashboard's own create and edit requests answer 400 naming the selector instead.
"""

import pytest
from django.contrib.auth.models import User
from django.urls import reverse
from rest_framework.test import APIClient

from placement.models import Placement
from tests.placement_pages.access_support import api_for

pytestmark = pytest.mark.django_db

FOO = {"matchExpressions": [{"key": "env", "operator": "Foo"}]}
PREDICATE_SELECTOR = "spec.predicates[0].requiredClusterSelector.labelSelector"


@pytest.fixture
def api(tasks_in_process: None, ops: User) -> APIClient:
    return api_for(ops)


def _create(api: APIClient, spec: dict) -> object:
    body = {"hub": "manifests", "kind": "Placement", "namespace": "web", "name": "shop", "spec": spec}
    return api.post(reverse("placement-api:placement-list"), body, format="json")


def test_create_refuses_a_predicate_selector_that_does_not_convert(api: APIClient, demo_fleet: None) -> None:
    response = _create(api, {"predicates": [{"requiredClusterSelector": {"labelSelector": FOO}}]})

    assert response.status_code == 400
    assert response.json() == {PREDICATE_SELECTOR: ['"Foo" is not a valid label selector operator']}
    assert not Placement.objects.filter(name="shop").exists()


def test_an_edit_may_not_add_a_decision_group_selector_that_does_not_convert(
    api: APIClient, demo_fleet: None
) -> None:
    placement_id = _create(api, {"numberOfClusters": 1}).json()["id"]
    group = {"groupName": "canary", "groupClusterSelector": {"labelSelector": {"matchLabels": {"env": "-x"}}}}
    spec = {"decisionStrategy": {"groupStrategy": {"decisionGroups": [group]}}}

    response = api.patch(
        reverse("placement-api:placement-detail", args=[placement_id]), {"spec": spec}, format="json"
    )

    assert response.status_code == 400
    (field,) = response.json()
    assert field == "spec.decisionStrategy.groupStrategy.decisionGroups[0].groupClusterSelector.labelSelector"
    assert Placement.objects.get(pk=placement_id).spec == {"numberOfClusters": 1}
