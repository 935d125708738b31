"""Login throttling (django-axes): 5 failed logins for one username from one address lock that pair out
for 15 minutes, on the login page and the admin's, with the reason on a page; the right password is
refused meanwhile, other users and other addresses are not, a success clears the count."""

import logging
from datetime import timedelta

import pytest
from axes.models import AccessAttempt
from django.db.models import F
from django.http import HttpResponse
from django.test import Client
from django.urls import reverse

from tests.factories import UserFactory

pytestmark = pytest.mark.django_db

ADDRESS, OTHER_ADDRESS = "203.0.113.7", "203.0.113.8"
LOCKED = "Too many failed logins for alice from this address"


@pytest.fixture
def users(db: None) -> None:
    UserFactory(username="alice")
    UserFactory(username="bob")


def log_in(username: str, password: str, *, address: str = ADDRESS, url: str = "") -> HttpResponse:
    """One login from a browser of its own at `address` (the login page unless `url` names another)."""
    return Client(REMOTE_ADDR=address).post(
        url or reverse("login"), {"username": username, "password": password, "next": "/"}
    )


def fail(times: int, *, url: str = "") -> list[int]:
    return [log_in("alice", "wrong", url=url).status_code for _ in range(times)]


def text(response: HttpResponse) -> str:
    return response.content.decode()


def test_the_fifth_failure_locks_and_the_right_password_is_refused_with_the_reason(
    users: None, password: str, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.WARNING, logger="axes"):
        assert fail(4) == [200] * 4  # the form again, with its error

        fifth = log_in("alice", "wrong")
        sixth = log_in("alice", password)

    for response in (fifth, sixth):
        assert response.status_code == 429
        assert LOCKED in text(response) and "locked for 15\xa0minutes" in text(response)
        assert 'id="locked-out"' in text(response) and "<title>Log in" in text(response)
    assert "_auth_user_id" not in sixth.wsgi_request.session
    attempt = AccessAttempt.objects.get(username="alice")
    # the refused sixth is not recorded: a locked login cannot be made to grow its row
    assert (attempt.ip_address, attempt.failures_since_start) == (ADDRESS, 5)
    assert "password=wrong" not in attempt.post_data and "password=***" in attempt.post_data
    assert f'AXES: Locking out {{username: "alice", ip_address: "{ADDRESS}"' in caplog.text


def test_other_users_and_other_addresses_are_unaffected(users: None, password: str) -> None:
    fail(5)

    assert log_in("bob", password).status_code == 302
    assert log_in("alice", password, address=OTHER_ADDRESS).status_code == 302
    assert log_in("alice", password).status_code == 429


def test_the_admin_login_counts_and_is_locked_too(users: None, password: str) -> None:
    admin_login = reverse("admin:login")
    fail(2)
    assert fail(3, url=admin_login)[-1] == 429

    refused = log_in("alice", password, url=admin_login)
    assert refused.status_code == 429 and LOCKED in text(refused)
    assert log_in("alice", password).status_code == 429


def test_a_success_clears_the_count(users: None, password: str) -> None:
    fail(4)
    assert log_in("alice", password).status_code == 302

    assert fail(4) == [200] * 4
    assert log_in("alice", password).status_code == 302


def test_the_lockout_ends_15_minutes_after_the_last_failure(users: None, password: str) -> None:
    fail(5)
    AccessAttempt.objects.update(attempt_time=F("attempt_time") - timedelta(minutes=14))
    assert log_in("alice", password).status_code == 429

    AccessAttempt.objects.update(attempt_time=F("attempt_time") - timedelta(minutes=1, seconds=1))
    assert log_in("alice", password).status_code == 302
