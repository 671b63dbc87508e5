"""What the editor supports, read once from its `initialize` request.

Handlers ask `ClientSupport` fields instead of walking `ClientCapabilities` by attribute paths on
every call: one place says which capability decides what, and a client that sends nothing gets a
value whose every answer is "not supported" (the protocol's default).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from lsprotocol import types


def _path(value: Any, *names: str) -> Any:
    """`value.a.b.c`, or None where a link is missing (capabilities are optional at every level)."""
    for name in names:
        if value is None:
            return None
        value = getattr(value, name, None)
    return value


@dataclass(frozen=True)
class ClientSupport:
    pull_diagnostics: bool = False  # textDocument/diagnostic
    diagnostic_refresh: bool = False  # workspace/diagnostic/refresh
    code_lens_refresh: bool = False  # workspace/codeLens/refresh
    watched_files_registration: bool = False  # didChangeWatchedFiles, registered dynamically
    configuration: bool = False  # workspace/configuration
    disabled_code_actions: bool = False  # CodeAction.disabled shown with its reason
    resolve_edit: bool = False  # a code action's edit fetched by codeAction/resolve
    work_done_progress: bool = False  # window/workDoneProgress/create
    document_changes: bool = False  # versioned edits in a WorkspaceEdit

    @classmethod
    def of(cls, capabilities: types.ClientCapabilities | None) -> ClientSupport:
        resolve = _path(capabilities, "text_document", "code_action", "resolve_support")
        return cls(
            pull_diagnostics=_path(capabilities, "text_document", "diagnostic") is not None,
            diagnostic_refresh=bool(_path(capabilities, "workspace", "diagnostics", "refresh_support")),
            code_lens_refresh=bool(_path(capabilities, "workspace", "code_lens", "refresh_support")),
            watched_files_registration=bool(_path(capabilities, "workspace", "did_change_watched_files", "dynamic_registration")),
            configuration=bool(_path(capabilities, "workspace", "configuration")),
            disabled_code_actions=bool(_path(capabilities, "text_document", "code_action", "disabled_support")),
            resolve_edit=resolve is not None and "edit" in (resolve.properties or []),
            work_done_progress=bool(_path(capabilities, "window", "work_done_progress")),
            document_changes=bool(_path(capabilities, "workspace", "workspace_edit", "document_changes")),
        )
