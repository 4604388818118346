"""The copies in ``tests/data`` against the team's reference material, when it is there.

A fresh clone has no ``../shared``, and the tests never need it. On the team's
machines and in CI it sits beside the checkout: then every copy must equal its
original byte for byte, and every original must have a copy, so a new or updated
case set cannot go unnoticed.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import DATA, REPO

SHARED = REPO.parent / "shared"
COPIED = [("conformance", DATA, "*.json"), ("fixtures/plans", DATA / "plans", "*")]
"""(folder of ``../shared``, the folder of its copies, the copies' pattern there)."""
needs_shared = pytest.mark.skipif(
    not SHARED.is_dir(), reason="no ../shared beside the checkout to compare with"
)


def _pairs() -> list[tuple[Path, Path]]:
    return [
        (original, copies / original.name)
        for folder, copies, _ in COPIED
        for original in sorted((SHARED / folder).iterdir())
        if original.is_file()
    ]


@needs_shared
def test_copies_equal_the_reference_material() -> None:
    drifted = [
        f"{copy.relative_to(REPO)} (from {original})"
        for original, copy in _pairs()
        if not copy.is_file() or copy.read_bytes() != original.read_bytes()
    ]
    assert not drifted, "test data differs from ../shared; copy it over: " + ", ".join(drifted)


@needs_shared
def test_every_copy_has_an_original() -> None:
    known = {copy for _, copy in _pairs()}
    extra = [
        str(p.relative_to(REPO))
        for _, copies, pattern in COPIED
        for p in sorted(copies.glob(pattern))
        if p.is_file() and p not in known
    ]
    assert not extra, "copies without an original in ../shared: " + ", ".join(extra)
