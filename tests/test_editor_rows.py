"""The rows of the taint and toleration editors as the server draws them: one table row per entry, effect
and operator as selects of exactly the values the API accepts, labels naming the row, errors in the cell
of the input they concern (non-form errors above the table), Add and Remove answered by the server with
the focus on the new row or the row after the removed one, and a value sent with Exists ignored."""

import re

import pytest
from django.core.exceptions import ValidationError
from django.http import HttpResponse
from django.template.loader import render_to_string
from django.test import Client
from django.urls import reverse

from inventory.forms import TaintFormSet
from inventory.models import ManagedCluster, Owner
from placement.forms import TolerationFormSet
from placement.models import Placement
from tests.editors import rows_data
from tests.factories import ManagedClusterFactory, PlacementFactory, UserFactory

pytestmark = pytest.mark.django_db

HTMX = {"HTTP_HX_REQUEST": "true"}
OCM_EFFECTS = ["NoSelect", "NoSelectIfNew", "PreferNoSelect"]
OCM_TAINTS = [
    {"key": "dedicated", "value": "gpu", "effect": "NoSelect"},
    {"key": "example.com/drain", "value": "", "effect": "PreferNoSelect"},
]
FLEET_TAINTS = [{"key": "maintenance", "value": "kernel-upgrade", "effect": "NoSchedule"}]
TOLERATIONS = [{"key": "gpu", "operator": "Exists"}, {"key": "zone", "operator": "Equal", "value": "a"}]


@pytest.fixture
def root_client(client: Client) -> Client:
    client.force_login(UserFactory(username="root", is_staff=True, is_superuser=True))
    return client


def ocm_cluster() -> ManagedCluster:
    return ManagedClusterFactory(kind=ManagedCluster.Kind.MANAGED_CLUSTER, taints=OCM_TAINTS)


def fleet_cluster() -> ManagedCluster:
    return ManagedClusterFactory(kind=ManagedCluster.Kind.MEMBER_CLUSTER, taints=FLEET_TAINTS)


def ocm_placement() -> Placement:
    spec = {"numberOfClusters": 2, "tolerations": TOLERATIONS}
    return PlacementFactory(owner=Owner.DASHBOARD, spec=spec)


def fleet_placement() -> Placement:
    spec = {"policy": {"placementType": "PickAll", "tolerations": TOLERATIONS}}
    return PlacementFactory(
        owner=Owner.DASHBOARD, kind=Placement.Kind.CLUSTER_RESOURCE_PLACEMENT, namespace="", spec=spec
    )


def taints_url(cluster: ManagedCluster) -> str:
    return reverse("inventory:cluster-taints", args=[cluster.pk])


def tolerations_url(placement: Placement) -> str:
    return reverse("placement:placement-tolerations", args=[placement.pk])


def editor(client: Client, url: str) -> str:
    """The editor's section as htmx loads it (the taint editor is on the cluster page)."""
    if "/clusters/" in url:
        url = url.removesuffix("taints/")
    return client.get(url, **HTMX).content.decode()


def options(html: str, name: str) -> list[str]:
    select = re.search(rf'<select name="{name}"[^>]*>(.*?)</select>', html, re.S)
    assert select is not None, f"no select {name}"
    return re.findall(r'<option value="([^"]*)"', select[1])


def cell(html: str, input_id: str) -> str:
    """The table cell holding the input `input_id`."""
    found = re.search(
        rf'<td class="row-field[^"]*">(?:(?!</td>).)*id="{input_id}"(?:(?!</td>).)*</td>', html, re.S
    )
    assert found is not None, f"no cell for {input_id}"
    return found[0]


@pytest.mark.parametrize(
    ("make", "effects"),
    [(ocm_cluster, OCM_EFFECTS), (fleet_cluster, ["NoSchedule"])],
    ids=["ocm", "fleet"],
)
def test_taint_effects_are_exactly_those_of_the_cluster_kind(root_client: Client, make, effects) -> None:
    cluster = make()
    html = editor(root_client, taints_url(cluster))
    for index in range(len(cluster.taints) + 1):  # the stored rows and the blank one
        assert sorted(options(html, f"taints-{index}-effect")) == effects
    assert re.search(r'<select name="taints-0-effect"[^>]*>.*?<option value="[^"]+" selected>', html, re.S)


@pytest.mark.parametrize(
    ("make", "effects"),
    [(ocm_placement, ["", *OCM_EFFECTS]), (fleet_placement, ["", "NoSchedule"])],
    ids=["ocm", "fleet"],
)
def test_toleration_operators_and_effects_are_those_the_api_accepts(
    root_client: Client, make, effects
) -> None:
    html = editor(root_client, tolerations_url(make()))
    for index in range(3):
        assert sorted(options(html, f"tolerations-{index}-operator")) == ["Equal", "Exists"]
        assert sorted(options(html, f"tolerations-{index}-effect")) == effects
    assert '<option value="Exists" selected>Exists</option>' in html


def test_a_stored_value_outside_the_accepted_ones_stays_selected_and_is_named(root_client: Client) -> None:
    """A hub's taint with an effect this cluster kind does not define is shown as it is, not replaced by
    the first accepted effect on the next save."""
    cluster = ManagedClusterFactory(taints=[{"key": "old", "effect": "NoSchedule"}])
    html = editor(root_client, taints_url(cluster))
    assert options(html, "taints-0-effect")[-1] == "NoSchedule"
    assert '<option value="NoSchedule" selected>NoSchedule (not accepted)</option>' in html
    assert "(not accepted)" not in html.split('name="taints-1-effect"', 1)[1]


def test_one_table_row_per_entry_with_header_cells_and_labels_naming_the_row(root_client: Client) -> None:
    html = editor(root_client, tolerations_url(ocm_placement()))
    head = re.search(r'<table class="table row-editor" id="tolerations">\s*<thead>(.*?)</thead>', html, re.S)
    assert head is not None
    assert re.findall(r'<th scope="col">([^<]*)</th>', head[1]) == [
        "Key",
        "Operator",
        "Value",
        "Effect",
        "tolerationSeconds",
    ]
    row = re.search(r'<tr id="tolerations-1">(.*?)</tr>', html, re.S)
    assert row is not None
    assert re.findall(r'id="id_(tolerations-1-\w+)"', row[1]) == [
        f"tolerations-1-{name}" for name in ("key", "operator", "value", "effect", "tolerationSeconds")
    ]
    labels = re.findall(r'<label class="visually-hidden" for="id_tolerations-1-\w+">([^<]*)</label>', row[1])
    assert labels == [
        "Key of toleration 2",
        "Operator of toleration 2",
        "Value of toleration 2",
        "Effect of toleration 2",
        "tolerationSeconds of toleration 2",
    ]
    assert 'value="remove-1"' in row[1] and '<span class="visually-hidden"> toleration 2</span>' in row[1]


def test_field_errors_sit_in_the_cell_of_their_input(root_client: Client) -> None:
    cluster = ocm_cluster()
    rows = [{"key": "bad key", "value": "gpu", "effect": "NoSelect"}, {"key": "ok", "effect": "NoSchedule"}]
    response = root_client.post(
        taints_url(cluster), rows_data("taints", rows, initial=2, action="preview"), **HTMX
    )
    assert response.status_code == 400
    html = response.content.decode()
    key = cell(html, "id_taints-0-key")
    assert 'aria-invalid="true"' in key and 'aria-describedby="id_taints-0-key_error"' in key
    assert (
        '<ul class="error field-errors" id="id_taints-0-key_error"><li>Invalid value: &quot;bad key&quot;'
        in key
    )
    assert "_error" not in cell(html, "id_taints-0-value")
    effect = cell(html, "id_taints-1-effect")
    assert 'id="id_taints-1-effect_error"><li>Unsupported value: &quot;NoSchedule&quot;' in effect


def test_errors_of_no_row_come_above_the_table_and_of_a_whole_row_under_it() -> None:
    cluster = ocm_cluster()
    data = rows_data("taints", OCM_TAINTS, initial=2, action="save")
    formset = TaintFormSet(data, cluster=cluster)
    assert formset.is_valid()
    formset.add_path_errors(ValidationError({"taints": ["too many"], "taints[1]": ["duplicate taint"]}))
    html = render_to_string(
        "_row_editor.html",
        {"formset": formset, "table_id": "taints", "label": "Taint", "add_id": "taint-add"},
    )
    assert html.index('id="taints-errors"><li>taints: too many') < html.index(
        '<table class="table row-editor"'
    )
    row_errors = re.search(
        r'<tr id="taints-1">.*?</tr>\s*<tr class="row-errors"><td colspan="(\d)">(.*?)</td>', html, re.S
    )
    assert row_errors is not None
    assert row_errors[1] == "5"  # key, value, effect, Added, Remove
    assert 'id="taints-1-errors"><li>duplicate taint' in row_errors[2]


def post(client: Client, url: str, prefix: str, rows: list[dict], initial: int, action: str) -> HttpResponse:
    return client.post(url, rows_data(prefix, rows, initial=initial, action=action), **HTMX)


def test_add_appends_a_blank_row_and_focuses_it(root_client: Client) -> None:
    cluster = ocm_cluster()
    response = post(root_client, taints_url(cluster), "taints", OCM_TAINTS, 2, "add")
    html = response.content.decode()
    assert response.status_code == 200
    assert 'name="taints-TOTAL_FORMS" value="3"' in html
    assert re.findall(r"<input[^>]*autofocus[^>]*>", html) == [
        re.search(r'<input[^>]*id="id_taints-2-key"[^>]*>', html)[0]  # type: ignore[index]
    ]
    cluster.refresh_from_db()
    assert cluster.taints == OCM_TAINTS


def test_remove_hides_the_row_keeps_its_delete_and_focuses_the_next_row(root_client: Client) -> None:
    placement = ocm_placement()
    url = tolerations_url(placement)
    rows = [*TOLERATIONS, {"key": "third", "operator": "Exists"}]
    html = post(root_client, url, "tolerations", rows, 2, "remove-1").content.decode()
    assert 'id="tolerations-1"' not in html and 'id="id_tolerations-1-key"' not in html
    assert (
        '<input type="hidden" name="tolerations-1-DELETE" value="True" id="id_tolerations-1-DELETE">' in html
    )
    assert re.search(r'<input[^>]*autofocus[^>]*id="id_tolerations-2-key"', html)
    assert "Key of toleration 2</label>" in html and 'for="id_tolerations-2-key">Key of toleration 2<' in html

    # the removed row stays removed through the next press: the last row goes, the focus moves back
    removed = [TOLERATIONS[0], {"DELETE": "True"}, rows[2]]
    html = post(root_client, url, "tolerations", removed, 2, "remove-2").content.decode()
    assert re.findall(r'<tr id="(tolerations-\d)">', html) == ["tolerations-0"]
    assert re.search(r'<input[^>]*autofocus[^>]*id="id_tolerations-0-key"', html)

    # the last one: the Add button takes the focus
    gone = [{"DELETE": "True"}, {"DELETE": "True"}, {"DELETE": "True"}]
    html = post(root_client, url, "tolerations", gone, 2, "remove-0").content.decode()
    assert "No tolerations." in html and 'id="toleration-add" autofocus' in html
    placement.refresh_from_db()
    assert placement.spec["tolerations"] == TOLERATIONS  # nothing is saved by Add or Remove


def test_remove_works_without_javascript_on_the_editor_page(root_client: Client) -> None:
    cluster = ocm_cluster()
    data = rows_data("taints", OCM_TAINTS, initial=2, action="remove-0")
    html = root_client.post(taints_url(cluster), data).content.decode()
    assert "<html" in html and 'id="taints-0"' not in html and 'id="taints-1"' in html
    assert re.search(r'<input[^>]*autofocus[^>]*id="id_taints-1-key"', html)


def test_enter_in_an_input_previews(root_client: Client) -> None:
    """The form's default button (the first submit button, pressed by Enter) is Preview, not a Remove."""
    html = editor(root_client, taints_url(ocm_cluster()))
    form = html[html.index('id="taint-editor"') :]
    first = re.search(r"<button[^>]*>", form)
    assert first is not None and 'type="submit"' in first[0] and 'value="preview"' in first[0]


def test_a_value_sent_with_exists_is_ignored(root_client: Client) -> None:
    placement = ocm_placement()
    rows = [{"key": "gpu", "operator": "Exists", "value": "typed before Exists"}]
    formset = TolerationFormSet(rows_data("tolerations", rows, initial=0, action="save"), placement=placement)
    assert formset.is_valid()
    assert formset.rows() == [{"key": "gpu", "operator": "Exists"}]
    html = editor(root_client, tolerations_url(placement))
    assert re.search(r'<input type="text" name="tolerations-0-value"[^>]*data-operand', html)
    assert re.search(r'<select name="tolerations-0-operator"[^>]*data-operator', html)
