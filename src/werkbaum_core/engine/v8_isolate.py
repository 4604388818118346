"""One mini-racer context whose asyncio loop runs on the thread that calls it.

mini-racer binds every context to an asyncio loop. Called from another thread,
it hands each call over to that loop's thread and waits for the answer to come
back: two more thread switches per call, and two more GIL hand-overs, on top
of those to and from V8's own thread. Here the loop is private and runs only
while a call is being made, on the caller's own thread (the executor's lock
keeps it to one caller at a time), through mini-racer's public asynchronous
API (``eval_cancelable``, ``JSFunction.cancelable``, ``asyncio.wait_for`` for
the time limit). An uncached analysis of werkbaum.werkbaum took 0.2-0.3 ms
less that way (BENCHMARKS.md, "V8 inside the process").

A caller whose thread runs an event loop of its own (a coroutine calling the
engine directly) cannot run a second one: its calls run on a short-lived
thread instead. Everything that evaluates JS goes through :meth:`Isolate.run`;
mini-racer's synchronous ``eval`` from any other thread would wait forever for
a loop that nobody runs.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections.abc import Awaitable, Callable, Sequence
from typing import TYPE_CHECKING, TypeVar

if TYPE_CHECKING:
    from py_mini_racer import MiniRacer, PythonJSConvertedTypes

T = TypeVar("T")
V8_FLAGS = ("--no-maglev",)
"""V8's flags, set once per process before the first context (a process that
started mini-racer before keeps its flags). Not mini-racer's ``--single-threaded``:
in V8 14 a function compiled on the main thread gets no inlined builtins
(``charCodeAt``, ``push`` stay calls: a loop over them ran 2x slower), and the
collector gets no helper threads. Without Maglev, V8's mid tier, hot functions go
from the baseline compiler straight to TurboFan, as in node 20, and reach their
steady speed within the first few dozen analyses (BENCHMARKS.md, "V8 inside the process")."""


class Isolate:
    """A mini-racer context and its private loop; make it on a thread without a loop."""

    def __init__(self) -> None:
        from py_mini_racer import init_mini_racer, mini_racer

        init_mini_racer(flags=V8_FLAGS, ignore_duplicate_init=True)
        self._task: asyncio.Task[object] | None = None
        self._loop = asyncio.new_event_loop()
        self._maker = mini_racer(self._loop)

        async def enter() -> MiniRacer:
            return self._maker.__enter__()  # evaluates mini-racer's prelude: loop running

        try:
            self.racer = self._loop.run_until_complete(enter())
        except BaseException:
            self._loop.close()
            raise

    def run(self, job: Callable[[], Awaitable[T]]) -> T:
        """``job()`` to completion on this isolate's loop, from the calling thread."""
        try:
            asyncio.get_running_loop()
        except RuntimeError:
            return self._loop.run_until_complete(self._tracked(job))
        return _on_a_thread(lambda: self._loop.run_until_complete(self._tracked(job)))

    async def _tracked(self, job: Callable[[], Awaitable[T]]) -> T:
        self._task = asyncio.current_task()
        try:
            return await job()
        finally:
            self._task = None

    def interrupt(self) -> None:
        """Cancel the evaluation in flight, if any, from any thread: V8 stops it, and
        its caller gets ``CancelledError``."""
        task = self._task
        if task is not None:
            with contextlib.suppress(RuntimeError):  # the loop closed meanwhile
                self._loop.call_soon_threadsafe(task.cancel)

    def eval(self, code: str, timeout: float) -> PythonJSConvertedTypes:
        """Evaluate a script; ``TimeoutError`` after ``timeout`` seconds (V8 stops it)."""
        return self.run(lambda: asyncio.wait_for(self.racer.eval_cancelable(code), timeout))

    def call(
        self, function: PythonJSConvertedTypes, args: Sequence[str | None], timeout: float
    ) -> PythonJSConvertedTypes:
        """Call a JS function; ``TimeoutError`` after ``timeout`` seconds."""
        from py_mini_racer import JSFunction

        assert isinstance(function, JSFunction)
        cancelable = function.cancelable()
        return self.run(lambda: asyncio.wait_for(cancelable(*args), timeout))

    def close(self) -> None:
        """Free the context. An aborted call still reports back from V8's thread: one
        trivial evaluation first lets that report arrive while the loop runs, and what
        an interrupted call left on the loop is cancelled while the context lives."""
        with contextlib.suppress(Exception):
            self.eval("0", 1.0)
        with contextlib.suppress(Exception):
            self.run(_cancel_pending)
        try:
            self._maker.__exit__(None, None, None)
        finally:
            self._loop.close()


async def _cancel_pending() -> None:
    """Let what an interrupted call left on the loop finish as cancelled."""
    current = asyncio.current_task()
    pending = [t for t in asyncio.all_tasks() if t is not current]
    for task in pending:
        task.cancel()
    await asyncio.gather(*pending, return_exceptions=True)


def _on_a_thread(work: Callable[[], T]) -> T:
    result: list[T] = []
    failure: list[BaseException] = []

    def target() -> None:
        try:
            result.append(work())
        except BaseException as exc:
            failure.append(exc)

    thread = threading.Thread(target=target, name="werkbaum-v8-call")
    thread.start()
    thread.join()
    if failure:
        raise failure[0]
    return result[0]
