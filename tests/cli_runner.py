"""Run the `graphmend` command line in-process and capture what it prints."""

from __future__ import annotations

import pytest
from graphmend.cli import main


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    """(exit status, stdout, stderr) of `graphmend ARGS...`."""
    code = main(list(args))
    captured = capsys.readouterr()
    return code, captured.out, captured.err
