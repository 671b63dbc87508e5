"""Hypothesis against what a long session throws at GraphMend: arbitrary bytes as a file, arbitrary
text as a document, and random incremental edits (out-of-range positions included) as didChange
notifications to a server instance. Nothing may raise; the server keeps no state per notification
and keeps the document it was sent."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

from graphmend import analyze
from graphmend.files import decode_source
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

FRAGMENTS = st.sampled_from(
    [
        "import torch\n", "@torch.compile\n", "def f(x):\n", "    ", "if x.sum() > 0:\n", "print(x)\n", "return x\n",
        "x.item()", "(", ")", ":", "\n", "\t", "'", '"""', "\\", "\x00", "\ud800", "é", "#", "lambda", "yield", "+",
    ]
)
SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@SETTINGS
@given(st.binary(max_size=400))
def test_any_bytes_are_decoded_or_skipped_with_a_reason(data: bytes) -> None:
    source = decode_source(Path("fuzz.py"), data)
    assert (source.text is None) == (source.skip_reason is not None)


@SETTINGS
@given(st.lists(FRAGMENTS | st.text(max_size=8), max_size=40).map("".join))
def test_any_text_is_analysed_without_raising(text: str) -> None:
    for finding in analyze(text, "fuzz.py"):
        assert finding.span.start_line >= 1 and finding.code.startswith("GM")


EDIT = st.tuples(
    st.integers(-2, 12), st.integers(-2, 30), st.integers(-2, 12), st.integers(-2, 30), st.lists(FRAGMENTS, max_size=4).map("".join)
)


@SETTINGS
@given(st.lists(EDIT, min_size=1, max_size=25))
def test_random_edits_leave_the_server_consistent(edits: list[tuple[int, int, int, int, str]]) -> None:
    asyncio.run(_edit_session(edits))


async def _edit_session(edits: list[tuple[int, int, int, int, str]]) -> None:
    from graphmend.lsp.server import create_server

    instance = create_server()
    protocol = instance.protocol
    sent: list[dict] = []
    protocol._send_data = lambda data: sent.append(protocol._serialize_message(data) if not isinstance(data, dict) else data)  # type: ignore[method-assign]

    def deliver(message: dict) -> None:
        protocol.handle_message(json.loads(json.dumps(message), object_hook=protocol.structure_message))

    deliver({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"processId": None, "rootUri": None, "capabilities": {}}})
    uri = "file:///tmp/graphmend-fuzz.py"
    opened = {"textDocument": {"uri": uri, "languageId": "python", "version": 1, "text": "import torch\n\n\ndef f(x):\n    return x\n"}}
    deliver({"jsonrpc": "2.0", "method": "textDocument/didOpen", "params": opened})
    for version, (line, character, end_line, end_character, text) in enumerate(edits, 2):
        change = {"range": {"start": {"line": line, "character": character}, "end": {"line": end_line, "character": end_character}}, "text": text}
        deliver({"jsonrpc": "2.0", "method": "textDocument/didChange", "params": {"textDocument": {"uri": uri, "version": version}, "contentChanges": [change]}})
        await asyncio.sleep(0)
    await asyncio.sleep(0.1)
    document = instance.workspace.get_text_document(uri)
    analyze(document.source, "fuzz.py")  # whatever the edits made of it
    assert len(protocol._request_futures) == 0
    assert not [m for m in sent if m.get("method") == "window/showMessage" and m.get("params", {}).get("type") == 1], sent
    for task in list(instance.scheduled()):
        task.cancel()
