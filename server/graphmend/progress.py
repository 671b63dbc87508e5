"""A progress bar on stderr for command-line runs over many files.

Checking a large tree takes tens of seconds (torch's 2,285 files: about 40 s on two cores); a
silent terminal for that long looks hung. The bar is drawn only when stderr is a terminal and the
run is long enough to need one, so piped output, CI logs, pre-commit and `--format json` stay
exactly as they were. tqdm draws it: a bar that redraws in place, rate and ETA included, is not
worth writing again.
"""

from __future__ import annotations

import sys
from collections.abc import Iterable, Iterator
from typing import TextIO, TypeVar

T = TypeVar("T")

MIN_FILES = 50  # below this a run takes about a second: a bar would only flicker


def tracked(items: Iterable[T], total: int, label: str, stream: TextIO | None = None) -> Iterator[T]:
    """`items`, drawing a bar of `total` steps on `stream` (stderr) when it is a terminal."""
    stream = stream if stream is not None else sys.stderr
    if total < MIN_FILES or not _is_terminal(stream):
        yield from items
        return
    from tqdm import tqdm  # imported only when drawn: the server and quiet runs never need it

    with tqdm(items, total=total, desc=label, unit="file", file=stream, leave=False, dynamic_ncols=True) as bar:
        yield from bar


def _is_terminal(stream: TextIO) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError):  # a closed or replaced stream
        return False
