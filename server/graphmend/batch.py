"""One way to run a job per file, for the CLI, the server's workspace commands and the benchmarks.

Results come back in the order of the jobs, from worker processes when there are enough jobs to
pay for starting them (in this process otherwise), and stop early when the caller says so (the
editor's cancel button). The workers end with the process that started them (workers.py). A
server runs threads, so it asks for `spawn`: forking a process with threads can deadlock it.
"""

from __future__ import annotations

import multiprocessing
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import Future, ProcessPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeout
from contextlib import contextmanager, nullcontext
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
    pool: ProcessPoolExecutor | None = None,
) -> Iterator[Result]:
    """`function(job)` for each job, yielded in the jobs' order; stops (cancelling what has not
    started) as soon as `cancelled()` turns true. `function` must be picklable (module level).
    `pool` (from `kept_workers`) runs the jobs in workers an earlier round already started."""
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
    with nullcontext(pool) if pool is not None else worker_pool(workers, context) as running:
        futures: list[Future[list[Result]]] = [running.submit(_run_chunk, function, chunk) for chunk in chunks]
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


@contextmanager
def kept_workers(workers: int, jobs: int) -> Iterator[ProcessPoolExecutor | None]:
    """One pool of `workers` processes for several rounds of `each_result` over a first round of
    `jobs` jobs (None where that round runs in this process). A worker keeps what it has cached
    from one round to the next: the modules it parsed for imported disables, jedi's parsed
    modules. `check` follows calls across modules in rounds, and each round started fresh workers
    that parsed `modeling_utils.py` again."""
    if workers <= 1 or jobs < MIN_JOBS_FOR_WORKERS:
        yield None
        return
    with worker_pool(workers) as pool:
        yield pool


def _run_chunk(function: Callable[[Job], Result], jobs: list[Job]) -> list[Result]:
    return [function(job) for job in jobs]
