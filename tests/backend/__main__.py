"""``python -m tests.backend``: run the stand-in until interrupted.

The first line on stdout is the base URL (``http://127.0.0.1:<port>[prefix]``),
flushed at once, so a test or script that starts it with ``--port 0`` can read
where it listens.  Defaults are upstream's production settings; ``--test-profile``
switches to upstream's test profile, and every knob of documents-api §13.11 has
a flag.
"""

from __future__ import annotations

import argparse
import dataclasses
import logging
import os
import signal
import sys
import threading
from typing import Any

from tests.backend.auth import PasswordHashError
from tests.backend.config import BackendConfig, parse_duration
from tests.backend.ops import OPS_MODES
from tests.backend.server import Backend


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="python -m tests.backend",
        description="Local Werkbaum-compatible documents backend (documents-api.md).",
    )
    p.add_argument("--host", default="127.0.0.1", help="bind address (default 127.0.0.1)")
    p.add_argument("--port", type=int, default=0, help="port; 0 picks a free one (default)")
    p.add_argument("--prefix", default="", help="sub-path before /api/v1, e.g. /werkbaum")
    p.add_argument(
        "--test-profile",
        action="store_true",
        help="upstream's test profile: password test-geheim, 3 attempts, 2s lockout, 5s max wait",
    )
    pw = p.add_mutually_exclusive_group()
    pw.add_argument("--master-password", help="plain master password for GET /documents")
    pw.add_argument(
        "--master-password-hash",
        help="Spring-style hash, only {noop}<pw> is supported "
        "(default: $WERKBAUM_MASTER_PASSWORD_HASH; none = list locked)",
    )
    pw.add_argument("--no-master-password", action="store_true", help="lock the list for everyone")
    p.add_argument("--max-attempts", type=int, help="failed logins before the lockout (5)")
    p.add_argument("--lockout", help="lockout duration (15m)")
    p.add_argument("--max-wait", help="clamp for the feed's wait (25s)")
    p.add_argument("--milestone-pause", help="write pause that promotes a sync version (30s)")
    p.add_argument("--sync-retention", help="age after which sync versions are compacted (5m)")
    p.add_argument("--max-ops", type=int, help="ops per PATCH (1000)")
    p.add_argument("--max-content-length", type=int, help="characters after a PATCH (2000000)")
    p.add_argument("--patch-log-capacity", type=int, help="(document, client) pairs kept (1024)")
    p.add_argument(
        "--ops",
        choices=OPS_MODES,
        default="auto",
        help="line-ops implementation (auto: the engine's live.js if it loads)",
    )
    p.add_argument(
        "--clock-control",
        action="store_true",
        help="adjustable clock + POST <prefix>/__test__/clock/advance {seconds}",
    )
    p.add_argument("--verbose", action="store_true", help="log requests to stderr")
    return p


def config_from_args(args: argparse.Namespace) -> BackendConfig:
    config = BackendConfig.test_profile() if args.test_profile else BackendConfig()
    changes: dict[str, Any] = {
        "prefix": args.prefix.rstrip("/"),
        "ops_impl": args.ops,
        "clock_control": args.clock_control,
    }
    if args.master_password is not None:
        changes["master_password_hash"] = "{noop}" + args.master_password
    elif args.master_password_hash is not None:
        changes["master_password_hash"] = args.master_password_hash
    elif args.no_master_password:
        changes["master_password_hash"] = None
    elif not args.test_profile and os.environ.get("WERKBAUM_MASTER_PASSWORD_HASH"):
        changes["master_password_hash"] = os.environ["WERKBAUM_MASTER_PASSWORD_HASH"]
    for name in ("lockout", "max_wait", "milestone_pause", "sync_retention"):
        if getattr(args, name) is not None:
            changes[name] = parse_duration(getattr(args, name))
    for name in ("max_attempts", "max_ops", "max_content_length", "patch_log_capacity"):
        if getattr(args, name) is not None:
            changes[name] = getattr(args, name)
    return dataclasses.replace(config, **changes)


def main(argv: list[str] | None = None) -> int:
    parser = _parser()
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO if args.verbose else logging.WARNING)
    try:
        config = config_from_args(args)
        backend = Backend(config, host=args.host, port=args.port, verbose=args.verbose)
    except (ValueError, PasswordHashError, OSError) as exc:
        parser.exit(2, f"error: {exc}\n")
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    signal.signal(signal.SIGINT, lambda *_: stop.set())
    backend.start()
    print(backend.base_url, flush=True)
    print(f"line ops: {backend.ops_name}", file=sys.stderr, flush=True)
    while not stop.wait(0.5):
        pass
    backend.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
