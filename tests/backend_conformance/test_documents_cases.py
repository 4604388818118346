"""Every scenario of ``tests/data/documents-cases.json`` against the stand-in backend.

Each case gets a fresh server (upstream's test profile plus the case's
``config`` block) on a loopback port and is driven over real HTTP with httpx,
following documents-api.md §16 to the letter: placeholders, captures,
``ops_repeat``, background long polls (``async``/``await``), subset matching
where ``null`` means null-or-absent, and the response checks.

A ``wait_ms`` step advances the server's adjustable clock instead of sleeping
(§16: "a stand-in should run it with a fake clock"); only the long-poll steps
spend real time.  The whole file runs once per line-ops implementation, so the
backend is proven with the Python transcription and with ``live.js`` on every
executor.
"""

from __future__ import annotations

import base64
import functools
import json
import re
import ssl
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any

import httpx
import pytest

from tests.backend import Backend, BackendConfig, running_backend
from tests.conftest import DATA

CASES_FILE = DATA / "documents-cases.json"
ASYNC_HEAD_START_S = 0.3
"""§16 / the case note: give a background long poll ~300 ms to block before going on."""
REQUEST_TIMEOUT_S = 15.0

RESPONSE_KEYS = {
    "status",
    "body",
    "body_list_length",
    "body_list_subset",
    "body_has_keys",
    "body_is_list",
    "headers",
    "headers_present",
    "content_type",
    "max_duration_ms",
    "note",
}
VAR = re.compile(r"\{([A-Za-z_]\w*)\}")
BASE64 = re.compile(r"\{base64\('([^']*)'\)\}")


CASES: list[dict[str, Any]] = json.loads(CASES_FILE.read_text(encoding="utf-8"))


# -- placeholders and matching (§16) ---------------------------------------------------


def _substitute(value: Any, variables: dict[str, str]) -> Any:
    """Fill ``{var}`` and ``{base64('user:pw')}`` in every string of a request."""
    if isinstance(value, str):
        value = BASE64.sub(lambda m: base64.b64encode(m.group(1).encode()).decode(), value)

        def var(m: re.Match[str]) -> str:
            if m.group(1) not in variables:
                pytest.fail(f"placeholder {{{m.group(1)}}} used before it was captured")
            return variables[m.group(1)]

        return VAR.sub(var, value)
    if isinstance(value, list):
        return [_substitute(v, variables) for v in value]
    if isinstance(value, dict):
        return {k: _substitute(v, variables) for k, v in value.items()}
    return value


def _mismatch(expected: Any, actual: Any, where: str = "body") -> str | None:
    """``None`` on a match: objects as subsets (``null`` = null or absent), lists exactly."""
    if isinstance(expected, dict):
        if not isinstance(actual, dict):
            return f"{where}: expected an object, got {actual!r}"
        for key, want in expected.items():
            if want is None:
                if actual.get(key) is not None:
                    return f"{where}.{key}: expected null or absent, got {actual[key]!r}"
                continue
            if key not in actual:
                return f"{where}.{key}: missing (expected {want!r})"
            problem = _mismatch(want, actual[key], f"{where}.{key}")
            if problem:
                return problem
        return None
    if isinstance(expected, list):
        if not isinstance(actual, list) or len(actual) != len(expected):
            return f"{where}: expected {expected!r}, got {actual!r}"
        for k, (want, got) in enumerate(zip(expected, actual, strict=True)):
            problem = _mismatch(want, got, f"{where}[{k}]")
            if problem:
                return problem
        return None
    if type(expected) is not type(actual) or expected != actual:
        return f"{where}: expected {expected!r}, got {actual!r}"
    return None


def _dig(body: Any, dotted: str) -> Any:
    """``body.id`` → the response's ``id`` (the capture syntax of §16)."""
    parts = dotted.split(".")
    if parts[0] != "body":
        pytest.fail(f"capture path must start with 'body.': {dotted}")
    for part in parts[1:]:
        body = body[int(part)] if isinstance(body, list) else body[part]
    return body


# -- one HTTP exchange -----------------------------------------------------------------


@dataclass
class Exchange:
    response: httpx.Response
    duration_ms: float

    @property
    def body(self) -> Any:
        if not self.response.content:
            return None
        try:
            return self.response.json()
        except ValueError:
            return self.response.text


@dataclass
class Background:
    thread: threading.Thread
    result: list[Exchange | BaseException] = field(default_factory=list)


def _send(client: httpx.Client, request: dict[str, Any], variables: dict[str, str]) -> Exchange:
    request = _substitute(request, variables)
    body = request.get("body")
    repeat = request.get("ops_repeat")
    if repeat is not None:
        body = {**(body or {}), "ops": [repeat["op"]] * int(repeat["times"])}
    params = {k: str(v) for k, v in (request.get("query") or {}).items()}
    content = None if body is None else json.dumps(body).encode("utf-8")
    started = time.monotonic()
    response = client.request(
        request["method"],
        request["path"],
        params=params,
        headers=request.get("headers") or {},
        content=content,
    )
    return Exchange(response, (time.monotonic() - started) * 1000)


def _check(exchange: Exchange, expected: dict[str, Any], label: str) -> None:
    unknown = set(expected) - RESPONSE_KEYS
    assert not unknown, f"{label}: unknown response checks {sorted(unknown)} (§16 changed?)"
    r = exchange.response
    context = f"{label}: {r.request.method} {r.request.url} → {r.status_code} {r.text[:400]!r}"
    assert r.status_code == expected["status"], f"status {expected['status']} expected; {context}"
    body = exchange.body
    if "body" in expected:
        problem = _mismatch(expected["body"], body, "body")
        assert problem is None, f"{problem}; {context}"
    if expected.get("body_is_list"):
        assert isinstance(body, list), f"body is not a list; {context}"
    if "body_list_length" in expected:
        assert isinstance(body, list) and len(body) == expected["body_list_length"], context
    if "body_list_subset" in expected:
        assert isinstance(body, list), f"body is not a list; {context}"
        position = 0
        for want in expected["body_list_subset"]:
            while position < len(body) and _mismatch(want, body[position], "item") is not None:
                position += 1
            assert position < len(body), f"no element (in order) matches {want!r}; {context}"
            position += 1
    for key in expected.get("body_has_keys", []):
        assert isinstance(body, dict) and key in body, f"body lacks key {key!r}; {context}"
    for name, value in (expected.get("headers") or {}).items():
        assert r.headers.get(name) == value, f"header {name}: {r.headers.get(name)!r}; {context}"
    for name in expected.get("headers_present", []):
        assert name in r.headers, f"header {name} missing; {context}"
    if "content_type" in expected:
        media = r.headers.get("content-type", "").split(";")[0].strip()
        assert media == expected["content_type"], f"content type {media!r}; {context}"
    if "max_duration_ms" in expected:
        assert exchange.duration_ms <= expected["max_duration_ms"], (
            f"took {exchange.duration_ms:.0f} ms > {expected['max_duration_ms']} ms; {context}"
        )


# -- the case runner -------------------------------------------------------------------


@functools.cache
def _tls() -> ssl.SSLContext:
    """One TLS context for all clients: building one per client costs ~70 ms (plain HTTP anyway)."""
    return ssl.create_default_context()


def _client(backend: Backend) -> httpx.Client:
    return httpx.Client(base_url=backend.base_url, timeout=REQUEST_TIMEOUT_S, verify=_tls())


def run_case(case: dict[str, Any], backend: Backend) -> None:
    variables: dict[str, str] = {}
    pending: dict[str, Background] = {}
    with _client(backend) as client:
        for k, step in enumerate(case["steps"]):
            label = f"{case['name']} step {k + 1}"
            if "wait_ms" in step:
                backend.clock.advance(timedelta(milliseconds=step["wait_ms"]))  # type: ignore[attr-defined]
            elif "await" in step:
                background = pending.pop(step["await"])
                background.thread.join(REQUEST_TIMEOUT_S + 1)
                assert background.result, f"{label}: background request never finished"
                outcome = background.result[0]
                if isinstance(outcome, BaseException):
                    raise outcome
                _check(outcome, step["response"], label)
            elif "async" in step:
                background = Background(threading.Thread(target=lambda: None))

                def send(
                    request: dict[str, Any] = step["request"], bg: Background = background
                ) -> None:
                    try:
                        with _client(backend) as own:
                            bg.result.append(_send(own, request, dict(variables)))
                    except BaseException as exc:
                        bg.result.append(exc)

                background.thread = threading.Thread(target=send, daemon=True)
                background.thread.start()
                pending[step["async"]] = background
                time.sleep(ASYNC_HEAD_START_S)
            else:
                exchange = _send(client, step["request"], variables)
                _check(exchange, step["response"], label)
                for var, path in (step.get("capture") or {}).items():
                    variables[var] = str(_dig(exchange.body, path))
    assert not pending, f"{case['name']}: async steps never awaited: {sorted(pending)}"


@pytest.fixture
def case_backend(request: pytest.FixtureRequest, ops_impl: str) -> Iterator[Backend]:
    case: dict[str, Any] = request.param
    config = BackendConfig.test_profile(ops_impl=ops_impl).with_case_config(
        case.get("config") or {}
    )
    with running_backend(config) as backend:
        assert backend.ops_name == ("python" if ops_impl == "python" else f"engine:{ops_impl}")
        yield backend


@pytest.mark.parametrize(
    "case_backend", [pytest.param(c, id=c["name"]) for c in CASES], indirect=True
)
def test_documents_case(case_backend: Backend, request: pytest.FixtureRequest) -> None:
    run_case(request.node.callspec.params["case_backend"], case_backend)


def test_cases_file_is_complete() -> None:
    """Guards against running a truncated or renamed file: 48 uniquely named cases."""
    names = [c["name"] for c in CASES]
    assert len(names) == len(set(names)), "duplicate case names"
    assert len(CASES) == 48, f"expected the 48 cases of documents-api §16, found {len(CASES)}"


def test_matcher_follows_section_16() -> None:
    """The runner's own rules: a lenient matcher would let every case pass."""
    assert _mismatch({"a": None}, {}) is None
    assert _mismatch({"a": None}, {"a": None}) is None
    assert _mismatch({"a": None}, {"a": 0}) is not None
    assert _mismatch({"a": 1}, {"a": 1, "b": 2}) is None
    assert _mismatch({"a": 1}, {"b": 1}) is not None
    assert _mismatch([1], [1, 2]) is not None
    assert _mismatch(True, 1) is not None
    assert _mismatch(1, 1.0) is not None
    ops = {"ops": [{"op": "insert", "index": 1, "lines": ["x"]}]}
    assert (
        _mismatch(ops, {"ops": [{"op": "insert", "index": 1, "count": None, "lines": ["x"]}]})
        is None
    )
    assert _mismatch(ops, {"ops": [{"op": "insert", "index": 1, "lines": ["y"]}]}) is not None
    assert _substitute({"p": "/d/{doc}", "h": "Basic {base64('u:p')}"}, {"doc": "X"}) == {
        "p": "/d/X",
        "h": "Basic dTpw",
    }
