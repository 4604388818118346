"""``formatWarning`` (warnings.js) for HTML: the plan's values escaped, the template not.

A label or status code from the plan may hold ``<``, ``&`` or quotes; the message
template is ours and keeps its own characters (issue 16 item 3, as in the editor).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import engine_on
from werkbaum_core import EXECUTORS

PROBE = """\
import { formatWarning, warningText } from './warnings.js';
import { t } from './i18n.js';
const bold = (key, vars) => '<b>' + t(key, vars) + '</b>';
globalThis.werkbaum.formatProbe = ({ warning }) => ({
  html: formatWarning(warning, bold),
  text: warningText(warning, bold),
});
"""


@pytest.mark.parametrize("kind", EXECUTORS)
def test_format_warning_escapes_the_values_not_the_template(kind: str, tmp_path: Path) -> None:
    probe = tmp_path / "format_probe.js"
    probe.write_text(PROBE, encoding="utf-8")
    for engine in engine_on(kind, probe):
        mixed = {"type": "mixedGate", "line": 4, "label": 'Tom & "Jerry" <b>'}
        answer = engine.call("formatProbe", {"warning": mixed})
        assert answer["html"].startswith("<b>Line 4: ")
        assert answer["html"].endswith("</b>")
        assert "Tom &amp; &quot;Jerry&quot; &lt;b&gt;" in answer["html"]
        assert 'Tom & "Jerry" <b>' in answer["text"]
        unknown = {"type": "<script>", "line": 1}
        assert engine.call("formatProbe", {"warning": unknown})["html"] == "&lt;script&gt; (1)"
