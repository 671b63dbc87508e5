"""Worker processes end with the process that started them (issue 18: a SIGKILLed
`graphmend fix -j 2` left both workers running, still rewriting files a minute later)."""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from pathlib import Path

from graphmend.runtime.runner import descendants

from .processes import running
from .samples import BRANCH_AND_PRINT


def test_fix_workers_stop_when_the_main_process_is_killed(tmp_path: Path) -> None:
    for number in range(400):
        (tmp_path / f"model_{number}.py").write_text(BRANCH_AND_PRINT * 20, encoding="utf-8")
    main = subprocess.Popen(
        [sys.executable, "-m", "graphmend", "fix", "-j", "2", "-q", str(tmp_path)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    deadline = time.monotonic() + 60
    workers: set[int] = set()
    while len(workers) < 2 and time.monotonic() < deadline and main.poll() is None:
        time.sleep(0.1)
        workers = set(descendants(main.pid))  # the pool's workers
    assert workers, "the fix run ended before its workers could be seen: give it more files"
    main.send_signal(signal.SIGKILL)
    main.wait()
    deadline = time.monotonic() + 10
    while any(running(pid) for pid in workers) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not [pid for pid in workers if running(pid)], "workers outlived the killed main process"
