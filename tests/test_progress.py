"""The command line's progress bar: drawn on a terminal for long runs, never anywhere else."""

from __future__ import annotations

import contextlib
import fcntl
import io
import os
import pty
import struct
import subprocess
import sys
import termios
from pathlib import Path

from graphmend.progress import MIN_FILES, tracked


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_a_long_run_on_a_terminal_draws_a_bar_and_keeps_every_item_in_order() -> None:
    terminal = _Terminal()
    assert list(tracked(iter(range(MIN_FILES)), MIN_FILES, "checking", terminal)) == list(range(MIN_FILES))
    drawn = terminal.getvalue()
    assert f"checking:   0%|          | 0/{MIN_FILES}" in drawn and drawn.endswith("\r")  # drawn, then cleared


def test_piped_output_and_short_runs_get_no_bar() -> None:
    piped, terminal = io.StringIO(), _Terminal()
    assert list(tracked(iter(range(500)), 500, "checking", piped)) == list(range(500))
    assert list(tracked(iter(range(3)), 3, "checking", terminal)) == [0, 1, 2]
    assert piped.getvalue() == "" and terminal.getvalue() == ""


def test_check_on_a_terminal_shows_progress_on_stderr_only(tmp_path: Path) -> None:
    for number in range(MIN_FILES + 10):
        (tmp_path / f"m{number}.py").write_text("import torch\n\n@torch.compile\ndef f(x):\n    return x.item()\n", encoding="utf-8")
    primary, secondary = pty.openpty()  # stderr is a terminal, stdout a pipe (as in `graphmend check | less`)
    fcntl.ioctl(secondary, termios.TIOCSWINSZ, struct.pack("HHHH", 30, 100, 0, 0))  # a terminal has a width
    try:
        done = subprocess.run(
            [sys.executable, "-m", "graphmend", "check", "-j", "2", "--format", "json", "."],
            cwd=tmp_path, stdout=subprocess.PIPE, stderr=secondary, timeout=120, check=False,
        )
        os.set_blocking(primary, False)  # read what the terminal holds while it is still open
        drawn = b""
        with contextlib.suppress(BlockingIOError):
            while chunk := os.read(primary, 65536):
                drawn += chunk
    finally:
        os.close(primary)
        os.close(secondary)
    assert done.returncode == 1 and done.stdout.startswith(b"[")  # the JSON is untouched
    assert b"checking:   0%|" in drawn and f"| 0/{MIN_FILES + 10}".encode() in drawn
