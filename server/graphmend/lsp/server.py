"""`graphmend lsp`: the analyser and the rewrites served to any editor over the Language Server
Protocol (pygls 2).

Wiring only: `create_server` builds a session (session.py) and lets each feature module add its
handlers. Diagnostics are pulled (`textDocument/diagnostic`) when the client supports it and pushed
otherwise, never both: VS Code shows a problem twice when it receives it both ways. Analysis runs
off the event loop, debounced per document while the user types; everything else (code actions,
fix-all, pull requests) reads the analysis stored for the document's current version.
"""

from __future__ import annotations

import logging

from . import assist, confirm_commands, lifecycle, sync, workspace_commands
from .session import GraphMendServer

FEATURES = (lifecycle.FEATURE, sync.FEATURE, assist.FEATURE, workspace_commands.FEATURE, confirm_commands.FEATURE)


def create_server() -> GraphMendServer:
    """A server with every feature's handlers: a fresh one per call, so tests can drive their own."""
    server = GraphMendServer()
    for feature in FEATURES:
        feature.register(server)
    return server


def main(tcp: int | None = None, host: str = "127.0.0.1") -> None:
    logging.basicConfig(level=logging.WARNING, format="graphmend-lsp %(levelname)s %(name)s: %(message)s")
    server = create_server()
    if tcp is not None:
        server.start_tcp(host, tcp)
    else:
        server.start_io()
