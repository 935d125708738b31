"""What the browser tests check on every page: axe-core (from npm, `make test` installs it with `npm ci`)
finds no serious or critical accessibility violation, and nothing is wider than the window."""

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tests.conftest import unavailable

AXE = Path(__file__).resolve().parents[2] / "node_modules" / "axe-core" / "axe.min.js"
BLOCKING = ("serious", "critical")
VIEWPORT = {"width": 1280, "height": 800}


@dataclass(frozen=True)
class Problem:
    page: str
    rule: str
    impact: str
    element: str
    help: str

    def __str__(self) -> str:
        return f"{self.page}: {self.rule} ({self.impact}) at {self.element}: {self.help}"


def require_axe() -> Path:
    """axe.min.js; missing fails in CI and skips elsewhere, saying how to install it."""
    if not AXE.exists():
        unavailable(f"{AXE} is missing; install it with `npm ci` (make test does)")
    return AXE


def accessibility_problems(page: Any, name: str) -> list[Problem]:
    """The serious and critical axe violations of the page as it is now, one per element."""
    if not page.evaluate("() => typeof window.axe !== 'undefined'"):
        page.add_script_tag(path=str(require_axe()))
    violations = page.evaluate(
        "async () => (await axe.run(document, {resultTypes: ['violations']})).violations"
    )
    return [
        Problem(name, found["id"], found["impact"], " ".join(map(str, node["target"])), found["help"])
        for found in violations
        if found["impact"] in BLOCKING
        for node in found["nodes"]
    ]


def overflow_problems(page: Any, name: str) -> list[Problem]:
    """The page scrolls sideways: say by how much and which elements reach past the window's right edge."""
    width = page.evaluate("() => [document.documentElement.scrollWidth, window.innerWidth]")
    if width[0] <= width[1]:
        return []
    culprits = page.evaluate(
        """() => {
            const past = e => e.getBoundingClientRect().right > window.innerWidth + 1;
            const name = e => e.tagName.toLowerCase() + (e.id ? '#' + e.id : '')
                + (typeof e.className === 'string' && e.className ? '.' + e.className : '');
            // the outermost elements that reach past the edge: the ones to fix
            return [...document.querySelectorAll('body *')]
                .filter(e => past(e) && !(e.parentElement && past(e.parentElement)))
                .slice(0, 5).map(name);
        }"""
    )
    return [
        Problem(name, "horizontal-overflow", "serious", element, f"page {width[0]} px wide in {width[1]} px")
        for element in culprits or ["html"]
    ]
