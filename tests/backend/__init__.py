"""A local Werkbaum-compatible documents backend for tests and demos (documents-api.md).

In a test::

    from tests.backend import BackendConfig, running_backend

    with running_backend(BackendConfig.test_profile()) as backend:
        httpx.get(backend.base_url + "/api/v1/info")
        backend.clock.advance(timedelta(seconds=31))  # jump over the milestone pause

From a shell: ``python -m tests.backend --port 8080`` (``--help`` lists the knobs).
The first line on stdout is the base URL.

Modules, one job each: ``config`` (settings), ``clock`` (injectable time),
``ops`` (line ops: the engine's ``live.js`` or the Python §3 transcription),
``bodies`` (request schemas → 400), ``store`` (documents, history, feed),
``patchlog`` (seq idempotency), ``auth`` (master password, lockout),
``views`` (response bodies), ``problems`` (error bodies), ``app`` (routing and
status codes), ``server`` (the HTTP transport), ``faults`` (trickling, stalled and
huge answers, injected per test).
"""

from tests.backend.clock import AdjustableClock, Clock, SystemClock
from tests.backend.config import BackendConfig, parse_duration
from tests.backend.server import Backend, running_backend

__all__ = [
    "AdjustableClock",
    "Backend",
    "BackendConfig",
    "Clock",
    "SystemClock",
    "parse_duration",
    "running_backend",
]
