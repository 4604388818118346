"""The default Hypothesis profile leaves nothing in the working directory."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from tests.conftest import REPO

PROPERTY_RUN = """
import hashlib
import tests.conftest
from hypothesis import given, strategies as st

seen = []

@given(st.text())
def prop(text):
    seen.append(text)

prop()
prop()
print(len(seen), hashlib.sha256(repr(seen).encode()).hexdigest())
"""


def _run(cwd: Path) -> str:
    env = {k: v for k, v in os.environ.items() if not k.startswith("HYPOTHESIS_")}
    env["PYTHONPATH"] = str(REPO)
    done = subprocess.run(
        [sys.executable, "-c", PROPERTY_RUN], cwd=cwd, env=env, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_property_runs_repeat_and_write_no_hypothesis_folder(tmp_path: Path) -> None:
    first, second = _run(tmp_path), _run(tmp_path)
    assert first == second  # derandomized: the same examples every run
    assert not (tmp_path / ".hypothesis").exists()
