"""One way to run a job per file, for the CLI, the server's workspace commands and the benchmarks.

Results come back in the order of the jobs, from worker processes when there are enough jobs to
pay for starting them (in this process otherwise), and stop early when the caller says so (the
editor's cancel button). The workers end with the process that started them (workers.py). A
server runs threads, so it asks for `spawn`: forking a process with threads can deadlock it.
"""

from __future__ import annotations

import multiprocessing
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import Future
from concurrent.futures import TimeoutError as FutureTimeout
from typing import TypeVar

from .workers import worker_pool

Job = TypeVar("Job")
Result = TypeVar("Result")

MIN_JOBS_FOR_WORKERS = 4  # below this, starting processes costs more than it saves
MAX_CHUNK = 16
_CANCEL_POLL_SECONDS = 0.2


def never() -> bool:
    return False


def each_result(
    function: Callable[[Job], Result],
    jobs: Sequence[Job],
    workers: int,
    *,
    cancelled: Callable[[], bool] = never,
    spawn: bool = False,
) -> Iterator[Result]:
    """`function(job)` for each job, yielded in the jobs' order; stops (cancelling what has not
    started) as soon as `cancelled()` turns true. `function` must be picklable (module level)."""
    if workers <= 1 or len(jobs) < MIN_JOBS_FOR_WORKERS:
        for job in jobs:
            if cancelled():
                return
            yield function(job)
        return
    context = multiprocessing.get_context("spawn") if spawn else None
    # Jobs go to the workers in chunks: one pickle per chunk sends a configuration shared by its
    # jobs once, and the caches it carries (imported disables) serve the whole chunk; the chunks
    # stay small enough for progress to move and a cancel to be quick.
    size = max(1, min(MAX_CHUNK, len(jobs) // (workers * 8)))
    chunks = [list(jobs[start : start + size]) for start in range(0, len(jobs), size)]
    with worker_pool(workers, context) as pool:
        futures: list[Future[list[Result]]] = [pool.submit(_run_chunk, function, chunk) for chunk in chunks]
        try:
            for future in futures:
                while True:
                    if cancelled():
                        return
                    try:
                        results = future.result(timeout=_CANCEL_POLL_SECONDS)
                        break
                    except FutureTimeout:
                        continue
                for result in results:
                    if cancelled():
                        return
                    yield result
        finally:
            for future in futures:
                future.cancel()


def _run_chunk(function: Callable[[Job], Result], jobs: list[Job]) -> list[Result]:
    return [function(job) for job in jobs]
