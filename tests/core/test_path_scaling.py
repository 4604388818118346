"""The cheapest path on plans whose closures share big modules (round 22, F3).

The search's classes come from the walk graph (no per-closure node lists, no
signature strings), and a member switch puts the new closure in before taking
the old one out. These plans made the old search grow with members times
module size; here they must give exactly the old results: the analysis pinned by
sha256 (recorded with the old model.js), and every search method equal to plain
enumeration on small ones, on every executor. Speed is for the benchmarks.
"""

from __future__ import annotations

import hashlib
import itertools
import random
from collections.abc import Iterator

import pytest

from tests.conftest import engine_on
from tests.core.test_cheap_plan import PROBE_JS, assert_all_equal
from werkbaum_core import EXECUTORS, Engine


@pytest.fixture(scope="module", params=EXECUTORS)
def probe_engine(request: pytest.FixtureRequest) -> Iterator[Engine]:
    yield from engine_on(request.param, PROBE_JS)


def pair_deps(pa: int, k: int) -> list[str]:
    """For each of ``pa`` members, its share of ``k`` targets: target t goes to
    the t-th pair of members, so every target has its own pair."""
    deps: list[list[int]] = [[] for _ in range(pa)]
    for t, (x, y) in enumerate(itertools.islice(itertools.combinations(range(pa), 2), k)):
        deps[x].append(t)
        deps[y].append(t)
    return [" :" + ",".join(f"#t{t}" for t in ts) if ts else "" for ts in deps]


def classes_plan(pa: int, pb: int, k: int) -> str:
    """Two coupled groups; every B member depends on a hub that depends on ``k``
    targets, each target also on a distinct pair of A members (``k`` classes in
    every B closure)."""
    out = ["- [ ] Root (XL)", "  - [ ] A"]
    out += [f"    | [ ] a{i} (S){deps}" for i, deps in enumerate(pair_deps(pa, k))]
    out += ["  - [ ] B", *(f"    | [ ] b{j} (S) :#h" for j in range(pb))]
    out += ["  + [ ] Pool", "    - [ ] Hub #h :" + ",".join(f"#t{t}" for t in range(k))]
    out += [f"    - [ ] t{t} #t{t} (XS)" for t in range(k)]
    return "\n".join(out) + "\n"


def shared_module_plan(pb: int, k: int) -> str:
    """``pb`` members of one group (and one of another) depend on a hub with ``k``
    targets: one module in every closure."""
    out = ["- Root", " - A", "  | a0 :#h", "  | a1", " - B", *(f"  | b{j} :#h" for j in range(pb))]
    out += [" + Pool", "  - Hub #h :" + ",".join(f"#m{t}" for t in range(k))]
    out += [f"  - #m{t}" for t in range(k)]
    return "\n".join(out) + "\n"


def direct_plan(pa: int, pb: int, k: int) -> str:
    """Every B member depends on all ``k`` targets itself; each target also on a
    distinct pair of A members."""
    every = ",".join(f"#t{t}" for t in range(k))
    out = ["- [ ] Root (XL)", "  - [ ] A"]
    out += [f"    | [ ] a{i} (S){deps}" for i, deps in enumerate(pair_deps(pa, k))]
    out += ["  - [ ] B", *(f"    | [ ] b{j} (S) :{every}" for j in range(pb))]
    out += ["  + [ ] Pool", *(f"    - [ ] t{t} #t{t} (XS)" for t in range(k))]
    return "\n".join(out) + "\n"


def tangled_plan(seed: int) -> str:
    """A small plan where groups share modules in every way the classes handle:
    members that all depend on one module, modules that depend back on members
    and owners (cycles, groups opening groups), members depending on members of
    other groups, and base nodes depending on members (empty closures)."""
    rng = random.Random(seed)
    groups = rng.randint(2, 4)
    modules = rng.randint(1, 4)
    size = lambda: rng.choice(["XS", "S", "M", "L", ""])  # noqa: E731
    member_ids = [f"g{g}m{j}" for g in range(groups) for j in range(rng.randint(2, 3))]
    targets = [f"mod{m}" for m in range(modules)] + member_ids + [f"g{g}" for g in range(groups)]

    def deps(chance: float, pool: list[str]) -> str:
        picked = sorted({rng.choice(pool) for _ in range(3) if rng.random() < chance})
        return " :" + ",".join(f"#{p}" for p in picked) if picked else ""

    out = ["- [ ] Root #root"]
    for g in range(groups):
        out.append(f"  - [ ] Group #g{g}")
        gate = rng.choice("|=")
        shared = rng.choice(targets[:modules])
        for member in (m for m in member_ids if m.startswith(f"g{g}m")):
            own = deps(0.5, targets)
            every = f"#{shared}" if rng.random() < 0.7 else ""
            joined = ",".join(x for x in (own.removeprefix(" :"), every) if x)
            out.append(
                f"    {gate} [ ] Alt #{member} ({size() or 'M'})"
                + (f" :{joined}" if joined else "")
            )
            if rng.random() < 0.4:
                out.append(f"      - [ ] Part ({size() or 'S'}){deps(0.3, targets)}")
    if rng.random() < 0.5:
        out.append(f"  - [ ] Base work{deps(0.6, member_ids)}")
    out.append("  + [ ] Modules")
    for m in range(modules):
        out.append(f"    - [ ] Module #mod{m} ({size() or 'S'}){deps(0.4, targets)}")
        for p in range(rng.randint(0, 2)):
            out.append(f"      - [ ] Piece {p} ({size() or 'XS'}){deps(0.2, targets)}")
    return "\n".join(out) + "\n"


def test_tangled_plans_equal_plain(probe_engine: Engine) -> None:
    searched = [
        assert_all_equal(probe_engine, tangled_plan(seed), f"seed {seed}") for seed in range(120)
    ]
    assert sum(s["groups"] >= 2 and s["plain"] for s in searched) >= 60  # the oracle ran


@pytest.mark.parametrize(
    "text",
    [classes_plan(6, 6, 15), shared_module_plan(12, 40), direct_plan(6, 5, 15)],
    ids=["classes", "shared module", "direct"],
)
def test_small_scaling_shapes_equal_plain(probe_engine: Engine, text: str) -> None:
    assert assert_all_equal(probe_engine, text, text.split("\n", 1)[0])["plain"]


OLD_ANALYSIS = [
    (classes_plan(40, 40, 600), "72be1afaa2a287dca6061592314c936706bf9b6ecc091871edcee6928a0c3777"),
    (
        classes_plan(100, 100, 2000),
        "a4c35d57fb8187a46dbcadd50ad71bac7283936eaf19db6dece582a9a58ad9fa",
    ),
    (
        shared_module_plan(200, 2000),
        "8af411975f2b53121385ac1f09e71fcbe7404f88112c0d0ee96ad506fa99c1dd",
    ),
    (direct_plan(30, 20, 300), "ec05ad1718c0adde4dc7a997c1762cd595bd070d31c8f54e983f0d41302d4491"),
]
"""sha256 of ``Engine.analysis_text`` from the old model.js (the search that walked
every class of a closure), recorded on v8 before the change."""


@pytest.mark.parametrize(
    ("text", "old_sha256"), OLD_ANALYSIS, ids=["classes 40", "classes 100", "shared", "direct"]
)
def test_analysis_equals_the_old_search(engine: Engine, text: str, old_sha256: str) -> None:
    answer = engine.analysis_text(text)
    assert '"cheapApprox"' not in answer  # the exact search ran
    assert hashlib.sha256(answer.encode("utf-8")).hexdigest() == old_sha256
