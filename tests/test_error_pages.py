"""The site's own error pages: 400, 403, 404 and 500 look like the rest of the site (its layout and
stylesheet, a way back) instead of Django's bare text, and the 500 page needs no request or user."""

import pytest
from django.core.exceptions import PermissionDenied
from django.test import Client, RequestFactory
from django.views import defaults

from tests.factories import UserFactory


def test_a_missing_page_is_the_sites_404(db: None, client: Client) -> None:
    client.force_login(UserFactory())
    response = client.get("/no-such-page/")
    assert response.status_code == 404
    page = response.text
    assert "css/site.css" in page and '<h1 id="error-heading">Not found</h1>' in page
    # a hidden object's address answers the same 404: the page repeats nothing of it
    assert "no-such-page" not in page and 'aria-label="Main"' in page


@pytest.mark.parametrize(
    ("view", "status", "heading"),
    [
        (lambda request: defaults.bad_request(request, ValueError("unreadable")), 400, "Bad request"),
        (
            lambda request: defaults.permission_denied(request, PermissionDenied("not yours")),
            403,
            "Not allowed",
        ),
        (defaults.server_error, 500, "Something went wrong"),
    ],
    ids=["400", "403", "500"],
)
def test_error_pages_use_the_site_layout(db: None, view, status: int, heading: str) -> None:
    response = view(RequestFactory().get("/somewhere/"))
    assert response.status_code == status
    page = response.content.decode()
    assert "css/site.css" in page and f'<h1 id="error-heading">{heading}</h1>' in page
    if status == 403:
        assert "not yours" in page
