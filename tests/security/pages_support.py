"""Browser helpers of the page-hardening tests: a login through the form, a started run whose timeline
names what it is given, and a page that reports every Content-Security-Policy violation."""

from datetime import timedelta
from typing import Any

from django.contrib.auth.base_user import AbstractBaseUser
from django.utils import timezone

from placement.models import StagedUpdateRun
from placement.scheduler.timeutil import format_time
from tests.factories import PASSWORD, StagedUpdateRunFactory

# Reports each violation the page sees (blocked inline script or style, eval, a foreign URL) to the test;
# Playwright runs it in every document before the page's own scripts, unaffected by the policy.
REPORT_VIOLATIONS = """
document.addEventListener("securitypolicyviolation", (event) => {
  window.reportViolation(`${event.violatedDirective} blocked ${event.blockedURI || "inline"} at ` +
    `${event.sourceFile}:${event.lineNumber} on ${document.location.pathname}`);
});
"""


def watched_page(browser: Any, violations: list[str]) -> Any:
    """A page of a context of its own whose CSP violations (events and console reports) go to `violations`."""
    context = browser.new_context()
    context.expose_binding("reportViolation", lambda source, text: violations.append(text))
    context.add_init_script(REPORT_VIOLATIONS)
    page = context.new_page()
    page.set_default_timeout(20_000)
    page.on(
        "console",
        lambda message: (
            violations.append(message.text) if "Content Security Policy" in message.text else None
        ),
    )
    return page


def log_in(page: Any, base_url: str, user: AbstractBaseUser) -> None:
    page.goto(f"{base_url}/accounts/login/")
    page.fill("#id_username", user.get_username())
    page.fill("#id_password", PASSWORD)
    page.click("button[type=submit]")
    page.wait_for_selector(".user-name")


def started_run(stage: str, cluster: str, **fields: Any) -> StagedUpdateRun:
    """A run (of a CRP of its own) whose stage `stage` began ten minutes ago and is updating `cluster`."""
    began = format_time(timezone.now() - timedelta(minutes=10))
    progressing = {
        "type": "Progressing",
        "status": "True",
        "reason": "Progressing",
        "lastTransitionTime": began,
    }
    started = {"type": "Started", "status": "True", "reason": "Started", "lastTransitionTime": began}
    status = {
        "conditions": [progressing],
        "stagesStatus": [
            {
                "stageName": stage,
                "startTime": began,
                "conditions": [progressing],
                "clusters": [{"clusterName": cluster, "conditions": [started]}],
            }
        ],
    }
    return StagedUpdateRunFactory(status=status, **fields)
