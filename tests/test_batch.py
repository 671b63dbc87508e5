"""The one batch runner (batch.py) under `check`, `fix`, the workspace commands and the benches:
results in the jobs' order whether run here or in workers, and a cancel that stops the run."""

from __future__ import annotations

import os
import time

import pytest
from graphmend.batch import each_result, kept_workers


def _square_slowly(job: int) -> tuple[int, int]:
    time.sleep(0.01 * (job % 3))  # finish out of order
    return job * job, os.getpid()


@pytest.mark.parametrize("workers", [1, 2])
def test_results_come_back_in_the_jobs_order(workers: int) -> None:
    results = list(each_result(_square_slowly, list(range(12)), workers))
    assert [value for value, _ in results] == [n * n for n in range(12)]
    ran_here = {pid for _, pid in results} == {os.getpid()}
    assert ran_here is (workers == 1)


@pytest.mark.parametrize("workers", [1, 2])
def test_a_cancelled_run_stops_early(workers: int) -> None:
    seen: list[int] = []
    results = each_result(_square_slowly, list(range(40)), workers, cancelled=lambda: len(seen) >= 3)
    for value, _ in results:
        seen.append(value)
    assert seen == [0, 1, 4]


def _pid(_job: int) -> int:
    time.sleep(0.01)  # long enough for every worker to take chunks in each round
    return os.getpid()


def test_kept_workers_run_every_round_in_the_same_processes() -> None:
    with kept_workers(2, 40) as pool:
        assert pool is not None
        first = set(each_result(_pid, list(range(40)), 2, pool=pool))
        second = set(each_result(_pid, list(range(40)), 2, pool=pool))
    assert os.getpid() not in first
    assert second <= first  # no new process started for the second round


def test_kept_workers_are_none_where_the_first_round_runs_here() -> None:
    with kept_workers(2, 2) as pool:
        assert pool is None
    with kept_workers(1, 400) as pool:
        assert pool is None
