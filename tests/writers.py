"""Two writer processes at once, shared by ``test_store.py`` and ``test_memory_reliability.py``.

Both files check the same thing about a different store: two processes writing ADDS times each to one
file, at the same time, lose nothing with the safe call and lose updates with the stale one. What
differs is only what a write is, so a test passes a *setup*: a module-level function (the child finds
it by name) that opens the store in the child and returns ``write(i)``. This module starts the two
processes, lines them up on a barrier after their setup, runs the writes 2 ms apart, and checks from
the times each child wrote down that the two really overlapped. ``report`` is how a child that will be
killed tells the parent how far it got (both files' kill tests).
"""

import json
import multiprocessing
import os
import time
from collections.abc import Callable
from pathlib import Path

ADDS = 50  # writes each of the two writers makes
WHO = ("a", "b")


def rule(i: int, who: str = "w") -> str:
    """A distinct, valid rule per number: 'when any task: skip tool_w_17'."""
    return f"when any task: skip tool_{who}_{i}"


def report(progress: Path, line: str) -> None:
    """One line to the parent. A single small O_APPEND write: a kill cannot leave half of it."""
    fd = os.open(progress, os.O_WRONLY | os.O_APPEND | os.O_CREAT)
    try:
        os.write(fd, (line + "\n").encode())
    finally:
        os.close(fd)


def forkserver(*preload: str):
    """A process context whose server imports ``preload`` once, so a writer starts in ~10 ms instead of
    the ~1 s a fresh interpreter takes to import the package."""
    context = multiprocessing.get_context("forkserver")
    context.set_forkserver_preload([*preload, __name__])
    return context


def _writer(setup: Callable, who: str, args: tuple, start, span_file: str) -> None:
    write = setup(who, *args)
    start.wait()  # both writers leave it together, once both are set up
    began = time.time()
    for i in range(ADDS):
        write(i)
        time.sleep(0.002)  # and between writes
    Path(span_file).write_text(json.dumps([began, time.time()]))


def run_two_writers(processes, span_dir: Path, setup: Callable, *args) -> None:
    """Run ``setup(who, *args)`` then its ``write(0 .. ADDS-1)`` in two processes, 'a' and 'b', at once."""
    start = processes.Barrier(len(WHO))
    writers = [
        processes.Process(target=_writer, args=(setup, who, args, start, str(span_dir / who))) for who in WHO
    ]
    for process in writers:
        process.start()
    for process in writers:
        process.join(timeout=60)
        assert process.exitcode == 0
    (a_began, a_ended), (b_began, b_ended) = (json.loads((span_dir / w).read_text()) for w in WHO)
    assert a_began < b_ended and b_began < a_ended, "the two writers did not run at the same time"
