"""An attacker process for the file store's race tests (run as a script).

``swap DIR NAME TARGET STOP``: ``DIR/NAME`` exists (a directory or a file);
until the file ``STOP`` exists, exchange it with a symlink to ``TARGET`` as
fast as possible — atomically with ``renameat2(RENAME_EXCHANGE)``, so the
name always exists and is, at any moment, either the real entry or the link
— then put the real entry back and print the number of exchanges. Prints
``ready`` once the link is in place, so the test starts its calls against a
running swapper.
"""

from __future__ import annotations

import ctypes
import os
import sys
from pathlib import Path

RENAME_EXCHANGE = 2


def swap(directory: str, name: str, target: str, stop: str) -> None:
    libc = ctypes.CDLL(None, use_errno=True)
    fd = os.open(directory, os.O_RDONLY | os.O_DIRECTORY)
    link = f"{name}.swap-link"
    os.symlink(target, link, dir_fd=fd)
    old, new = os.fsencode(name), os.fsencode(link)
    print("ready", flush=True)
    swaps = 0
    # Stop only after an even number of exchanges: the real entry is back under its name.
    while swaps % 64 or not Path(stop).exists():
        if libc.renameat2(fd, old, fd, new, RENAME_EXCHANGE) != 0:
            code = ctypes.get_errno()
            raise SystemExit(f"renameat2: {os.strerror(code)}")
        swaps += 1
    os.unlink(link, dir_fd=fd)
    print(swaps, flush=True)


if __name__ == "__main__":
    mode, *rest = sys.argv[1:]
    if mode != "swap":
        raise SystemExit(f"unknown mode {mode}")
    swap(*rest)
