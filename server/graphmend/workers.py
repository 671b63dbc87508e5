"""Worker processes that die with the process that started them.

`graphmend fix -j N` and the server's workspace commands run files in worker processes. When the
parent is killed (SIGKILL, an editor that crashes), `concurrent.futures` workers carry on with the
jobs already queued: seen still rewriting files a minute later. Every pool GraphMend starts runs
this initializer: a daemon thread that exits the worker as soon as its parent is gone (it is then
re-parented, so `os.getppid()` changes). Polling works on every platform and from any thread,
unlike Linux's PR_SET_PDEATHSIG, which fires when the *thread* that forked the worker ends.
A worker stopped mid-write leaves the file as it was: files are replaced atomically.
"""

from __future__ import annotations

import os
import threading
import time
from concurrent.futures import ProcessPoolExecutor
from multiprocessing.context import BaseContext

POLL_SECONDS = 0.25


def _watch_parent(parent: int) -> None:
    while True:
        if os.getppid() != parent:
            os._exit(1)  # no cleanup to run: the parent that wanted the results is gone
        time.sleep(POLL_SECONDS)


def die_with_parent(parent: int) -> None:
    """Pool initializer: exit this worker when process `parent` is no longer its parent."""
    if os.getppid() != parent:
        os._exit(1)
    threading.Thread(target=_watch_parent, args=(parent,), name="graphmend-parent-watch", daemon=True).start()


def worker_pool(workers: int, context: BaseContext | None = None) -> ProcessPoolExecutor:
    """A process pool whose workers end when this process ends, however it ends."""
    return ProcessPoolExecutor(max_workers=workers, mp_context=context, initializer=die_with_parent, initargs=(os.getpid(),))
