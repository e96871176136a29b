"""A progress bar for long management commands that log lines do not break into.

The bar is drawn by rich on standard error. While it runs, the log handlers that write
to a stream write through the bar's console instead: each log line is printed whole
above the bar (in its own format, JSON or text), and the bar is drawn again below it.
When standard error is not a terminal (a pipe, a file, a test), there is no live bar:
the log lines pass as they are and the bar is printed once, complete, at the end.
"""

from __future__ import annotations

import io
import logging
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TextIO

from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)

# Called with the steps done and the total (None: not known yet).
Advance = Callable[[int, int | None], None]


@contextmanager
def progress_bar(
    description: str, *, total: int | None = None, file: TextIO | None = None
) -> Iterator[Advance]:
    """Show a progress bar while the block runs; yield ``update(done, total)``."""
    console = Console(file=file or sys.stderr)
    progress = Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        TimeRemainingColumn(),
        console=console,
    )
    task = progress.add_task(description, total=total)

    def update(done: int, total: int | None = None) -> None:
        progress.update(task, completed=done, total=total)

    with progress, _logs_above(console):
        yield update


@contextmanager
def _logs_above(console: Console) -> Iterator[None]:
    """Within this block, stream log handlers write through ``console`` (above its bar)."""
    if not console.is_terminal:
        yield
        return
    moved: list[tuple[logging.StreamHandler, TextIO]] = []
    for handler in _stream_handlers():
        moved.append((handler, handler.setStream(_AboveBar(console))))
    try:
        yield
    finally:
        for handler, stream in moved:
            handler.flush()
            handler.setStream(stream)


class _AboveBar(io.TextIOBase):
    """A stream that prints each whole line through a console, above its live bar."""

    def __init__(self, console: Console) -> None:
        self._console = console
        self._partial = ""

    def write(self, text: str) -> int:
        *lines, self._partial = (self._partial + text).split("\n")
        for line in lines:
            # As written: no markup, no highlighting, and no wrapping (a JSON line stays one).
            self._console.print(line, markup=False, highlight=False, emoji=False, soft_wrap=True)
        return len(text)

    def flush(self) -> None:
        if self._partial:
            self.write("\n")


def _stream_handlers() -> list[logging.StreamHandler]:
    loggers = [logging.getLogger(), *logging.Logger.manager.loggerDict.values()]
    handlers = {
        handler
        for logger in loggers
        if isinstance(logger, logging.Logger)
        for handler in logger.handlers
        # A file handler is a StreamHandler too, but it writes where no bar is drawn.
        if type(handler) is logging.StreamHandler
    }
    return sorted(handlers, key=id)
