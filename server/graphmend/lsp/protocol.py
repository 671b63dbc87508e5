"""The JSON-RPC layer under the server, with three of pygls 2's behaviours corrected.

1. A request whose parameters do not validate (a negative position, a line past 2^31) got no
   response at all: pygls raises while decoding, before it knows it is a request, and the client
   waits forever. JSON-RPC requires an error reply, so it gets `InvalidParams` with its id. A
   notification with invalid parameters cannot be answered; it is logged, not shown as a popup.
2. Every notification left a future in `_request_futures` (pygls files notifications and the
   handlers they yield to under fresh ids nobody ever pops): about 2 KB per keystroke for the
   life of the session. Futures are dropped once done; a request's is popped by pygls as before.
3. `didChange` for a document the client never opened raised `KeyError` inside pygls' own
   handler and popped up "Error in server"; it is logged and ignored (there is nothing to update).
"""

from __future__ import annotations

import logging
from typing import Any

from lsprotocol import types
from pygls.exceptions import JsonRpcException
from pygls.protocol import LanguageServerProtocol
from pygls.protocol.language_server import lsp_method

logger = logging.getLogger(__name__)


class _Answered:
    """A message already dealt with while decoding (an error reply sent, or logged)."""

    jsonrpc = ""  # pygls ignores messages of an unknown JSON-RPC version without a popup


ANSWERED = _Answered()


class _Futures(dict):
    """Futures by message id; `items()` is a snapshot, as pygls' shutdown cancels futures while it
    iterates them and a done future now removes itself."""

    def items(self):  # type: ignore[override]
        return list(super().items())


class GraphMendProtocol(LanguageServerProtocol):
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._request_futures = _Futures()

    def structure_message(self, data: dict[str, Any]) -> Any:
        try:
            return super().structure_message(data)
        except JsonRpcException as error:
            if not isinstance(data, dict) or "jsonrpc" not in data or "method" not in data:
                raise
            method = data.get("method")
            if "id" in data:
                logger.warning("invalid parameters for request %r (id %r): answered with an error", method, data["id"])
                self._send_response(data["id"], error=types.ResponseError(code=error.code, message=f"{error.message} for {method}"))
            else:
                logger.warning("invalid parameters for notification %r: ignored", method)
            return ANSWERED

    def handle_message(self, message: Any) -> None:
        if message is ANSWERED:
            return
        super().handle_message(message)

    def _execute_handler(self, msg_id: Any, handler: Any, callback: Any, args: Any = None, kwargs: Any = None) -> None:
        super()._execute_handler(msg_id, handler, callback, args, kwargs)
        future = self._request_futures.get(msg_id)
        if future is not None:

            def forget(_done: object) -> None:
                self._request_futures.pop(msg_id, None)

            future.add_done_callback(forget)

    @lsp_method(types.TEXT_DOCUMENT_DID_CHANGE)
    def lsp_text_document__did_change(self, params: types.DidChangeTextDocumentParams) -> Any:
        if params.text_document.uri not in self.workspace.text_documents:
            logger.warning("didChange for %s, which the client never opened: ignored", params.text_document.uri)
            return
        yield from super().lsp_text_document__did_change(params)

