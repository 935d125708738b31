"""A kilobyte YAML alias bomb, at every entry point that reads YAML, against the live site and commands.

Expanded, the bomb below is 9^9 strings (gigabytes of values); each entry point must refuse it in well
under a second, name the refusal, stay within a few hundred MB and store nothing.
"""

import time
from pathlib import Path

import pytest
from django.contrib.auth.models import User
from django.urls import reverse

from demohub import DemoHub
from placement.models import Placement, StagedUpdateStrategy
from placement.rollouts.preview import STRATEGY_ANNOTATION
from tests.factories import HubFactory, UserFactory, synced_demo_hub_row
from tests.security.bounded import LiveSite, run_command

pytestmark = pytest.mark.django_db(transaction=True)

LEVELS = "abcdefgh"
BOMB = 'a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]\n' + "".join(
    f"{name}: &{name} [{', '.join([f'*{previous}'] * 9)}]\n"
    for previous, name in zip(LEVELS, LEVELS[1:] + "i", strict=True)
)
# the end of the loader's refusal, the same in a page (where "&" is escaped), a JSON answer or a terminal
REFUSAL = "are not allowed; Kubernetes manifests never need them"
# one answer, however hostile the request: well under a second, and memory far below the bomb's
ANSWER_SECONDS = 1.0
PEAK_BYTES = 600 * 1024 * 1024


def _bomb_manifest(indent: str = "  ") -> str:
    return "".join(f"{indent}{line}\n" for line in BOMB.splitlines())


PLACEMENT_BOMB = (
    "apiVersion: cluster.open-cluster-management.io/v1beta1\nkind: Placement\n"
    "metadata: {name: bomb, namespace: default}\nspec:\n" + _bomb_manifest()
)


@pytest.fixture
def admin() -> User:
    return UserFactory(is_superuser=True, is_staff=True)


def test_the_bomb_is_small_and_uses_aliases() -> None:
    assert len(BOMB) < 1100 and BOMB.count("*") == 72


def test_annotation_bomb_synced_from_the_hub(demo_hub: DemoHub, live_site: LiveSite, admin: User) -> None:
    metadata = demo_hub.store.list("Placement").items[0]["metadata"]
    namespace, name = metadata["namespace"], metadata["name"]
    annotations = {"metadata": {"annotations": {STRATEGY_ANNOTATION: BOMB}}}
    demo_hub.store.patch("Placement", name, annotations, namespace=namespace)
    hub = synced_demo_hub_row(demo_hub)
    placement = Placement.objects.get(hub=hub, namespace=namespace, name=name)
    assert placement.annotations[STRATEGY_ANNOTATION] == BOMB
    session = live_site.session(admin)

    page = live_site.request(session, "GET", reverse("placement:placement-rollout", args=[placement.pk]))
    api = live_site.request(session, "GET", f"/api/placements/{placement.pk}/rollout/")

    assert page.response.status_code == 200 and REFUSAL in page.response.text
    assert api.response.status_code < 500 and len(api.response.content) < 1_000_000
    assert page.elapsed < ANSWER_SECONDS and api.elapsed < ANSWER_SECONDS
    assert live_site.peak_rss() < PEAK_BYTES


def test_upload_form(live_site: LiveSite, admin: User) -> None:
    hub = HubFactory()
    session = live_site.session(admin)

    answer = live_site.request(
        session,
        "POST",
        reverse("placement:placement-upload"),
        data={"hub": hub.pk},
        files={"manifests": ("bomb.yaml", PLACEMENT_BOMB.encode())},
    )

    assert answer.response.status_code == 400 and REFUSAL in answer.response.text
    assert answer.elapsed < ANSWER_SECONDS and live_site.peak_rss() < PEAK_BYTES
    assert not Placement.objects.exists()


def test_new_placement_form(live_site: LiveSite, admin: User) -> None:
    hub = HubFactory()
    session = live_site.session(admin)
    data = {
        "hub": hub.pk,
        "kind": Placement.Kind.PLACEMENT,
        "namespace": "default",
        "name": "bomb",
        "spec": BOMB,
    }

    answer = live_site.request(session, "POST", reverse("placement:placement-create"), data=data)

    assert answer.response.status_code in (200, 400) and REFUSAL in answer.response.text
    assert answer.elapsed < ANSWER_SECONDS and live_site.peak_rss() < PEAK_BYTES
    assert not Placement.objects.exists()


def test_new_strategy_form(live_site: LiveSite, admin: User) -> None:
    hub = HubFactory(serves_fleet=True)
    session = live_site.session(admin)

    answer = live_site.request(
        session,
        "POST",
        reverse("rollouts:strategy-create"),
        data={"hub": hub.pk, "name": "bomb", "spec": BOMB},
    )

    assert answer.response.status_code == 400 and REFUSAL in answer.response.text
    assert answer.elapsed < ANSWER_SECONDS and live_site.peak_rss() < PEAK_BYTES
    assert not StagedUpdateStrategy.objects.exists()


@pytest.mark.parametrize("command", [["apply", "--hub", "{hub}"], ["schedule"]])
def test_commands(command: list[str], tmp_path: Path) -> None:
    hub = HubFactory()
    manifest = tmp_path / "bomb.yaml"
    manifest.write_text(PLACEMENT_BOMB)
    started = time.monotonic()

    result = run_command(*(part.format(hub=hub.name) for part in command), "-f", str(manifest))

    assert result.returncode == 2, result.stderr
    assert REFUSAL in result.stderr and f"{manifest}: document 1: invalid YAML at line 5" in result.stderr
    assert result.peak_rss < PEAK_BYTES and time.monotonic() - started < 60
    assert not Placement.objects.exists()
