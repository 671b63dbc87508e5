"""The language server's pure parts: settings, positions, minimal edits, ignore comments."""

from __future__ import annotations

import ast
from pathlib import Path

from graphmend.findings import Finding, Span
from graphmend.lsp.convert import client_position
from graphmend.lsp.settings import Settings, parse_editor_settings
from graphmend.rewrite.suppress import suppression_edit
from graphmend.textedits import apply_edits, text_edits
from hypothesis import given
from hypothesis import strategies as st
from lsprotocol import types
from pygls.workspace.position_codec import PositionCodec


def test_settings_nested_or_flat_with_defaults_for_bad_values() -> None:
    parsed = parse_editor_settings({"graphmend": {"debounceMs": 20, "select": ["gm1"], "diagnosticMode": "sideways", "colour": 1}})
    assert parsed.settings.debounce_ms == 20 and parsed.settings.select == ("GM1",)
    assert parsed.settings.diagnostic_mode == Settings().diagnostic_mode
    assert any("`diagnosticMode` must be one of" in p for p in parsed.problems)
    assert any("unknown setting `colour`" in p for p in parsed.problems)
    assert parse_editor_settings({"crossFile": False}).settings.cross_file is False
    assert parse_editor_settings({"select": ["XY"]}).settings.select is None  # invalid: the pyproject value stays
    assert parse_editor_settings("nonsense").problems and parse_editor_settings(None).settings == Settings()


def test_later_settings_keep_earlier_values_they_do_not_mention() -> None:
    first = parse_editor_settings({"debounceMs": 10}).settings
    assert parse_editor_settings({"crossFile": False}, first).settings.debounce_ms == 10


def test_positions_count_in_the_negotiated_unit() -> None:
    lines = ['s = "é😀"; t = y.item()']
    column = lines[0].index("y.item()")
    assert client_position(PositionCodec(types.PositionEncodingKind.Utf32), lines, 1, column).character == column
    assert client_position(PositionCodec(types.PositionEncodingKind.Utf16), lines, 1, column).character == column + 1
    assert client_position(PositionCodec(types.PositionEncodingKind.Utf8), lines, 1, column).character == column + 4
    assert client_position(PositionCodec(), lines, 5, 0) == types.Position(line=0, character=len(lines[0]) + 1)


LINES = st.lists(st.sampled_from(["a", "b", "c", "", "x = 1"]), max_size=8)


@given(LINES, LINES, st.booleans(), st.booleans(), st.sampled_from(["\n", "\r\n"]))
def test_minimal_edits_turn_one_text_into_the_other(before: list[str], after: list[str], end1: bool, end2: bool, newline: str) -> None:
    old = newline.join(before) + (newline if end1 and before else "")
    new = newline.join(after) + (newline if end2 and after else "")
    assert apply_edits(old, text_edits(old, new)) == new


def _finding(line: int, code: str = "GM301") -> Finding:
    return Finding(code, Span(line, 4, line, 10), "message")


def test_ignore_comment_is_appended_or_merged_and_keeps_code_valid() -> None:
    text = "def f(x):\n    print(x)\n    y = x  # graphmend: ignore[GM101]\n"
    (added,) = [suppression_edit(text, _finding(2))]
    assert apply_edits(text, [added]).splitlines()[1] == "    print(x)  # graphmend: ignore[GM301]"
    merged = apply_edits(text, [suppression_edit(text, _finding(3))])
    assert merged.splitlines()[2] == "    y = x  # graphmend: ignore[GM101, GM301]"
    assert suppression_edit(merged, _finding(3)) is None  # already there


def test_ignore_comment_avoids_a_backslash_continuation() -> None:
    text = "def f(x):\n    y = x + \\\n        x\n    return y\n"
    finding = Finding("GM101", Span(2, 8, 3, 9), "message")
    edit = suppression_edit(text, finding)
    assert edit is not None and edit.span.start_line == 3
    ast.parse(apply_edits(text, [edit]))


def test_keys_editors_keep_for_themselves_are_not_reported() -> None:
    # VS Code sends the whole `graphmend` section, with the extension's own keys
    parsed = parse_editor_settings({"graphmend": {"python": "/venv/bin/python", "trace": {"server": "off"}, "debounceMs": 40}})
    assert parsed.problems == [] and parsed.settings.debounce_ms == 40


def test_confirmation_settings_are_validated() -> None:
    parsed = parse_editor_settings({"confirmTimeoutS": 0, "confirmDevice": "tpu", "confirmPython": "/venv/bin/python"})
    assert parsed.settings.confirm_timeout_s == 300 and parsed.settings.confirm_device == "auto"
    assert parsed.settings.confirm_python == "/venv/bin/python"
    assert any("confirmTimeoutS` must be a whole number from 1 to 86400" in p for p in parsed.problems)
    assert any("confirmDevice` must be one of 'auto', 'cpu', 'cuda'" in p for p in parsed.problems)


def test_quick_fix_level_setting_offers_each_tier_with_its_title() -> None:
    from graphmend.analysis import analyze_detailed
    from graphmend.config import Config
    from graphmend.lsp.actions import code_actions
    from graphmend.lsp.documents import Analysis
    from graphmend.rewrite.model import Safety
    from pygls.workspace.position_codec import PositionCodec

    assert parse_editor_settings({"quickFixLevel": "costly"}).settings.quick_fix_level is Safety.COSTLY
    bad = parse_editor_settings({"quickFixLevel": "yolo"})
    assert bad.settings.quick_fix_level is Settings().quick_fix_level and any("`quickFixLevel` must be one of" in p for p in bad.problems)

    source = (Path(__file__).parent / "fixtures" / "MoEDispatchFixer" / "hit_list.in.py").read_text(encoding="utf-8")
    result = analyze_detailed(source, "moe.py", keep_facts=True)
    analysis = Analysis("file:///moe.py", 1, source, result, result.findings, Config())
    line = next(f.span.start_line for f in result.findings if f.code == "GM202")

    def titles(level: Safety) -> list[str]:
        actions = code_actions(analysis, line, line, None, PositionCodec(), level=level, disabled_support=True, resolve_support=False, docs_url="", path="moe.py")
        return [a.title for a in actions]

    assert not any(t.startswith(("Costly:", "Unsafe:")) for t in titles(Safety.SAFE))
    assert any(t.startswith("Costly: Dispatch to every expert") for t in titles(Safety.COSTLY))
    assert any(t.startswith("Unsafe: Loop over every expert") for t in titles(Safety.UNSAFE))
    # a disabled "no safe rewrite" action says which tier would fix it and how to allow it
    safe = code_actions(analysis, line, line, None, PositionCodec(), level=Safety.SAFE, disabled_support=True, resolve_support=False, docs_url="", path="moe.py")
    reasons = [a.disabled.reason for a in safe if getattr(a, "disabled", None)]
    assert any('a costly fix exists' in r and '`quickFixLevel` setting ("costly")' in r for r in reasons), reasons


def test_settings_agree_across_the_server_the_extension_and_the_readme() -> None:
    """The server's settings are declared in lsp/settings.py; the VS Code extension declares them
    again for its settings UI and the README documents them. Every server key must appear in both,
    with the extension's default equal to the server's and its choices the server's choices, and
    neither may list a key the server does not know (it would be reported as unknown)."""
    import dataclasses
    import json
    import re
    from pathlib import Path

    from graphmend.lsp import settings as settings_module

    root = Path(__file__).resolve().parents[1]
    manifest = json.loads((root / "vscode-extension" / "package.json").read_text(encoding="utf-8"))
    configuration = manifest["contributes"]["configuration"]
    properties = (configuration if isinstance(configuration, dict) else configuration[0])["properties"]
    extension = {key.removeprefix("graphmend."): spec for key, spec in properties.items()}
    client_only = {key for key in extension if key.split(".")[0] in settings_module._CLIENT_KEYS}
    server = settings_module._KEYS
    assert set(extension) - client_only == set(server), "package.json and lsp/settings.py list different settings"
    defaults = {f.name: f.default for f in dataclasses.fields(settings_module.Settings)}
    for key, (field_name, _check) in server.items():
        default = defaults[field_name]
        default = default.value if hasattr(default, "value") else default
        default = list(default) if isinstance(default, tuple) else default
        if field_name == "jobs" or key in ("select", "ignore", "compileForward"):
            assert extension[key].get("default", None) in (default, None), key
        else:
            assert extension[key].get("default") == default, f"{key}: the extension's default differs from the server's"
        if "enum" in extension[key]:
            accepted = {v for v in extension[key]["enum"] if _accepted(server[key][1], v)}
            assert accepted == set(extension[key]["enum"]), f"{key}: the extension offers a choice the server rejects"
    readme = (root / "README.md").read_text(encoding="utf-8")
    table = set(re.findall(r"^\| `(\w+)`(?:, `(\w+)`)? \|", readme, re.MULTILINE))
    documented = {k for pair in table for k in pair if k}
    assert set(server) <= documented, f"settings missing from the README table: {sorted(set(server) - documented)}"


def _accepted(check: object, value: object) -> bool:
    try:
        check(value)  # type: ignore[operator]
    except ValueError:
        return False
    return True


def test_client_support_is_read_from_the_capabilities_the_client_sends() -> None:
    """What a client does not say it supports is not supported; resolving a code action counts
    only when the client resolves its edit."""
    from graphmend.lsp.capabilities import ClientSupport

    assert ClientSupport.of(None) == ClientSupport() == ClientSupport.of(types.ClientCapabilities())
    rich = types.ClientCapabilities(
        workspace=types.WorkspaceClientCapabilities(
            configuration=True,
            workspace_edit=types.WorkspaceEditClientCapabilities(document_changes=True),
            did_change_watched_files=types.DidChangeWatchedFilesClientCapabilities(dynamic_registration=True),
            diagnostics=types.DiagnosticWorkspaceClientCapabilities(refresh_support=True),
        ),
        text_document=types.TextDocumentClientCapabilities(
            diagnostic=types.DiagnosticClientCapabilities(),
            code_action=types.CodeActionClientCapabilities(
                disabled_support=True, resolve_support=types.ClientCodeActionResolveOptions(properties=["edit"])
            ),
        ),
        window=types.WindowClientCapabilities(work_done_progress=True),
    )
    support = ClientSupport.of(rich)
    assert support == ClientSupport(
        pull_diagnostics=True, diagnostic_refresh=True, code_lens_refresh=False, watched_files_registration=True, configuration=True,
        disabled_code_actions=True, resolve_edit=True, work_done_progress=True, document_changes=True,
    )  # fmt: skip
    title_only = types.CodeActionClientCapabilities(resolve_support=types.ClientCodeActionResolveOptions(properties=["title"]))
    assert not ClientSupport.of(types.ClientCapabilities(text_document=types.TextDocumentClientCapabilities(code_action=title_only))).resolve_edit


def test_a_slow_plan_answers_the_editor_without_it_and_a_quick_one_with_it() -> None:
    """The lightbulb and hover get an answer within their limit even where planning runs on (a
    bug, a pathological file): the default, while the work goes on in its thread."""
    import asyncio
    import threading
    import types as pytypes
    from concurrent.futures import ThreadPoolExecutor

    from graphmend.lsp.assist import within

    release = threading.Event()
    server = pytypes.SimpleNamespace(analysis_pool=ThreadPoolExecutor(max_workers=1))

    async def ask() -> tuple[object, object]:
        # the slow work ends only once released (after the answer) or after 10 s (giving False):
        # "default" can only come from the limit
        slow = await within(server, 0.2, "default", "planning", lambda: release.wait(10) and "planned")  # type: ignore[arg-type]
        release.set()
        quick = await within(server, 5.0, "default", "planning", lambda: "planned")  # type: ignore[arg-type]
        return slow, quick

    slow, quick = asyncio.run(ask())
    server.analysis_pool.shutdown(wait=True)
    assert (slow, quick) == ("default", "planned")
