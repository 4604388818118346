"""HTTP semantics of the stand-in: routing, the security filter, CORS, status codes and bodies.

Transport-free on purpose: :meth:`App.handle` maps a :class:`Request` to a
:class:`Response`, and ``server.py`` only moves bytes.  That keeps the order
of checks (CORS preflight → lockout/Basic auth → route → body schema → store)
in one readable place, because that order decides which of several errors a
client sees (documents-api §5.2, §9).
"""

from __future__ import annotations

import json
import logging
import re
import traceback
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any
from urllib.parse import parse_qs, unquote, urlsplit

from tests.backend import views
from tests.backend.auth import LoginThrottle, basic_credentials, password_matches
from tests.backend.bodies import (
    INT32_MAX,
    INT64_MAX,
    ContentPatchRequest,
    CreateRequest,
    RestoreRequest,
    TitlePatchRequest,
    UpdateRequest,
    parse_json,
)
from tests.backend.clock import AdjustableClock, Clock, iso
from tests.backend.config import BackendConfig
from tests.backend.problems import ApiError, ContentConflict, FrameworkError, bad_request
from tests.backend.store import Store

log = logging.getLogger(__name__)

API = "/api/v1"
UUID_RE = re.compile(
    r"^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$"
)
CORS_METHODS = "GET,POST,PUT,PATCH,DELETE,OPTIONS"
CORS_HEADERS = ("authorization", "content-type", "x-taiga-token")
WWW_AUTHENTICATE = 'Basic realm="Realm"'


@dataclass(frozen=True)
class Request:
    method: str
    target: str
    """The request target as sent (path and query)."""
    headers: dict[str, str]
    """Lower-cased names."""
    body: bytes = b""

    @property
    def path(self) -> str:
        return unquote(urlsplit(self.target).path)

    @property
    def query(self) -> dict[str, list[str]]:
        return parse_qs(urlsplit(self.target).query, keep_blank_values=True)


@dataclass
class Response:
    status: int
    headers: dict[str, str] = field(default_factory=dict)
    body: bytes = b""


def _dump(value: Any) -> bytes:
    try:
        return json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
    except UnicodeEncodeError:  # a lone surrogate sent by a client: escape it instead
        return json.dumps(value, separators=(",", ":")).encode("ascii")


def json_response(status: int, value: Any, headers: dict[str, str] | None = None) -> Response:
    return Response(status, {"Content-Type": "application/json", **(headers or {})}, _dump(value))


@dataclass(frozen=True)
class Call:
    """One routed request: the request, its ``{id}`` (lower-cased, validated) and auth state."""

    req: Request
    doc_id: str
    authenticated: bool


Handler = Callable[[Call], Response]


class App:
    """The documents API of documents-api §2 on top of a :class:`Store`."""

    def __init__(self, config: BackendConfig, clock: Clock, store: Store) -> None:
        self.config = config
        self.clock = clock
        self.store = store
        self.throttle = LoginThrottle(config.max_attempts, config.lockout)
        doc = r"/documents/(?P<id>[^/]+)"
        taiga = self._taiga_unconfigured
        # (pattern below /api/v1, {method: handler})
        self._routes: list[tuple[re.Pattern[str], dict[str, Handler]]] = [
            (re.compile(r"/info"), {"GET": self._info}),
            (re.compile(r"/documents"), {"GET": self._list, "POST": self._create}),
            (re.compile(doc), {"GET": self._get, "PUT": self._put, "DELETE": self._delete}),
            (re.compile(doc + "/content"), {"PATCH": self._patch_content}),
            (re.compile(doc + "/title"), {"PATCH": self._patch_title}),
            (re.compile(doc + "/restore"), {"POST": self._restore}),
            (re.compile(doc + "/history"), {"GET": self._history}),
            (re.compile(doc + "/changes"), {"GET": self._changes}),
            (re.compile(r"/taiga/auth"), {"POST": taiga}),
            (re.compile(r"/taiga/projects"), {"GET": taiga}),
            (re.compile(r"/taiga/(userstories|tasks)"), {"POST": taiga}),
            (re.compile(r"/taiga/(userstories|tasks)/[^/]+"), {"GET": taiga}),
            (re.compile(r"/taiga/(userstories|tasks)/[^/]+/status"), {"PATCH": taiga}),
            (re.compile(r"/taiga/tickets"), {"GET": taiga}),
            (re.compile(r"/taiga/(userstory|task)-statuses"), {"GET": taiga}),
        ]

    # -- entry point -------------------------------------------------------------------

    def handle(self, req: Request) -> Response:
        path = req.path
        try:
            if req.method == "OPTIONS" and "origin" in req.headers:
                response = self._preflight(req)
            else:
                response = self._dispatch(req, path)
        except ApiError as exc:
            response = Response(
                exc.status,
                {"Content-Type": "application/problem+json", **exc.headers},
                _dump(exc.body(path)),
            )
        except ContentConflict as exc:
            response = json_response(409, exc.body())
        except FrameworkError as exc:
            response = json_response(exc.status, exc.body(path, iso(self.clock.now())), exc.headers)
        except Exception:  # a bug in the stand-in: say so loudly, as a 500
            log.error("internal error on %s %s\n%s", req.method, req.target, traceback.format_exc())
            response = Response(
                500,
                {"Content-Type": "application/problem+json"},
                _dump(ApiError(500, "Internal Server Error", "Interner Fehler.").body(path)),
            )
        if "origin" in req.headers:
            response.headers.setdefault("Access-Control-Allow-Origin", "*")
        return response

    def _dispatch(self, req: Request, path: str) -> Response:
        prefix = self.config.prefix
        if self.config.clock_control and path == prefix + "/__test__/clock/advance":
            return self._advance_clock(req)
        authenticated = self._security_filter(req)
        if not path.startswith(prefix + API + "/"):
            raise ApiError(404, "Not Found", f"Kein Endpunkt für {path}.")
        rest = path[len(prefix + API) :]
        for pattern, methods in self._routes:
            match = pattern.fullmatch(rest)
            if match is None:
                continue
            method = "GET" if req.method == "HEAD" else req.method
            handler = methods.get(method)
            allowed = sorted(methods) + (["HEAD"] if "GET" in methods else []) + ["OPTIONS"]
            if req.method == "OPTIONS":  # a plain OPTIONS (no CORS): Spring answers with Allow
                return Response(200, {"Allow": ", ".join(allowed)})
            if handler is None:
                raise ApiError(
                    405,
                    "Method Not Allowed",
                    f"Methode {req.method} wird hier nicht unterstützt.",
                    {"Allow": ", ".join(allowed)},
                )
            doc_id = match.groupdict().get("id") or ""
            if doc_id:
                if not UUID_RE.match(doc_id):
                    raise bad_request(f"'{doc_id}' ist keine gültige UUID.")
                doc_id = doc_id.lower()
            return handler(Call(req, doc_id, authenticated))
        raise ApiError(404, "Not Found", f"Kein Endpunkt für {path}.")

    # -- filters -----------------------------------------------------------------------

    def _security_filter(self, req: Request) -> bool:
        """Lockout first, then Basic credentials; returns whether the caller authenticated.

        Any request with an ``Authorization`` header meets the lockout (§9); a
        wrong Basic header fails with 401 on every path and counts (§9, infer).
        """
        header = req.headers.get("authorization")
        if header is None:
            return False
        now = self.clock.now()
        retry_after = self.throttle.retry_after(now)
        if retry_after is not None:
            raise FrameworkError(429, {"Retry-After": str(retry_after)})
        credentials = basic_credentials(header)
        if credentials is None:
            return False
        if password_matches(self.config.master_password_hash, *credentials):
            self.throttle.success()
            return True
        self.throttle.failure(now)
        raise FrameworkError(401, {"WWW-Authenticate": WWW_AUTHENTICATE})

    def _preflight(self, req: Request) -> Response:
        """CORS preflight: origins ``*``, the configured methods and headers, 1 h max age (§9)."""
        wanted = req.headers.get("access-control-request-headers", "")
        names = [h.strip().lower() for h in wanted.split(",") if h.strip()]
        method = req.headers.get("access-control-request-method", "")
        if method not in CORS_METHODS.split(",") or any(n not in CORS_HEADERS for n in names):
            return Response(403, {"Content-Type": "text/plain"}, b"Invalid CORS request")
        headers = {
            "Access-Control-Allow-Origin": "*",
            "Access-Control-Allow-Methods": CORS_METHODS,
            "Access-Control-Max-Age": "3600",
        }
        if names:
            headers["Access-Control-Allow-Headers"] = ", ".join(names)
        return Response(200, headers)

    # -- body helpers ------------------------------------------------------------------

    def _body(self, req: Request) -> Any:
        """The JSON body, or ``None`` if empty; a non-JSON media type is a 415."""
        if not req.body.strip():
            return None
        media = req.headers.get("content-type", "").split(";")[0].strip().lower()
        if media != "application/json" and not (
            media.startswith("application/") and media.endswith("+json")
        ):
            raise ApiError(
                415,
                "Unsupported Media Type",
                f"Content-Type '{media or 'application/octet-stream'}' wird nicht unterstützt.",
            )
        return parse_json(req.body)

    # -- handlers ----------------------------------------------------------------------

    def _info(self, call: Call) -> Response:
        return json_response(
            200,
            {
                "name": self.config.service_name,
                "version": self.config.service_version,
                "builtAt": None,
                "taiga": False,
                "taigaWeb": None,
            },
        )

    def _list(self, call: Call) -> Response:
        """The only protected endpoint: Basic ``werkbaum`` + master password (§2.2)."""
        if not call.authenticated:
            raise FrameworkError(401, {"WWW-Authenticate": WWW_AUTHENTICATE})
        return json_response(200, [views.document(d) for d in self.store.all()])

    def _create(self, call: Call) -> Response:
        body = CreateRequest.parse(self._body(call.req))
        return json_response(201, views.document(self.store.create(body.title, body.content)))

    def _get(self, call: Call) -> Response:
        return json_response(200, views.document(self.store.get(call.doc_id)))

    def _put(self, call: Call) -> Response:
        body = UpdateRequest.parse(self._body(call.req))
        doc = self.store.put(call.doc_id, body.title, body.content)
        return json_response(200, views.document(doc))

    def _delete(self, call: Call) -> Response:
        self.store.delete(call.doc_id)
        return Response(204)

    def _patch_content(self, call: Call) -> Response:
        body = ContentPatchRequest.parse(self._body(call.req))
        return json_response(200, self.store.patch_content(call.doc_id, body))

    def _patch_title(self, call: Call) -> Response:
        body = TitlePatchRequest.parse(self._body(call.req))
        doc = self.store.rename(call.doc_id, body.title, body.expected_version)
        return json_response(200, views.document(doc))

    def _restore(self, call: Call) -> Response:
        body = RestoreRequest.parse(self._body(call.req))
        return json_response(200, views.document(self.store.restore(call.doc_id, body.version)))

    def _history(self, call: Call) -> Response:
        entries = self.store.history(call.doc_id)
        return json_response(200, [views.history_entry(call.doc_id, e) for e in entries])

    def _changes(self, call: Call) -> Response:
        """Long poll on the history (§2.11, §6); ``wait`` clamped to ``max_wait``."""
        query = call.req.query
        since = _query_int(query, "since", required=True, maximum=INT64_MAX)
        wait = _query_int(query, "wait", required=False, maximum=INT32_MAX)
        wait_seconds = min(25 if wait is None else wait, self.config.max_wait.total_seconds())
        snapshot = self.store.wait_for_changes(call.doc_id, since, wait_seconds)
        no_store = {"Cache-Control": "no-store"}
        if snapshot is None:
            return Response(204, no_store)
        return json_response(200, views.change_feed(since, snapshot, self.store.ops), no_store)

    def _taiga_unconfigured(self, call: Call) -> Response:
        """§2.13: without a configured Taiga every proxy endpoint answers 503."""
        raise ApiError(503, "Taiga nicht konfiguriert", "Dieser Server hat keine Taiga-Anbindung.")

    def _advance_clock(self, req: Request) -> Response:
        """Test-only (``--clock-control``): ``{"seconds": s}`` moves the adjustable clock."""
        if req.method != "POST" or not isinstance(self.clock, AdjustableClock):
            raise ApiError(405, "Method Not Allowed", "POST mit verstellbarer Uhr erwartet.")
        body = parse_json(req.body)
        seconds = body.get("seconds") if isinstance(body, dict) else None
        if not isinstance(seconds, int | float) or isinstance(seconds, bool) or seconds < 0:
            raise bad_request('Erwartet {"seconds": <Zahl ≥ 0>}.')
        now = self.clock.advance(timedelta(seconds=seconds))
        return json_response(200, {"now": iso(now)})


def _query_int(query: dict[str, list[str]], name: str, *, required: bool, maximum: int) -> Any:
    values = query.get(name)
    if not values:
        if required:
            raise bad_request(f"Parameter '{name}' fehlt.")
        return None
    raw = values[0].strip()
    if not re.fullmatch(r"[+-]?\d+", raw) or not 0 <= int(raw) <= maximum:
        raise bad_request(f"Parameter '{name}' muss eine ganze Zahl ≥ 0 sein.")
    return int(raw)
