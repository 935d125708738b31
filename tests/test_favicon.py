"""The site has an icon: pages link it, and `/favicon.ico` (what browsers ask for where no page links one,
such as the API's JSON answers) redirects to it instead of answering 404."""

from django.contrib.staticfiles import finders
from django.templatetags.static import static
from django.test import Client


def test_favicon_ico_redirects_to_the_icon_the_pages_link(db: None, client: Client) -> None:
    response = client.get("/favicon.ico")
    assert response.status_code == 301
    icon = response["Location"]
    assert icon == static("img/favicon.svg")
    assert finders.find("img/favicon.svg") is not None
    assert f'<link rel="icon" type="image/svg+xml" href="{icon}">' in client.get("/accounts/login/").text
