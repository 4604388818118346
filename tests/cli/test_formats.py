"""``werkbaum check --format json|github|sarif``: machine formats of the same diagnostics.

The SARIF log is validated against the OASIS SARIF 2.1.0 schema (vendored in
tests/data/schemas, see tests/data/README.md) and against what GitHub code
scanning needs beyond it; the GitHub annotations and the SARIF log are snapshots.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from tests.cli.scripts import matches_snapshot, run
from tests.conftest import DATA

SARIF_SCHEMA = DATA / "schemas" / "sarif-schema-2.1.0.json"
PLANS = {
    "broken.werkbaum": "[ ] Plan\n  - [ ] A (S)\n  | [ ] B (S)\n  - [z] C :#nope\n",
    "team.werkbaum": "[ ] Plan\n  - [ ] A (L) @anna\n  - [ ] B (XS) @ben\n",
    "odd, name: 100%.werkbaum": "[ ] 50% done, really: yes\n  - [ ] A\n  = [ ] B\n",
    "clean.werkbaum": "[ ] Plan\n  - [ ] A (S)\n",
}
"""Structural and content warnings, a whole-plan warning (no line), a file name and a
message with the characters GitHub's commands must escape, and a clean plan."""
ARGS = [*PLANS, "binary.werkbaum"]


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("formats")
    for name, text in PLANS.items():
        (path / name).write_text(text, encoding="utf-8")
    (path / "binary.werkbaum").write_bytes(b"\x00\xff")
    return path


def check(folder: Path, fmt: str) -> Any:
    result = run("check", "--format", fmt, *ARGS, cwd=folder, env={"FORCE_COLOR": "1"})
    assert result.returncode == 2, result.stderr  # the binary file
    assert result.stderr == "3 errors, 2 warnings in 3 files; 1 file not read (4 checked)\n"
    return result.stdout


def test_github_annotations(folder: Path) -> None:
    out = check(folder, "github")
    matches_snapshot("check-github.txt", out)
    lines = out.splitlines()
    assert all(
        re.match(r"^::(error|warning) file=[^,:]+(,line=\d+,col=\d+)?,title=", x) for x in lines
    )
    odd = [x for x in lines if x.startswith("::error file=odd%2C name%3A 100%25.werkbaum,")]
    assert odd and 'the children of "50%25 done, really: yes" mix' in odd[0]
    overload = next(x for x in lines if "assigneeOverload" in x)
    assert overload.startswith("::warning file=team.werkbaum,title=werkbaum assigneeOverload::")


def test_sarif_is_valid_and_fit_for_github_code_scanning(folder: Path) -> None:
    out = check(folder, "sarif")
    log = json.loads(out)
    schema = json.loads(SARIF_SCHEMA.read_text(encoding="utf-8"))
    validator_class = jsonschema.validators.validator_for(schema)
    validator_class.check_schema(schema)
    errors = list(
        validator_class(schema, format_checker=jsonschema.FormatChecker()).iter_errors(log)
    )
    assert not errors, [e.message for e in errors]
    assert log["$schema"] == schema["id"]
    run_ = log["runs"][0]
    rules = run_["tool"]["driver"]["rules"]
    for result in run_["results"]:
        assert rules[result["ruleIndex"]]["id"] == result["ruleId"]
        location = result["locations"][0]["physicalLocation"]
        assert not location["artifactLocation"]["uri"].startswith(("/", "file:"))
        assert location["region"]["startLine"] >= 1
        assert result["message"]["text"]
    assert {r["ruleId"] for r in run_["results"]} == {
        "mixedGate",
        "unknownStatus",
        "unknownDep",
        "assigneeOverload",
        "unreadable",
    }
    run_["tool"]["driver"]["version"] = "<version>"
    matches_snapshot("check-sarif.json", json.dumps(log, ensure_ascii=False, indent=2) + "\n")


def test_sarif_without_findings_is_still_a_valid_log(folder: Path) -> None:
    result = run("check", "--format", "sarif", "clean.werkbaum", cwd=folder)
    assert result.returncode == 0
    log = json.loads(result.stdout)
    assert log["runs"][0]["results"] == [] and log["runs"][0]["tool"]["driver"]["rules"] == []
    schema = json.loads(SARIF_SCHEMA.read_text(encoding="utf-8"))
    jsonschema.validators.validator_for(schema)(schema).validate(log)


def test_json_has_every_diagnostic_and_the_counts(folder: Path) -> None:
    document = json.loads(check(folder, "json"))
    assert (document["errors"], document["warnings"]) == (4, 2)
    first = document["diagnostics"][0]
    assert first == {
        "file": "broken.werkbaum",
        "line": 3,
        "column": 3,
        "severity": "error",
        "type": "mixedGate",
        "message": first["message"],
    }
    assert {"file": "binary.werkbaum", "severity": "error", "type": "unreadable"}.items() <= (
        document["diagnostics"][-1].items()
    )


def _places(out: str, fmt: str) -> list[str]:
    if fmt == "github":
        return [re.sub(r"^::\w+ file=([^,]*),.*$", r"\1", x) for x in out.splitlines()]
    return [
        r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
        for r in json.loads(out)["runs"][0]["results"]
    ]


@pytest.mark.parametrize("fmt", ["github", "sarif"])
def test_files_are_named_as_github_places_them(tmp_path: Path, fmt: str) -> None:
    """Relative to $GITHUB_WORKSPACE (the checkout), '/'-separated, no './', also when the
    step runs in a folder below it or names the file by its absolute path; a file outside
    the workspace keeps its absolute path."""
    workspace = tmp_path / "repo"
    (workspace / "plans" / "team").mkdir(parents=True)
    broken = PLANS["broken.werkbaum"]
    (workspace / "plans" / "team" / "a.werkbaum").write_text(broken, encoding="utf-8")
    (tmp_path / "outside.werkbaum").write_text("[z] Plan\n", encoding="utf-8")
    args = (".", str(workspace / "plans" / "team" / "a.werkbaum"), "../../outside.werkbaum")
    result = run(
        "check",
        "--format",
        fmt,
        *args,
        cwd=workspace / "plans",
        env={"GITHUB_WORKSPACE": str(workspace)},
    )
    assert result.returncode == 1, result.stderr
    outside = tmp_path.as_posix() + "/outside.werkbaum"
    expected = ["plans/team/a.werkbaum"] * 6 + [  # 3 findings, the file named twice
        outside if fmt == "github" else f"file://{outside}"
    ]
    assert _places(result.stdout, fmt) == expected


def test_without_a_workspace_files_are_relative_to_the_working_directory(tmp_path: Path) -> None:
    """The README's CI step, ``werkbaum check --format github .``, outside Actions."""
    (tmp_path / "plans").mkdir()
    (tmp_path / "plans" / "a.werkbaum").write_text(PLANS["broken.werkbaum"], encoding="utf-8")
    result = run("check", "--format", "github", ".", cwd=tmp_path)
    assert set(_places(result.stdout, "github")) == {"plans/a.werkbaum"}
    absolute = run("check", "--format", "github", tmp_path / "plans" / "a.werkbaum", cwd=tmp_path)
    assert set(_places(absolute.stdout, "github")) == {"plans/a.werkbaum"}


@pytest.mark.parametrize("fmt", ["github", "sarif"])
def test_a_linked_plan_in_a_workspace_named_through_a_link_keeps_its_name(
    tmp_path: Path, fmt: str
) -> None:
    """Round 24 F6: with ``$GITHUB_WORKSPACE`` a symlink to the checkout (the working
    directory then is the real path), a plan that is itself a link was named by its
    resolved, absolute path, which GitHub does not place."""
    workspace = tmp_path / "ws"
    (workspace / "plans").mkdir(parents=True)
    (tmp_path / "ws-link").symlink_to(workspace)
    (tmp_path / "shared").mkdir()
    (tmp_path / "shared" / "o.werkbaum").write_text(PLANS["broken.werkbaum"], encoding="utf-8")
    (workspace / "plans" / "linked.werkbaum").symlink_to("../../shared/o.werkbaum")
    (workspace / "plans" / "a.werkbaum").write_text(PLANS["broken.werkbaum"], encoding="utf-8")
    result = run(
        "check",
        "--format",
        fmt,
        "plans/linked.werkbaum",
        "plans/a.werkbaum",
        cwd=workspace,
        env={"GITHUB_WORKSPACE": str(tmp_path / "ws-link")},
    )
    assert result.returncode == 1, result.stderr
    assert set(_places(result.stdout, fmt)) == {"plans/linked.werkbaum", "plans/a.werkbaum"}
