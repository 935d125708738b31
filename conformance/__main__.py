"""`python -m conformance [--family ocm|fleet|all] [--cases N] [--seed S] [--write-regressions]`.

Generates N random cases per family from the seed (a fresh one unless given; printed first so a run
can be replayed), runs the oracle and our scheduler on each, prints every disagreement, shrinks it (the
first 20 per family) and, with --write-regressions, appends the shrunk case to
tests/vectors/regressions/<family>.json. The last
line is always `conformance: N cases, D disagreements (seed S)` when the run got that far.
Exit 0 when both sides agree on every case, 1 on any disagreement, 2 on bad arguments or when the
oracle cannot be built or fails.
"""

from __future__ import annotations

import argparse
import importlib
import random
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol, TextIO, cast

from conformance import regressions
from conformance.cases import Case, FamilyName
from conformance.compare import compare
from conformance.oracle import Oracle, OracleError, build
from conformance.shrink import shrink
from conformance.verdict import our_result

FAMILIES: tuple[FamilyName, ...] = ("ocm", "fleet")
DEFAULT_CASES = 2000
# a disagreement prints this many of its differing fields
SHOWN_DIFFERENCES = 8
# shrinking costs up to a few hundred runs of both sides: a run full of disagreements shrinks (and
# stores) only the first ones of each family, which are enough to start fixing
MAX_SHRUNK = 20
DISAGREE, FAILED = 1, 2
NANOSECONDS = 1e9


class Generator(Protocol):
    def __call__(self, rng: random.Random, case_id: str) -> Case: ...


def generator(family: FamilyName) -> Generator:
    """The family's case generator: `conformance.generate_<family>.generate_case`."""
    module = importlib.import_module(f"conformance.generate_{family}")
    return cast(Generator, module.generate_case)


def case_id(family: FamilyName, seed: int, index: int) -> str:
    return f"{family}-seed-{seed}-case-{index}"


def case_rng(family: FamilyName, seed: int, index: int) -> random.Random:
    """One generator per case, so any case of a seed can be generated again without the ones before it."""
    return random.Random(f"{family}:{seed}:{index}")


@dataclass
class Tally:
    """What one family's run found: cases, disagreements and the time each side spent scheduling."""

    family: FamilyName
    cases: int = 0
    disagreements: int = 0
    ours_ns: int = 0
    upstream_ns: int = 0

    def line(self) -> str:
        return (
            f"conformance {self.family}: {self.cases} cases, {self.disagreements} disagreements, "
            f"ours {self.ours_ns / NANOSECONDS:.1f} s, upstream {self.upstream_ns / NANOSECONDS:.1f} s"
        )


def run_family(
    family: FamilyName, cases: int, seed: int, oracle: Oracle, regression_folder: Path | None, out: TextIO
) -> Tally:
    """Run `cases` generated cases of one family through both sides, reporting each disagreement;
    each shrunk disagreement is appended to the family's file in `regression_folder` when one is given."""
    generate = generator(family)
    tally = Tally(family)
    for index in range(cases):
        case = generate(case_rng(family, seed, index), case_id(family, seed, index))
        upstream, ours = oracle.run(case), our_result(case)
        tally.cases += 1
        tally.upstream_ns += int(upstream.get("elapsedNs") or 0)
        tally.ours_ns += int(ours.get("elapsedNs") or 0)
        found = compare(upstream, ours)
        if not found:
            continue
        tally.disagreements += 1
        print(f"conformance {family}: case {case['id']} disagrees:", file=out)
        for difference in found[:SHOWN_DIFFERENCES]:
            print(f"  {difference}", file=out)
        if len(found) > SHOWN_DIFFERENCES:
            print(f"  ... and {len(found) - SHOWN_DIFFERENCES} more", file=out)
        if tally.disagreements > MAX_SHRUNK:
            print(f"  not shrunk: only the first {MAX_SHRUNK} disagreements of a family are", file=out)
            continue
        kinds = {difference.kind for difference in found}

        def same_kind(candidate: Case, kinds: set[str] = kinds) -> bool:
            return any(d.kind in kinds for d in compare(oracle.run(candidate), our_result(candidate)))

        small = shrink(case, same_kind)
        print(
            f"  shrunk from {len(case['manifests'])} to {len(small['manifests'])} manifests",
            file=out,
        )
        if regression_folder is not None:
            source = f"make conformance SEED={seed}, case {index}, shrunk"
            path = regressions.append(regressions.vector(small, oracle.run(small), source), regression_folder)
            print(f"  written to {path} as {small['id']}", file=out)
    return tally


def parse_arguments(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="python -m conformance",
        description="Compare our scheduler with the upstream OCM and KubeFleet schedulers on random cases.",
    )
    parser.add_argument("--family", choices=[*FAMILIES, "all"], default="all")
    parser.add_argument("--cases", type=_count, default=DEFAULT_CASES, help="cases per family")
    parser.add_argument("--seed", type=_count, default=None, help="replay this seed (default: a fresh one)")
    parser.add_argument(
        "--write-regressions",
        action="store_true",
        help="append each shrunk disagreement to tests/vectors/regressions/<family>.json",
    )
    return parser.parse_args(argv)


def _count(raw: str) -> int:
    try:
        value = int(raw)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a whole number: {raw!r}") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"must not be negative: {value}")
    return value


def main(argv: Sequence[str] | None = None, out: TextIO = sys.stdout) -> int:
    arguments = parse_arguments(argv)
    seed = arguments.seed if arguments.seed is not None else random.SystemRandom().randrange(10**9)
    families = FAMILIES if arguments.family == "all" else (arguments.family,)
    folder = regressions.FOLDER if arguments.write_regressions else None
    print(f"conformance: seed {seed} (replay with make conformance SEED={seed})", file=out, flush=True)
    try:
        build()
        with Oracle() as oracle:
            tallies = []
            for family in families:
                tally = run_family(family, arguments.cases, seed, oracle, folder, out)
                print(tally.line(), file=out, flush=True)
                tallies.append(tally)
    except OracleError as exc:
        print(f"conformance: {exc}", file=sys.stderr)
        return FAILED
    cases = sum(tally.cases for tally in tallies)
    disagreements = sum(tally.disagreements for tally in tallies)
    print(f"conformance: {cases} cases, {disagreements} disagreements (seed {seed})", file=out)
    return DISAGREE if disagreements else 0


if __name__ == "__main__":
    sys.exit(main())
