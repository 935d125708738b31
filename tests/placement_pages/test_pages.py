"""Placement pages: login, list columns and filters, htmx fragments, the detail page, query counts."""

import pytest
from django.contrib.auth.models import Permission, User
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from placement.models import Owner, Placement
from tests.factories import (
    ClusterResourceBindingFactory,
    DecisionChangeFactory,
    HubFactory,
    PlacementDecisionFactory,
    PlacementEventFactory,
    PlacementFactory,
    UserFactory,
    placement_role,
)
from tests.pages import shown
from tests.placement_pages.access_support import ADMIN, VIEW, bind, elsewhere_admin, grant
from tests.placement_pages.explanations import (
    FLEET_EXPLANATION,
    OCM_EXPLANATION,
    ocm_explanation_for,
)

pytestmark = pytest.mark.django_db

HTMX = {"HTTP_HX_REQUEST": "true"}
SATISFIED = {"type": "PlacementSatisfied", "status": "True", "reason": "AllDecisionsScheduled", "message": ""}
UNSATISFIED = {**SATISFIED, "status": "False", "reason": "NoManagedClusterMatched"}


def seed(count: int, viewer: User) -> list[Placement]:
    """`count` OCM placements (alternately satisfied, half dashboard-owned) plus one Fleet CRP; `viewer`
    holds the view role on the sets bound to namespaces web and ml, which have members: they see all."""
    hub = HubFactory(name="east", serves_fleet=True)
    for namespace in ("web", "ml"):
        bind(hub, namespace)
    placement_role(hub, ("web", "ml"), role=VIEW, user=viewer)
    placements = []
    for index in range(count):
        placement = PlacementFactory(
            hub=hub,
            name=f"p-{index:03d}",
            namespace="web" if index % 2 else "ml",
            owner=Owner.DASHBOARD if index % 2 else Owner.HUB,
            status={"conditions": [SATISFIED if index % 2 else UNSATISFIED], "numberOfSelectedClusters": 2},
        )
        PlacementDecisionFactory(placement=placement, owner=placement.owner, clusters=["c-1", "c-2"])
        DecisionChangeFactory(placement=placement)
        placements.append(placement)
    crp = PlacementFactory(
        hub=hub,
        kind=Placement.Kind.CLUSTER_RESOURCE_PLACEMENT,
        namespace="",
        name="web-app",
        spec={"policy": {"placementType": "PickN", "numberOfClusters": 3}},
    )
    ClusterResourceBindingFactory(placement=crp, target="m1")
    ClusterResourceBindingFactory(placement=crp, target="m2", state="Unscheduled")
    return placements


def test_pages_require_login(client) -> None:
    placement = PlacementFactory()
    urls = (reverse("placement:placement-list"), reverse("placement:placement-detail", args=[placement.pk]))
    for url in urls:
        response = client.get(url)
        assert response.status_code == 302 and response.url.startswith(reverse("login"))


def test_list_shows_kind_owner_counts_condition_and_last_change(logged_in_client, user: User) -> None:
    seed(2, user)
    html = logged_in_client.get(reverse("placement:placement-list")).content.decode()
    assert ">ml/p-000</a>" in html and ">web/p-001</a>" in html and ">web-app</a>" in html
    assert '<td class="number">2 / 2</td>' in html  # OCM: its own decisions' clusters / numberOfClusters
    assert '<td class="number">1 / 3</td>' in html  # Fleet: live bindings / PickN
    assert "AllDecisionsScheduled" in html and "NoManagedClusterMatched" in html
    assert "owner-dashboard" in html and "owner-hub" in html
    assert ">Placements</a>" in html  # the nav link


@pytest.mark.parametrize(
    ("params", "expected"),
    [
        ({"kind": "ClusterResourcePlacement"}, {"web-app"}),
        ({"owner": "dashboard"}, {"p-001", "p-003"}),
        ({"namespace": "ml"}, {"p-000", "p-002"}),
        ({"satisfied": "true"}, {"p-001", "p-003"}),
        ({"satisfied": "false"}, {"p-000", "p-002", "web-app"}),
        ({"q": "web"}, {"p-001", "p-003", "web-app"}),
        ({"hub": "east", "q": "p-00"}, {"p-000", "p-001", "p-002", "p-003"}),
    ],
)
def test_list_filters(logged_in_client, user: User, params: dict, expected: set[str]) -> None:
    seed(4, user)
    response = logged_in_client.get(reverse("placement:placement-list"), params, **HTMX)
    assert response.status_code == 200
    names = {p.name for p in shown(response)}
    assert names == expected
    assert "<html" not in response.content.decode()  # only the fragment


def test_the_list_leaves_out_what_the_roles_do_not_show(client, user: User) -> None:
    """A viewer of namespace web alone sees its placements and the CRP (its set has members), not ml's;
    without a role, with the staff flag and the model permission alone, or as admin of a set of another
    hub, nothing."""
    placements = seed(4, UserFactory(username="everything"))
    web_viewer = placement_role(placements[0].hub, ("web",), role=VIEW, username="web-viewer")
    staff = UserFactory(username="staff", is_staff=True)
    staff.user_permissions.add(Permission.objects.get(codename="view_placement"))
    for viewer, expected in (
        (web_viewer, {"p-001", "p-003", "web-app"}),
        (user, set()),
        (staff, set()),
        (elsewhere_admin(username="elsewhere"), set()),
    ):
        client.force_login(viewer)
        response = client.get(reverse("placement:placement-list"))
        assert {p.name for p in shown(response)} == expected, viewer
    client.force_login(web_viewer)
    assert detail(client, placements[0]).status_code == 404  # ml/p-000
    assert detail(client, placements[1]).status_code == 200  # web/p-001


def test_bad_filter_answers_400_with_the_field(logged_in_client) -> None:
    response = logged_in_client.get(reverse("placement:placement-list"), {"kind": "Deployment"})
    assert response.status_code == 400
    assert "kind: Select a valid choice" in response.content.decode()


@pytest.mark.parametrize("count", [1, 200])
def test_list_query_count_is_constant(logged_in_client, user: User, count: int) -> None:
    seed(count, user)
    with CaptureQueriesContext(connection) as captured:
        response = logged_in_client.get(
            reverse("placement:placement-list"), {"per_page": 500, "sort": "-changed"}
        )
    assert response.status_code == 200
    assert len(shown(response)) == count + 1
    # session, user, count, page (the roles narrow both as subqueries), the hub choices of the form, the
    # approvals badge of the nav bar, and (+1, once per request) whether the user administers any set,
    # deciding whether the New placement / Upload links show
    assert len(captured) <= 7, [q["sql"] for q in captured]


def detail(client, placement: Placement, tab: str = "detail", **params: str):
    """A tab of the placement page (`detail`: the Decisions tab)."""
    return client.get(reverse(f"placement:placement-{tab}", args=[placement.pk]), params)


def test_the_tabs_show_the_score_table_chart_decisions_and_timeline(logged_in_client, user: User) -> None:
    placement = PlacementFactory(
        name="p",
        spec={"numberOfClusters": 2},
        explanation=OCM_EXPLANATION,
        status={key: OCM_EXPLANATION[key] for key in ("conditions", "decisionGroups")},
    )
    grant(user, placement)
    PlacementDecisionFactory(
        placement=placement, clusters=["b", "c"], labels={"cluster.open-cluster-management.io/placement": "p"}
    )
    PlacementEventFactory(placement=placement, reason="ScoreUpdate", message="a:140 b:270 c:200 ")
    DecisionChangeFactory(placement=placement, trigger="weights edited", added=["c"], removed=["a"])
    response = detail(logged_in_client, placement, "scores")
    html = response.content.decode()
    assert response.status_code == 200
    rows = shown(response)
    assert [(row.name, row.rank, row.total) for row in rows] == [
        ("b", 1, 270),
        ("c", 2, 200),
        ("a", 3, 140),
        ("d", None, None),
    ]
    assert '100 <span class="weighted">→ 200</span>' in html  # c: memory 100 × 2
    assert '-20 <span class="weighted">→ -60</span>' in html  # a: add-on −20 × 3
    assert "predicate: labelSelector region=us-east-1" in html
    chart = response.context["chart"]
    assert chart["data"][0]["x"] == ["b", "c", "a"]
    assert 'id="chart-data"' in html and "vendor/plotly/plotly.min.js" in html
    assert "Argo CD ConfigMap" in html  # the header, on every tab
    html = detail(logged_in_client, placement).content.decode()
    assert "p-decision-1" in html and "AllDecisionsScheduled" in html
    html = detail(logged_in_client, placement, "history").content.decode()
    assert "ScoreUpdate" in html and "weights edited" in html and "− a" in html
    html = detail(logged_in_client, placement, "whatif").content.decode()
    assert 'id="whatif-form"' in html and 'id="weight-0"' not in html  # no configurations in this spec


def test_score_table_sorts_filters_and_pages_on_the_server(logged_in_client, user: User) -> None:
    placement = PlacementFactory(explanation=ocm_explanation_for(120))
    grant(user, placement)
    response = logged_in_client.get(
        reverse("placement:placement-scores", args=[placement.pk]),
        {"sort": "-rank", "show": "selected", "page": "2"},
        **HTMX,
    )
    assert response.status_code == 200
    assert response.templates[0].name == "placement/_score_table.html"
    names = [row.name for row in shown(response)]
    # 60 selected (even indexes), reversed rank order: page 2 holds the last 10
    assert names == [f"c-{i:04d}" for i in range(18, -1, -2)]


def test_fleet_detail_shows_affinity_and_spread_and_bindings(logged_in_client) -> None:
    crp = PlacementFactory(
        kind=Placement.Kind.CLUSTER_RESOURCE_PLACEMENT,
        namespace="",
        name="web-app",
        explanation=FLEET_EXPLANATION,
        owner=Owner.DASHBOARD,
        spec={
            "policy": {
                "placementType": "PickN",
                "numberOfClusters": 2,
                "affinity": {
                    "clusterAffinity": {
                        "preferredDuringSchedulingIgnoredDuringExecution": [
                            {"weight": 40, "preference": {"labelSelector": {"matchLabels": {"tier": "gold"}}}}
                        ]
                    }
                },
            }
        },
    )
    ClusterResourceBindingFactory(placement=crp, target="m2", owner=Owner.DASHBOARD)
    logged_in_client.force_login(grant(UserFactory(username="ops"), crp, role=ADMIN))
    html = detail(logged_in_client, crp, "whatif").content.decode()
    assert "TopologySpread" in html and "Affinity" in html
    assert 'id="preferred-0"' in html and 'min="-100" max="100"' in html and "tier=gold weight" in html
    assert 'id="whatif-count"' in html
    assert 'id="whatif-apply"' in html
    html = detail(logged_in_client, crp).content.decode()
    assert "web-app-m2" in html and "Bound" in html


def test_apply_is_offered_only_to_admins_of_a_set_of_dashboard_placements(
    logged_in_client, user: User
) -> None:
    hub = HubFactory(name="east")
    mirror = PlacementFactory(hub=hub, owner=Owner.HUB)
    owned = PlacementFactory(hub=hub, owner=Owner.DASHBOARD)
    grant(user, owned)  # the view role: alice sees both, namespace default's
    assert 'id="whatif-apply"' not in detail(logged_in_client, owned, "whatif").content.decode()
    logged_in_client.force_login(grant(UserFactory(username="ops"), owned, role=ADMIN))
    assert 'id="whatif-apply"' in detail(logged_in_client, owned, "whatif").content.decode()
    html = detail(logged_in_client, mirror, "whatif").content.decode()
    assert 'id="whatif-apply"' not in html and "belongs to its hub" in html
    # neither the staff flag with the model permission nor a set of another hub shows the placement
    staff = UserFactory(username="staff", is_staff=True)
    staff.user_permissions.add(Permission.objects.get(codename="change_placement"))
    for outsider in (staff, elsewhere_admin(username="elsewhere")):
        logged_in_client.force_login(outsider)
        assert detail(logged_in_client, owned).status_code == 404
