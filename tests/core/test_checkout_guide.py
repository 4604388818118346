"""With a Werkbaum checkout configured, agents get the editor's own guide (spec §2.1, §4)."""

from __future__ import annotations

from pathlib import Path

from werkbaum_core.guide import bundled_guide, guide_for


def test_checkout_llms_md_replaces_the_bundled_guide(tmp_path: Path) -> None:
    src = tmp_path / "frontend" / "src"
    src.mkdir(parents=True)
    public = tmp_path / "frontend" / "public"
    public.mkdir()
    (public / "llms.md").write_text("# Upstream guide\n", encoding="utf-8")
    assert guide_for(src)() == "# Upstream guide\n"


def test_without_a_checkout_guide_the_bundled_one_is_served(tmp_path: Path) -> None:
    assert guide_for(None) is bundled_guide
    assert guide_for(tmp_path)() == bundled_guide()
