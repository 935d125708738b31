"""Every response says how long the application took (`Server-Timing: app;dur=<ms>`), pages, API and
errors alike: the figure bench/pages.py --load reads under load."""

import re

import pytest
from django.test import Client

TIMING = re.compile(r"^app;dur=\d+\.\d$")


@pytest.mark.parametrize("path", ["/healthz", "/accounts/login/", "/api/clusters/", "/no-such-page/"])
def test_every_response_carries_the_application_time(client: Client, db: None, path: str) -> None:
    response = client.get(path)
    assert TIMING.match(response["Server-Timing"]), response["Server-Timing"]
