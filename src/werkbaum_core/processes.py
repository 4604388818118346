"""Other processes: whether one still runs, and children that end with their parent.

:func:`alive` tells the files a process left (a mirror's ``index.lock``, a load directory)
from those of a process still at work. :func:`signalled_on_parent_death` is Linux's
``prctl(PR_SET_PDEATHSIG)``.

A process killed outright (SIGKILL: the Python MCP SDK's client sends it 2 s after
SIGTERM) runs none of its own clean-up; the kernel's signal to its children is all that
is left. The engine hosts (node, dukpy) get SIGKILL by it, the git mirror's ``git commit``
SIGINT (git then removes its lock files). The signal is tied to the *thread* that forked
the child: start children from a thread that lives at least as long as they should. Off
Linux there is no such signal (:func:`signalled_on_parent_death` returns None).
"""

from __future__ import annotations

import ctypes
import os
import signal
import sys
from collections.abc import Callable

_PR_SET_PDEATHSIG = 1  # linux/prctl.h


def _libc_prctl() -> Callable[..., int] | None:
    """libc's ``prctl`` on Linux; None elsewhere (or without a libc that has it)."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        prctl: Callable[..., int] = ctypes.CDLL(None, use_errno=True).prctl
    except (OSError, AttributeError):
        return None
    return prctl


_PRCTL = _libc_prctl()
"""Looked up once, in the parent: the child between fork and exec only calls it."""


def signalled_on_parent_death(sig: signal.Signals) -> Callable[[], None] | None:
    """A ``preexec_fn`` by which the child gets ``sig`` when the thread that forked it ends,
    and at once if that happened before the request took hold; None off Linux."""
    prctl = _PRCTL
    if prctl is None:
        return None
    parent = os.getpid()

    def ask() -> None:
        prctl(_PR_SET_PDEATHSIG, sig, 0, 0, 0)
        if os.getppid() != parent:  # the parent died between the fork and the request
            os.kill(os.getpid(), sig)

    return ask


def alive(pid: int) -> bool:
    """Whether a process with this pid exists (another user's included); a pid no process
    can have (0 or less, past the system's range) is none."""
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OverflowError:
        return False
    except PermissionError:  # another user's process
        return True
    return True
