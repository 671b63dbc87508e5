"""The server survives what editors and users do to it: a client that vanishes, garbage on the
wire, requests about documents it never saw, invalid initialization options, cancellation."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from pathlib import Path

import pytest_lsp
from lsprotocol import types
from pytest_lsp import LanguageClient

from .lsp_client import SERVER, capabilities, open_document, wait_until
from .samples import BRANCH_AND_PRINT


def _frame(message: dict) -> bytes:
    body = json.dumps(message).encode("utf-8")
    return f"Content-Length: {len(body)}\r\n\r\n".encode("ascii") + body


def _initialize(root: Path) -> dict:
    return {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"processId": None, "rootUri": root.as_uri(), "capabilities": {}}}


def test_a_client_that_disconnects_ends_the_server_cleanly(tmp_path: Path) -> None:
    server = subprocess.Popen([sys.executable, "-m", "graphmend", "lsp"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert server.stdin is not None
    server.stdin.write(_frame(_initialize(tmp_path)))
    server.stdin.write(b"Content-Length: 500\r\n\r\n{\"jsonrpc\": ")  # cut off mid-message
    server.stdin.close()
    server.wait(timeout=30)
    stderr = server.stderr.read() if server.stderr is not None else b""
    assert server.returncode == 0, stderr.decode()[-2000:]  # (pygls logs the cut-off message)


def test_garbage_on_the_wire_does_not_stop_the_server(tmp_path: Path) -> None:
    messages = [
        _frame(_initialize(tmp_path)),
        b"Content-Length: 9\r\n\r\nnot json!",
        _frame({"jsonrpc": "2.0", "id": 2, "method": "textDocument/codeAction", "params": {"nonsense": True}}),
        _frame({"jsonrpc": "2.0", "id": 3, "method": "shutdown"}),
        _frame({"jsonrpc": "2.0", "method": "exit"}),
    ]
    completed = subprocess.run([sys.executable, "-m", "graphmend", "lsp"], input=b"".join(messages), capture_output=True, timeout=60)
    answers = completed.stdout.decode("utf-8", errors="replace")
    # initialize answered, then after the garbage and a malformed request, shutdown still is
    assert '"id": 1' in answers and '"id": 3' in answers, answers[-2000:]
    assert completed.returncode == 0


@pytest_lsp.fixture(config=SERVER)
async def client(lsp_client: LanguageClient, tmp_path: Path):
    lsp_client.workspace_path = tmp_path

    @lsp_client.feature(types.CLIENT_REGISTER_CAPABILITY)
    def register(params: types.RegistrationParams) -> None:
        return None

    @lsp_client.feature(types.WORKSPACE_APPLY_EDIT)
    def apply_edit(params: types.ApplyWorkspaceEditParams) -> types.ApplyWorkspaceEditResult:
        return types.ApplyWorkspaceEditResult(applied=True)

    await lsp_client.initialize_session(
        types.InitializeParams(
            capabilities=capabilities("visual_studio_code"),
            root_uri=tmp_path.as_uri(),
            workspace_folders=[types.WorkspaceFolder(uri=tmp_path.as_uri(), name="ws")],
            initialization_options={"debounceMs": -5, "diagnosticMode": "push", "jobs": 2},
        )
    )
    yield
    await lsp_client.shutdown_session()


async def test_invalid_initialization_options_are_reported_and_defaulted(client: LanguageClient) -> None:
    messages = await wait_until(lambda: [m.message for m in client.messages if "debounceMs" in m.message])
    assert "must be a whole number from 0 to 5000" in messages[0] and "using the default (50)" in messages[0]


async def test_requests_about_unknown_documents_get_empty_answers(client: LanguageClient) -> None:
    uri = (client.workspace_path / "never_opened.py").as_uri()
    client.text_document_did_change(
        types.DidChangeTextDocumentParams(
            text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=3),
            content_changes=[types.TextDocumentContentChangeWholeDocument(text="x = 1\n")],
        )
    )
    position = types.Position(line=0, character=0)
    actions = await client.text_document_code_action_async(
        types.CodeActionParams(
            text_document=types.TextDocumentIdentifier(uri=uri),
            range=types.Range(start=position, end=position),
            context=types.CodeActionContext(diagnostics=[]),
        )
    )
    assert not actions
    opened = open_document(client, client.workspace_path / "model.py", BRANCH_AND_PRINT)
    await wait_until(lambda: client.diagnostics.get(opened))  # still serving


async def test_mend_workspace_can_be_cancelled(client: LanguageClient) -> None:
    for number in range(120):
        (client.workspace_path / f"model_{number}.py").write_text(BRANCH_AND_PRINT, encoding="utf-8")
    command = asyncio.ensure_future(
        client.workspace_execute_command_async(types.ExecuteCommandParams(command="graphmend.mendWorkspace", arguments=[]))
    )
    token = await wait_until(lambda: next(iter(client.progress_reports), None))
    client.window_work_done_progress_cancel(types.WorkDoneProgressCancelParams(token=token))
    result = await asyncio.wait_for(command, 120)
    assert result["cancelled"] is True and result["files"] < 120
    assert client.progress_reports[token][-1].kind == "end" and "cancelled" in client.progress_reports[token][-1].message


def _replies(stdout: bytes) -> list[dict]:
    """The JSON bodies of the framed messages a server wrote."""
    bodies = stdout.decode("utf-8").split("\r\n\r\n")[1:]  # each after its headers
    return [json.loads(body.split("Content-Length")[0]) for body in bodies]


def _decoded(protocol: object, message: dict) -> object:
    return json.loads(json.dumps(message), object_hook=protocol.structure_message)  # type: ignore[attr-defined]


async def test_notifications_leave_no_state_behind() -> None:
    """pygls keeps a future per notification under an id nobody pops: memory grew with every
    keystroke for the life of the session. Measured on a server instance of its own."""
    from graphmend.lsp.server import create_server

    instance = create_server()
    protocol = instance.protocol
    protocol._send_data = lambda data: None  # type: ignore[method-assign]
    protocol.handle_message(_decoded(protocol, _initialize(Path("/tmp"))))
    uri = "file:///tmp/graphmend-leak-check.py"
    opened = {"textDocument": {"uri": uri, "languageId": "python", "version": 1, "text": "import torch\n"}}
    protocol.handle_message(_decoded(protocol, {"jsonrpc": "2.0", "method": "textDocument/didOpen", "params": opened}))
    for version in range(2, 302):
        change = {"textDocument": {"uri": uri, "version": version}, "contentChanges": [{"text": f"x = {version}\n"}]}
        protocol.handle_message(_decoded(protocol, {"jsonrpc": "2.0", "method": "textDocument/didChange", "params": change}))
        await asyncio.sleep(0)
    await asyncio.sleep(0.2)
    assert instance.workspace.get_text_document(uri).source == "x = 301\n"
    assert len(protocol._request_futures) == 0


def test_invalid_requests_get_an_error_reply_and_stray_changes_no_popup(tmp_path: Path) -> None:
    change = {"textDocument": {"uri": (tmp_path / "never_opened.py").as_uri(), "version": 2}, "contentChanges": [{"text": "x"}]}
    bad_range = {"start": {"line": -1, "character": 0}, "end": {"line": 2**40, "character": 0}}
    action = {"textDocument": {"uri": (tmp_path / "a.py").as_uri()}, "range": bad_range, "context": {"diagnostics": []}}
    messages = [
        _frame(_initialize(tmp_path)),
        _frame({"jsonrpc": "2.0", "method": "initialized", "params": {}}),
        _frame({"jsonrpc": "2.0", "method": "textDocument/didChange", "params": change}),
        _frame({"jsonrpc": "2.0", "id": 2, "method": "textDocument/codeAction", "params": action}),
        _frame({"jsonrpc": "2.0", "id": 3, "method": "shutdown"}),
        _frame({"jsonrpc": "2.0", "method": "exit"}),
    ]
    completed = subprocess.run([sys.executable, "-m", "graphmend", "lsp"], input=b"".join(messages), capture_output=True, timeout=60)
    replies = _replies(completed.stdout)
    by_id = {r.get("id"): r for r in replies if "id" in r}
    assert by_id[2]["error"]["code"] == -32602  # InvalidParams, with the request's id
    assert "result" in by_id[3]  # and the server goes on
    assert not [r for r in replies if r.get("method") == "window/showMessage"], replies
