"""The Content-Security-Policy (django-csp) allows scripts from the site's own files only, no inline script
and no eval; Chromium walks the main pages (the taint editor's htmx swaps, the what-if and run charts, the
approvals inbox, the admin, Swagger UI, the browsable API) and sees not one violation, and a section that
carries its own refusal still swaps the 403 in with its reason (static/js/htmx-swaps.js)."""

import pytest
from django.core.management import call_command
from django.urls import reverse

from inventory.models import ClusterSetRole, ManagedCluster, ManagedClusterSet
from inventory.views import BIND_DENIED
from placement.models import Placement
from tests.factories import ClusterSetRoleFactory, UserFactory
from tests.placement.runs_support import approval_request
from tests.security.pages_support import log_in, started_run, watched_page
from tests.web.conftest import browser  # noqa: F401 - the fixture

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def directives(header: str) -> dict[str, list[str]]:
    return {name: values for name, *values in (part.split() for part in header.split(";") if part.strip())}


def test_the_main_pages_run_under_the_policy_without_a_violation(browser, live_server) -> None:  # noqa: F811
    call_command("load_demo")
    root = UserFactory(username="root", is_superuser=True, is_staff=True)
    cluster = ManagedCluster.objects.filter(kind=ManagedCluster.Kind.MANAGED_CLUSTER).order_by("name").first()
    cluster_set = ManagedClusterSet.objects.order_by("name").first()
    placement = Placement.objects.filter(kind=Placement.Kind.PLACEMENT).exclude(explanation=None).first()
    run = started_run("canary", cluster.name)
    approval_request(run.hub, "gate")
    violations: list[str] = []
    page = watched_page(browser, violations)
    log_in(page, live_server.url, root)

    def visit(path: str, ready: str) -> None:
        response = page.goto(live_server.url + path)
        assert response.ok, path
        policy = directives(response.headers["content-security-policy"])
        assert policy["script-src"] == ["'self'"] and policy["object-src"] == ["'none'"], path
        page.wait_for_selector(ready, state="attached")

    visit("/", "#hub-syncs")
    visit(reverse("inventory:cluster-list"), "#clusters")
    visit(reverse("inventory:cluster-detail", args=[cluster.pk]), "#taint-editor")
    rows = page.locator("#taints tbody tr").count()
    page.click("#taint-add")  # an htmx swap of the section
    page.wait_for_function(f"() => document.querySelectorAll('#taints tbody tr').length === {rows + 1}")
    page.click("#taint-preview-button")
    page.wait_for_selector("#taint-impacts, #taints-section .error", state="attached")
    visit(reverse("inventory:clusterset-detail", args=[cluster_set.pk]), "#bindings-section")
    visit(reverse("placement:placement-scores", args=[placement.pk]), "#score-chart .main-svg")
    visit(reverse("placement:placement-whatif", args=[placement.pk]), "#score-chart .main-svg")
    visit(reverse("placement:placement-detail", args=[placement.pk]) + "#score-table", "#score-table")
    visit(reverse("rollouts:run-detail", args=[run.pk]), "#run-timeline .main-svg")
    visit(reverse("rollouts:approval-list"), "#approvals")
    visit(reverse("admin:index"), "#content-main")
    visit(reverse("admin:auth_user_changelist"), "#result_list")
    visit(reverse("admin:auth_user_change", args=[root.pk]), "#user_form")
    visit(reverse("api-docs"), ".swagger-ui .opblock")
    visit(reverse("api-root"), ".response-info")
    page.wait_for_timeout(500)  # reports are delivered asynchronously

    assert violations == []
    page.context.close()


def test_a_refused_binding_swaps_its_reason_into_the_section(browser, live_server) -> None:  # noqa: F811
    call_command("load_demo")
    cluster_set = ManagedClusterSet.objects.order_by("name").first()
    role = ClusterSetRoleFactory(cluster_set=cluster_set, role=ClusterSetRole.Role.ADMIN)
    violations: list[str] = []
    page = watched_page(browser, violations)
    log_in(page, live_server.url, role.user)
    page.goto(live_server.url + reverse("inventory:clusterset-detail", args=[cluster_set.pk]))
    page.evaluate("window.__noReload = true")  # survives htmx swaps, not a page load
    role.role = ClusterSetRole.Role.VIEW  # taken away while the page is open
    role.save()

    page.fill("#id_namespace", "web")
    with page.expect_response(lambda response: response.request.method == "POST") as answer:
        page.click("#bind-form button[type=submit]")

    assert answer.value.status == 403
    page.wait_for_selector("#binding-error")
    assert page.inner_text("#binding-error") == BIND_DENIED
    assert page.locator("#bind-form").count() == 0  # the section as the viewer now sees it
    assert page.evaluate("window.__noReload") is True
    assert violations == []
    page.context.close()
