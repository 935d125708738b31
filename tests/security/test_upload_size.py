"""A 20 MB upload, form or API, answers 413 with a message before it is read, and the site stays up."""

import pytest
from django.contrib.auth.models import User
from django.urls import reverse

from placement.models import Placement
from tests.factories import HubFactory, UserFactory
from tests.security.bounded import LiveSite

pytestmark = pytest.mark.django_db(transaction=True)

TWENTY_MB = 20 * 1024 * 1024
MESSAGE = "at most 2621440 bytes are accepted"


@pytest.fixture
def admin() -> User:
    return UserFactory(is_superuser=True, is_staff=True)


def test_upload_form(live_site: LiveSite, admin: User) -> None:
    hub = HubFactory()
    manifests = b"# padding\n" * (TWENTY_MB // 10)

    answer = live_site.request(
        live_site.session(admin),
        "POST",
        reverse("placement:placement-upload"),
        data={"hub": hub.pk},
        files={"manifests": ("big.yaml", manifests)},
    )

    assert answer.response.status_code == 413 and MESSAGE in answer.response.text
    assert answer.elapsed < 5.0 and live_site.alive()
    assert not Placement.objects.exists()


def test_api(live_site: LiveSite, admin: User) -> None:
    body = b'{"spec": "' + b"x" * TWENTY_MB + b'"}'

    answer = live_site.request(
        live_site.session(admin),
        "POST",
        "/api/placements/",
        data=body,
        headers={"Content-Type": "application/json"},
    )

    assert answer.response.status_code == 413 and MESSAGE in answer.response.json()["detail"]
    assert live_site.alive()


def test_upload_over_the_manifest_limit_is_a_form_error(live_site: LiveSite, admin: User) -> None:
    """Between the file limit (1 MiB) and the request limit: the form names the file and the limit."""
    hub = HubFactory()

    answer = live_site.request(
        live_site.session(admin),
        "POST",
        reverse("placement:placement-upload"),
        data={"hub": hub.pk},
        files={"manifests": ("big.yaml", b"# padding\n" * 150_000)},
    )

    assert answer.response.status_code == 400
    assert "big.yaml: the file is too large: 1500000 bytes (at most 1048576)" in answer.response.text
