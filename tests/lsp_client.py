"""Helpers for the pytest-lsp tests: client capability profiles, a workspace on disk, waiting for
the server, and applying the edits it sends back the way an editor would."""

from __future__ import annotations

import asyncio
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest_lsp
from lsprotocol import types
from pytest_lsp import ClientServerConfig, LanguageClient

SERVER = ClientServerConfig(server_command=[sys.executable, "-m", "graphmend", "lsp"])

# Recorded capabilities of real clients (pytest-lsp ships them). VS Code 1.65 predates pull
# diagnostics, so a pull variant of it stands for today's VS Code; Neovim 0.11 pulls, 0.7 does not.
PROFILES = ["visual_studio_code", "visual_studio_code+pull", "neovim@v0.7.0", "neovim@v0.11.0", "emacs"]


def capabilities(profile: str) -> types.ClientCapabilities:
    name, _, extra = profile.partition("+")
    caps = pytest_lsp.client_capabilities(name)
    if name == "visual_studio_code" and caps.notebook_document is None:
        # the recorded VS Code (1.65) predates notebook sync; today's client (vscode-languageclient 9+)
        # sends this when a selector names notebooks, as the extension's does
        caps.notebook_document = types.NotebookDocumentClientCapabilities(
            synchronization=types.NotebookDocumentSyncClientCapabilities(dynamic_registration=True, execution_summary_support=True)
        )
    if extra == "pull":
        caps.text_document.diagnostic = types.DiagnosticClientCapabilities(dynamic_registration=True, related_document_support=False)
        caps.workspace.diagnostics = types.DiagnosticWorkspaceClientCapabilities(refresh_support=True)
    return caps


def pulls(profile: str) -> bool:
    return capabilities(profile).text_document.diagnostic is not None


async def wait_until(predicate: Callable[[], Any], timeout: float = 20.0, interval: float = 0.02) -> Any:
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError("timed out waiting for the server")
        await asyncio.sleep(interval)


def open_document(client: LanguageClient, path: Path, text: str | None = None, version: int = 1) -> str:
    uri = path.as_uri()
    client.text_document_did_open(
        types.DidOpenTextDocumentParams(
            text_document=types.TextDocumentItem(uri=uri, language_id="python", version=version, text=text if text is not None else path.read_text(encoding="utf-8"))
        )
    )
    return uri


def change_document(client: LanguageClient, uri: str, text: str, version: int) -> None:
    client.text_document_did_change(
        types.DidChangeTextDocumentParams(
            text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=version),
            content_changes=[types.TextDocumentContentChangeWholeDocument(text=text)],
        )
    )


async def diagnostics(client: LanguageClient, uri: str, pull: bool, expect: Callable[[list[types.Diagnostic]], bool] | None = None) -> list[types.Diagnostic]:
    """The document's diagnostics as the client gets them (pulled, or pushed), waiting until
    `expect` accepts them."""
    expect = expect or (lambda found: True)
    if pull:
        async def pulled() -> list[types.Diagnostic] | None:
            report = await client.text_document_diagnostic_async(types.DocumentDiagnosticParams(text_document=types.TextDocumentIdentifier(uri=uri)))
            items = list(report.items)  # type: ignore[union-attr]
            return items if expect(items) else None

        deadline = time.monotonic() + 20
        while True:
            found = await pulled()
            if found is not None:
                return found
            if time.monotonic() > deadline:
                raise AssertionError("pulled diagnostics never matched")
            await asyncio.sleep(0.05)

    def pushed() -> tuple[list[types.Diagnostic]] | None:
        if uri not in client.diagnostics:
            return None
        found = list(client.diagnostics[uri])
        return (found,) if expect(found) else None  # a tuple: an empty list is a valid answer

    (found,) = await wait_until(pushed)
    return found


def units(text: str, encoding: str) -> int:
    if encoding == types.PositionEncodingKind.Utf8:
        return len(text.encode("utf-8"))
    if encoding == types.PositionEncodingKind.Utf32:
        return len(text)
    return len(text.encode("utf-16-le")) // 2


def offset(text: str, position: types.Position, encoding: str) -> int:
    lines = text.split("\n")
    before = sum(len(line) + 1 for line in lines[: position.line])
    line = lines[position.line] if position.line < len(lines) else ""
    count = 0
    for index, char in enumerate(line):
        if count >= position.character:
            return before + index
        count += units(char, encoding)
    return before + len(line)


def apply_text_edits(text: str, edits: list[types.TextEdit], encoding: str = "utf-16") -> str:
    spans = sorted(((offset(text, e.range.start, encoding), offset(text, e.range.end, encoding), e.new_text) for e in edits), reverse=True)
    for start, end, new in spans:
        text = text[:start] + new + text[end:]
    return text


def edits_for(edit: types.WorkspaceEdit, uri: str) -> list[types.TextEdit]:
    if edit.document_changes:
        return [e for change in edit.document_changes if isinstance(change, types.TextDocumentEdit) and change.text_document.uri == uri for e in change.edits]  # type: ignore[misc]
    return list((edit.changes or {}).get(uri, []))
