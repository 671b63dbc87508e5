"""A feature module's handlers as data: which protocol methods (with their options) and which
commands it answers. server.py adds every module's `FEATURE` to the server it creates."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from pygls.lsp.server import LanguageServer


@dataclass(frozen=True)
class Feature:
    handlers: tuple[tuple[str, Callable[..., Any], Any], ...] = ()  # (method, handler, options or None)
    commands: tuple[tuple[str, Callable[..., Any]], ...] = ()  # (workspace/executeCommand name, handler)

    def register(self, server: LanguageServer) -> None:
        for method, handler, options in self.handlers:
            server.feature(method, options)(handler)
        for name, handler in self.commands:
            server.command(name)(handler)
