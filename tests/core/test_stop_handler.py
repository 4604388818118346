"""The stop handler takes no lock (round 26, process lifecycle).

A signal handler runs on the main thread between two of its bytecodes, wherever that
thread was. The handler flushed the stderr queue itself, and a SIGTERM that came while
the event loop was queueing a log line (holding that queue's lock) left the server
waiting on its own lock until SIGKILL (1 of 2 to 1 of 30 stops of a server logging a
warning per line, /work/notes/round26/process-repro/sig_while_logging.py). Here the
main thread holds that lock on purpose when the signal comes: the process must still
write its lines and die of the signal.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

DEADLINE = 20.0
"""Seconds within which the process must have died (it hung for good before)."""

HELD_LOCK = """
import os, signal, sys, time
from werkbaum_core.engine.lifetime import close_on_exit
from werkbaum_stdio.stderr_lines import STDERR

class NoEngine:
    def close(self):
        pass

close_on_exit(NoEngine())
STDERR.write("serving\\n")
STDERR.flush(5)
# What write() holds while it queues a line (the event loop logs a warning, say) when the
# host's SIGTERM comes: the handler runs right here, on this thread.
with STDERR._lock:
    os.kill(os.getpid(), signal.SIGTERM)
    time.sleep(0.5)
time.sleep(60)
"""


def test_a_stop_signal_while_the_main_thread_holds_the_stderr_lock_still_ends_it(
    tmp_path: Path,
) -> None:
    process = subprocess.Popen(
        [sys.executable, "-c", HELD_LOCK],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        env={"PATH": os.environ["PATH"], "HOME": str(tmp_path)},
    )
    try:
        status = process.wait(timeout=DEADLINE)
    except subprocess.TimeoutExpired:
        status = None
    finally:
        if process.poll() is None:
            process.kill()
            process.wait(timeout=DEADLINE)
    assert process.stderr is not None
    said = process.stderr.read().decode()
    assert status == -signal.SIGTERM, f"hung on its own lock ({status}): {said}"
    assert said == "serving\n"
