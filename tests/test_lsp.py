"""The language server end to end (pytest-lsp): every test runs once per recorded client profile.

Pull clients must get diagnostics only by pulling and push clients only by push (VS Code lists a
problem twice otherwise). Code actions are asked for without `context.diagnostics`, as Neovim 0.7
does, so they must come from the server's own store.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
import pytest_lsp
from graphmend.rewrite import fix_source
from lsprotocol import types
from pytest_lsp import LanguageClient

from .lsp_client import (
    PROFILES,
    SERVER,
    apply_text_edits,
    capabilities,
    change_document,
    diagnostics,
    edits_for,
    open_document,
    pulls,
    wait_until,
)
from .samples import BRANCH_AND_PRINT

MODEL = BRANCH_AND_PRINT + '''

@torch.compile
def g(x):
    for _ in range(2):
        x = x + x.sum().item()
    return x
'''


@pytest_lsp.fixture(config=SERVER, params=PROFILES)
async def client(lsp_client: LanguageClient, request: pytest.FixtureRequest, tmp_path: Path):
    lsp_client.applied_edits = []
    lsp_client.refuse_edits = None  # a reason: the editor refuses every workspace edit with it
    lsp_client.profile = request.param
    lsp_client.workspace_path = tmp_path

    lsp_client.registrations = []

    @lsp_client.feature(types.CLIENT_REGISTER_CAPABILITY)
    def register(params: types.RegistrationParams) -> None:  # real clients answer this; pytest-lsp does not
        lsp_client.registrations.extend(params.registrations)

    @lsp_client.feature(types.WORKSPACE_APPLY_EDIT)
    def apply_edit(params: types.ApplyWorkspaceEditParams) -> types.ApplyWorkspaceEditResult:
        if lsp_client.refuse_edits is not None:
            return types.ApplyWorkspaceEditResult(applied=False, failure_reason=lsp_client.refuse_edits)
        lsp_client.applied_edits.append(params)
        return types.ApplyWorkspaceEditResult(applied=True)

    result = await lsp_client.initialize_session(
        types.InitializeParams(
            capabilities=capabilities(request.param),
            root_uri=tmp_path.as_uri(),
            workspace_folders=[types.WorkspaceFolder(uri=tmp_path.as_uri(), name="ws")],
        )
    )
    lsp_client.encoding = result.capabilities.position_encoding or types.PositionEncodingKind.Utf16
    lsp_client.server_capabilities_ = result.capabilities
    yield
    await lsp_client.shutdown_session()


async def _actions_at(client: LanguageClient, uri: str, line: int, character: int = 0, only: list[str] | None = None) -> list[types.CodeAction]:
    """Code actions at a position, asked for without diagnostics in the context (as Neovim 0.7)."""
    position = types.Position(line=line, character=character)
    return await client.text_document_code_action_async(
        types.CodeActionParams(
            text_document=types.TextDocumentIdentifier(uri=uri),
            range=types.Range(start=position, end=position),
            context=types.CodeActionContext(diagnostics=[], only=only),
        )
    )


def _write(client: LanguageClient, name: str, text: str) -> Path:
    path = client.workspace_path / name
    path.write_text(text, encoding="utf-8")
    return path


async def test_diagnostics_come_one_way_only_with_codes_links_and_related_loops(client: LanguageClient) -> None:
    pull = pulls(client.profile)
    assert (client.server_capabilities_.diagnostic_provider is not None) == pull
    uri = open_document(client, _write(client, "model.py", MODEL))
    found = await diagnostics(client, uri, pull, lambda d: len(d) >= 3)
    codes = [d.code for d in found]
    assert codes == ["GM101", "GM301", "GM201"]
    first = found[0]
    assert (first.range.start.line, first.range.start.character) == (6, 7)
    assert first.source == "graphmend" and first.severity == types.DiagnosticSeverity.Warning
    assert first.code_description is not None and first.code_description.href.endswith("#gm101-tensor-if")
    in_loop = found[2]
    assert in_loop.severity == types.DiagnosticSeverity.Error  # the whole function runs eagerly
    assert in_loop.related_information and in_loop.related_information[0].location.range.start.line == 16
    if pull:
        await asyncio.sleep(0.5)
        assert not client.diagnostics.get(uri), "a pull client was also sent pushed diagnostics"


async def test_quick_fix_without_context_diagnostics_rewrites_the_branch(client: LanguageClient) -> None:
    path = _write(client, "model.py", MODEL)
    uri = open_document(client, path)
    await diagnostics(client, uri, pulls(client.profile), lambda d: len(d) >= 3)
    actions = await _actions_at(client, uri, 6)
    titles = [a.title for a in actions]
    preferred = [a for a in actions if a.is_preferred]
    assert len(preferred) == 1 and preferred[0].title == "Select with torch.where instead of branching on a tensor (GM101)"
    assert "Ignore GM101 on this line" in titles
    fixed = apply_text_edits(MODEL, edits_for(preferred[0].edit, uri), client.encoding)
    assert fixed == fix_source(MODEL, str(path), codes=frozenset({"GM101"})).fixed


async def test_unsafe_quick_fix_says_what_changes_and_ignore_adds_a_comment(client: LanguageClient) -> None:
    pull = pulls(client.profile)
    uri = open_document(client, _write(client, "model.py", MODEL))
    await diagnostics(client, uri, pull, lambda d: len(d) >= 3)
    actions = await _actions_at(client, uri, 10, 4)
    unsafe = next(a for a in actions if a.title.startswith("Unsafe: "))
    assert "only outside torch.compile" in unsafe.title and not unsafe.is_preferred
    ignore = next(a for a in actions if a.title == "Ignore GM301 on this line")
    ignored = apply_text_edits(MODEL, edits_for(ignore.edit, uri), client.encoding)
    assert '    print("done", *z.shape)  # graphmend: ignore[GM301]\n' in ignored
    change_document(client, uri, ignored, 2)
    found = await diagnostics(client, uri, pull, lambda d: "GM301" not in [x.code for x in d])
    assert [d.code for d in found] == ["GM101", "GM201"]


async def test_a_finding_without_a_fix_says_why(client: LanguageClient) -> None:
    """`g`'s `.item()` has no fix (its dtype is unknown): VS Code shows the reason on a disabled
    action; clients without disabled actions list an action whose command shows it."""
    uri = open_document(client, _write(client, "model.py", MODEL))
    await diagnostics(client, uri, pulls(client.profile), lambda d: len(d) >= 3)
    actions = await _actions_at(client, uri, 17, 20)
    why = [a for a in actions if a.title.startswith("GraphMend: ") and "GM201" in a.title]
    assert len(why) == 1, [a.title for a in actions]
    if client.profile.startswith("visual_studio_code"):
        assert why[0].disabled is not None and "dtype" in why[0].disabled.reason
        return
    (command,) = why
    assert isinstance(command, types.Command)
    await client.workspace_execute_command_async(types.ExecuteCommandParams(command=command.command, arguments=command.arguments))
    shown = await wait_until(lambda: [m.message for m in client.messages if m.message.startswith("GraphMend: GM201:")] or None)
    assert "dtype" in shown[0]


async def test_fix_all_applies_every_safe_fix_of_the_file(client: LanguageClient) -> None:
    path = _write(client, "model.py", MODEL)
    uri = open_document(client, path)
    await diagnostics(client, uri, pulls(client.profile), lambda d: len(d) >= 3)
    actions = await _actions_at(client, uri, 0, only=[types.CodeActionKind.SourceFixAll])
    (fix_all,) = actions
    assert fix_all.kind == "source.fixAll.graphmend"
    fixed = apply_text_edits(MODEL, edits_for(fix_all.edit, uri), client.encoding)
    assert fixed == fix_source(MODEL, str(path)).fixed
    assert 'print("done", *z.shape)' in fixed  # unsafe fixes are never part of fix-all


async def test_positions_are_in_the_negotiated_encoding(client: LanguageClient) -> None:
    text = MODEL.replace('    if y.sum() > 0:', '    s = "é😀"; t = y.sum().item()\n    if y.sum() > 0:')
    uri = open_document(client, _write(client, "wide.py", text))
    found = await diagnostics(client, uri, pulls(client.profile), lambda d: any(x.code == "GM201" and x.range.start.line == 6 for x in d))
    item = next(d for d in found if d.code == "GM201" and d.range.start.line == 6)
    line = text.split("\n")[6]
    start = line.index("y.sum().item()")
    from .lsp_client import units

    assert item.range.start.character == units(line[:start], client.encoding)
    assert item.range.end.character == units(line[: start + len("y.sum().item()")], client.encoding)


async def test_half_typed_code_shows_the_syntax_error_and_keeps_the_findings(client: LanguageClient) -> None:
    pull = pulls(client.profile)
    uri = open_document(client, _write(client, "model.py", MODEL))
    await diagnostics(client, uri, pull, lambda d: len(d) >= 3)
    broken = MODEL.replace("    return z\n", "    return z +\n")
    change_document(client, uri, broken, 2)
    found = await diagnostics(client, uri, pull, lambda d: "GM000" in [x.code for x in d])
    assert [d.code for d in found] == ["GM000", "GM101", "GM301", "GM201"]
    change_document(client, uri, MODEL, 3)
    found = await diagnostics(client, uri, pull, lambda d: "GM000" not in [x.code for x in d])
    assert [d.code for d in found] == ["GM101", "GM301", "GM201"]


async def test_a_burst_of_edits_ends_with_the_last_version(client: LanguageClient) -> None:
    pull = pulls(client.profile)
    uri = open_document(client, _write(client, "model.py", MODEL))
    await diagnostics(client, uri, pull, lambda d: len(d) >= 3)
    for version in range(2, 302):  # 300 keystrokes, no pause
        text = MODEL.replace('print("done", *z.shape)', f'print("done {version}")') if version % 2 else MODEL.replace('    print("done", *z.shape)\n', "")
        change_document(client, uri, text, version)
    # the last version (301) keeps the print: three findings again, and the server still answers
    found = await diagnostics(client, uri, pull, lambda d: [x.code for x in d] == ["GM101", "GM301", "GM201"] and "done 301" in d[1].message)
    assert len(found) == 3
    if not pull:
        await asyncio.sleep(0.3)  # nothing stale arrives after the last version
        assert list(client.diagnostics[uri]) == found


async def test_settings_are_validated_and_applied(client: LanguageClient) -> None:
    pull = pulls(client.profile)
    uri = open_document(client, _write(client, "model.py", MODEL))
    await diagnostics(client, uri, pull, lambda d: len(d) >= 3)
    client.workspace_did_change_configuration(
        types.DidChangeConfigurationParams(settings={"graphmend": {"ignore": ["GM3"], "debounceMs": "fast", "colour": 1}})
    )
    found = await diagnostics(client, uri, pull, lambda d: "GM301" not in [x.code for x in d])
    assert [d.code for d in found] == ["GM101", "GM201"]
    messages = await wait_until(lambda: [m.message for m in client.messages if "debounceMs" in m.message or "colour" in m.message] or None)
    assert any("`debounceMs` must be a whole number" in m and "using the default (50)" in m for m in messages)
    assert any("unknown setting `colour`" in m for m in messages)


async def test_pyproject_changes_are_picked_up(client: LanguageClient) -> None:
    pull = pulls(client.profile)
    uri = open_document(client, _write(client, "model.py", MODEL))
    await diagnostics(client, uri, pull, lambda d: len(d) >= 3)
    pyproject = _write(client, "pyproject.toml", '[tool.graphmend]\nignore = ["GM101"]\n')
    client.workspace_did_change_watched_files(
        types.DidChangeWatchedFilesParams(changes=[types.FileEvent(uri=pyproject.as_uri(), type=types.FileChangeType.Created)])
    )
    found = await diagnostics(client, uri, pull, lambda d: "GM101" not in [x.code for x in d])
    assert [d.code for d in found] == ["GM301", "GM201"]
    _write(client, "pyproject.toml", '[tool.graphmend]\nignore = ["XX1"]\n')
    client.workspace_did_change_watched_files(
        types.DidChangeWatchedFilesParams(changes=[types.FileEvent(uri=pyproject.as_uri(), type=types.FileChangeType.Changed)])
    )
    await wait_until(lambda: any("XX1" in m.message and "pyproject.toml" in m.message for m in client.messages))


async def test_mend_workspace_fixes_open_and_closed_files_through_one_edit(client: LanguageClient) -> None:
    import subprocess

    root = client.workspace_path
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    marker = root.parent / f"{root.name}-fsmonitor-ran"  # git runs this program from the repo's config
    subprocess.run(["git", "-C", str(root), "config", "core.fsmonitor", f"touch {marker}; echo"], check=True)
    (root / ".gitignore").write_text("generated/\n", encoding="utf-8")
    (root / "generated").mkdir()
    (root / "generated" / "skipped.py").write_text(MODEL, encoding="utf-8")
    (root / "vendor").mkdir()
    (root / "vendor" / "third_party.py").write_text(MODEL, encoding="utf-8")
    (root / "latin1.py").write_bytes(b"# \xe9\nimport torch\n")
    closed = _write(client, "closed.py", MODEL)
    opened = _write(client, "opened.py", MODEL)
    unsaved = MODEL.replace("z = y + 1", "z = y + 2")
    opened_uri = open_document(client, opened, unsaved, version=7)
    client.workspace_did_change_configuration(types.DidChangeConfigurationParams(settings={"graphmend": {"exclude": ["vendor/**"]}}))
    await asyncio.sleep(0.2)
    result = await client.workspace_execute_command_async(types.ExecuteCommandParams(command="graphmend.mendWorkspace", arguments=[]))
    versioned = bool(client.capabilities.workspace and client.capabilities.workspace.workspace_edit and client.capabilities.workspace.workspace_edit.document_changes)
    if not versioned:
        # an open buffer is left to its own fix-all: an unversioned edit could land on newer text
        assert result["applied"] is True and result["changed"] == 1 and result["fixed"] == 1
        assert any("opened.py" in s and "versioned edits" in s for s in result["skipped"])
        (params,) = client.applied_edits
        assert list(params.edit.changes) == [closed.as_uri()]  # type: ignore[arg-type]
        return
    assert result["applied"] is True and result["changed"] == 2 and result["fixed"] == 2
    # per file: g's `.item()` stays (x's dtype is unknown), the print has only an unsafe fix
    assert result["declined"] == {"dtype-unknown": 2, "starred-argument": 2} and result["left"] == 4
    assert any("latin1.py" in s and "UTF-8" in s for s in result["skipped"])
    (params,) = client.applied_edits
    assert params.label == "GraphMend: mend workspace"
    edit = params.edit
    touched = sorted(
        [c.text_document.uri for c in edit.document_changes] if edit.document_changes else list(edit.changes)  # type: ignore[union-attr]
    )
    assert touched == sorted([closed.as_uri(), opened_uri])
    if edit.document_changes:
        versions = {c.text_document.uri: c.text_document.version for c in edit.document_changes}  # type: ignore[union-attr]
        assert versions == {opened_uri: 7, closed.as_uri(): None}
    assert apply_text_edits(unsaved, edits_for(edit, opened_uri), client.encoding) == fix_source(unsaved, str(opened)).fixed
    assert apply_text_edits(MODEL, edits_for(edit, closed.as_uri()), client.encoding) == fix_source(MODEL, str(closed)).fixed
    if client.capabilities.window and client.capabilities.window.work_done_progress:
        (reports,) = client.progress_reports.values()
        assert reports[0].kind == "begin" and reports[0].cancellable and reports[-1].kind == "end"
        assert "fixed 2 graph breaks in 2 files" in reports[-1].message
    assert any("GraphMend: fixed 2 graph breaks" in m.message for m in client.messages)
    assert not marker.exists()  # opening a workspace never runs its code


async def test_a_refused_mend_says_nothing_was_changed(client: LanguageClient) -> None:
    _write(client, "model.py", MODEL)
    client.refuse_edits = "the file is read-only"
    result = await client.workspace_execute_command_async(types.ExecuteCommandParams(command="graphmend.mendWorkspace", arguments=[]))
    assert result["applied"] is False and result["fixed"] == 0 and result["changed"] == 0
    shown = await wait_until(lambda: [m.message for m in client.messages if "mend" in m.message])
    assert "did not apply the mend (the file is read-only); no file was changed" in shown[-1]
    assert "GraphMend: fixed" not in shown[-1]


async def test_check_workspace_reports_closed_files(client: LanguageClient) -> None:
    closed = _write(client, "closed.py", MODEL)
    _write(client, "clean.py", "import torch\n\n\n@torch.compile\ndef f(x):\n    return x * 2\n")
    opened_uri = open_document(client, _write(client, "opened.py", MODEL))
    result = await client.workspace_execute_command_async(types.ExecuteCommandParams(command="graphmend.checkWorkspace", arguments=[]))
    assert result["files"] == 2 and result["files_with_findings"] == 1 and result["findings"] == 3
    pushed = await wait_until(lambda: client.diagnostics.get(closed.as_uri()))
    assert [d.code for d in pushed] == ["GM101", "GM301", "GM201"]
    if pulls(client.profile):
        await asyncio.sleep(0.3)
        assert not client.diagnostics.get(opened_uri), "an open document of a pull client got pushed diagnostics"


async def test_a_file_above_max_file_bytes_is_reported_not_analysed(client: LanguageClient) -> None:
    _write(client, "pyproject.toml", "[tool.graphmend]\nmax-file-bytes = 1000\n")
    big = MODEL + "\n" + "\n".join(f"v{i} = {i}" for i in range(400)) + "\n"
    uri = open_document(client, _write(client, "big.py", big))
    message = await wait_until(lambda: [m.message for m in client.messages if "max-file-bytes" in m.message])
    assert "big.py" in message[0] and "not analysed" in message[0]
    if pulls(client.profile):
        found = await diagnostics(client, uri, True)
        assert found == []


HELPERS = '''import torch


def scale(x):
    if x.sum() > 0:
        return x * 2
    return x


def unused(x):
    if x.sum() > 0:
        return x * 2
    return x
'''
CALLER = '''import torch

from helpers import scale


@torch.compile
def f(x):
    return scale(x) + 1
'''


async def test_a_helper_called_from_compiled_code_in_another_file_is_analysed(client: LanguageClient) -> None:
    pull = pulls(client.profile)
    helpers_uri = open_document(client, _write(client, "helpers.py", HELPERS))
    information = types.DiagnosticSeverity.Information
    # nothing compiled calls them yet: each is a break only if it is compiled
    before = await diagnostics(client, helpers_uri, pull, lambda d: len(d) > 0)
    assert [(d.code, d.range.start.line, d.severity) for d in before] == [("GM101", 4, information), ("GM101", 10, information)]
    assert "Nothing GraphMend sees compiles `scale`" in before[0].message
    open_document(client, _write(client, "model.py", CALLER))
    found = await diagnostics(client, helpers_uri, pull, lambda d: any(x.severity != information for x in d))
    # in scale, compiled now; unused still only if compiled
    assert [(d.code, d.range.start.line, d.severity) for d in found] == [("GM101", 4, types.DiagnosticSeverity.Warning), ("GM101", 10, information)]


async def test_a_function_nothing_compiles_can_be_named_compiled_from_its_diagnostic(client: LanguageClient) -> None:
    """The quick fix on an "if compiled" finding adds the function to `[tool.graphmend] compiled`;
    once the pyproject.toml is saved, the finding is an ordinary one."""
    pull = pulls(client.profile)
    pyproject = _write(client, "pyproject.toml", '[project]\nname = "demo"\n')
    uri = open_document(client, _write(client, "helpers.py", HELPERS))
    await diagnostics(client, uri, pull, lambda d: len(d) == 2)
    actions = await _actions_at(client, uri, 4, 8)
    [named] = [a for a in actions if isinstance(a, types.CodeAction) and a.title.startswith("Treat `scale` as compiled")]
    assert named.edit is not None
    text = apply_text_edits(pyproject.read_text(encoding="utf-8"), edits_for(named.edit, pyproject.as_uri()), client.encoding)
    assert text == '[project]\nname = "demo"\n\n[tool.graphmend]\ncompiled = ["helpers.py:scale"]\n'
    pyproject.write_text(text, encoding="utf-8")
    client.workspace_did_change_watched_files(
        types.DidChangeWatchedFilesParams(changes=[types.FileEvent(uri=pyproject.as_uri(), type=types.FileChangeType.Changed)])
    )
    information = types.DiagnosticSeverity.Information
    found = await diagnostics(client, uri, pull, lambda d: any(x.severity != information for x in d))
    assert [(d.code, d.range.start.line, d.severity) for d in found] == [("GM101", 4, types.DiagnosticSeverity.Warning), ("GM101", 10, information)]


DECORATOR = '''import functools


def capture(func):
    @functools.wraps(func)
    def wrapper(self, *args, **kwargs):
        flags = {k: kwargs.get(k, getattr(self, k, False)) for k in self.names}
        try:
            out = func(self, *args, **kwargs)
        finally:
            pass
        return out, flags

    return wrapper
'''
DECORATED = '''from torch import nn

from deco import capture


class Model(nn.Module):
    @capture
    def forward(self, x):
        print("forward")
        return x * 2
'''


async def test_a_decorator_in_another_file_has_its_wrapper_analysed(client: LanguageClient) -> None:
    """transformers' `@capture_outputs`: the wrapper is compiled, and runs eagerly when the
    forward it wraps breaks inside its `try` (GM519 on its comprehension)."""
    pull = pulls(client.profile)
    deco_uri = open_document(client, _write(client, "deco.py", DECORATOR))
    assert await diagnostics(client, deco_uri, pull) == []  # no compiled function uses it yet
    open_document(client, _write(client, "model.py", DECORATED))
    found = await diagnostics(client, deco_uri, pull, lambda d: len(d) > 0)
    assert [(d.code, d.range.start.line) for d in found] == [("GM519", 6)]


async def test_a_disable_alias_re_exported_in_the_package_is_seen(client: LanguageClient) -> None:
    """timm's shape, with only the model file open: `disable_compiler` is bound in `layers/_fx.py`
    and re-exported by `layers/__init__.py`; the server reads those modules (never runs them), so
    the call of the decorated method is the break (GM502), not the never-traced `nonzero` in it."""
    for name, text in (
        ("pkg/__init__.py", ""),
        ("pkg/layers/_fx.py", "import torch\n\n\ndef nullwrap(fn=None):\n    return fn\n\n\n"
         'disable_compiler = getattr(getattr(torch, "compiler", None), "disable", None) or nullwrap\n'),
        ("pkg/layers/__init__.py", "from ._fx import disable_compiler\n"),
    ):
        (client.workspace_path / name).parent.mkdir(parents=True, exist_ok=True)
        (client.workspace_path / name).write_text(text, encoding="utf-8")
    model = (
        "from torch import nn\n\nfrom .layers import disable_compiler\n\n\nclass Net(nn.Module):\n"
        "    @disable_compiler\n    def pack(self, x):\n        return x.nonzero()\n\n"
        "    def forward(self, x):\n        return self.pack(x).sum() + x.sum()\n"
    )
    uri = open_document(client, _write(client, "pkg/model.py", model))
    found = await diagnostics(client, uri, pulls(client.profile), lambda d: len(d) > 0)
    assert [(d.code, d.range.start.line) for d in found] == [("GM502", 11)]


async def test_the_lightbulb_fix_all_is_resolved_only_when_chosen(client: LanguageClient) -> None:
    path = _write(client, "model.py", MODEL)
    uri = open_document(client, path)
    await diagnostics(client, uri, pulls(client.profile), lambda d: len(d) >= 3)
    actions = await _actions_at(client, uri, 6)
    (fix_all,) = [a for a in actions if a.kind == "source.fixAll.graphmend"]
    if fix_all.edit is None:  # clients that resolve edits lazily get it on request
        support = client.capabilities.text_document.code_action.resolve_support
        assert support is not None and "edit" in support.properties
        fix_all = await client.code_action_resolve_async(fix_all)
    assert apply_text_edits(MODEL, edits_for(fix_all.edit, uri), client.encoding) == fix_source(MODEL, str(path)).fixed


async def test_hover_explains_the_finding_its_fix_and_dynamos_break_id(client: LanguageClient) -> None:
    uri = open_document(client, _write(client, "model.py", MODEL))
    await diagnostics(client, uri, pulls(client.profile), lambda d: len(d) >= 3)
    assert client.server_capabilities_.hover_provider

    async def hover(line: int, character: int) -> types.Hover | None:
        position = types.Position(line=line, character=character)
        return await client.text_document_hover_async(types.HoverParams(text_document=types.TextDocumentIdentifier(uri=uri), position=position))

    branch = await hover(6, 10)  # inside `y.sum() > 0`
    assert branch is not None and isinstance(branch.contents, types.MarkupContent)
    text = branch.contents.value
    assert text.startswith("**GM101 tensor-if**") and "**Why it breaks:**" in text
    assert "**Safe fix**" in text and "torch.where" in text
    assert "[GB0170 Data-dependent branching](https://meta-pytorch.org/compile-graph-break-site/gb/gb0170.html)" in text
    assert branch.range is not None and branch.range.start.line == 6

    item = await hover(17, 20)  # `.item()` in g's loop: no fix, and the reason says why
    assert item is not None and isinstance(item.contents, types.MarkupContent)
    assert "GM201" in item.contents.value and "**No safe fix:**" in item.contents.value and "dtype" in item.contents.value
    assert "GB0124" in item.contents.value

    assert await hover(0, 3) is None  # `import torch`: nothing to explain


NOTEBOOK_CELLS = [
    "%matplotlib inline\nimport torch",
    "@torch.compile\ndef f(x):\n    y = x * 2\n    if y.sum() > 0:\n        y = y + 1\n    else:\n        y = y - 1\n    return y",
    "!nvidia-smi\nf(torch.randn(3))",
]


async def test_notebook_cells_are_analysed_together_and_shown_per_cell(client: LanguageClient) -> None:
    """VS Code syncs notebooks as notebook documents: the cells form one module (torch is
    imported in cell 1, used in cell 2); each cell gets its findings at its own lines, its quick
    fix and hover."""
    if not client.profile.startswith("visual_studio_code"):
        pytest.skip("only VS Code syncs notebook documents")
    assert client.server_capabilities_.notebook_document_sync is not None
    notebook_uri = (client.workspace_path / "train.ipynb").as_uri()
    cells = [f"vscode-notebook-cell:{client.workspace_path / 'train.ipynb'}#cell{n}" for n in range(len(NOTEBOOK_CELLS))]
    client.notebook_document_did_open(
        types.DidOpenNotebookDocumentParams(
            notebook_document=types.NotebookDocument(
                uri=notebook_uri,
                notebook_type="jupyter-notebook",
                version=1,
                cells=[types.NotebookCell(kind=types.NotebookCellKind.Code, document=uri) for uri in cells],
            ),
            cell_text_documents=[
                types.TextDocumentItem(uri=uri, language_id="python", version=1, text=text) for uri, text in zip(cells, NOTEBOOK_CELLS)
            ],
        )
    )
    found = await diagnostics(client, cells[1], pulls(client.profile), lambda d: len(d) >= 1)
    assert [(d.code, d.range.start.line, d.range.start.character) for d in found] == [("GM101", 3, 7)]
    assert not await diagnostics(client, cells[0], pulls(client.profile)) and not await diagnostics(client, cells[2], pulls(client.profile))

    actions = await _actions_at(client, cells[1], 3)
    preferred = [a for a in actions if a.is_preferred]
    assert len(preferred) == 1 and preferred[0].title.startswith("Select with torch.where")
    fixed = apply_text_edits(NOTEBOOK_CELLS[1], edits_for(preferred[0].edit, cells[1]), client.encoding)
    assert "    y = torch.where(y.sum() > 0, y + 1, y - 1)\n" in fixed

    hover = await client.text_document_hover_async(
        types.HoverParams(text_document=types.TextDocumentIdentifier(uri=cells[1]), position=types.Position(line=3, character=9))
    )
    assert hover is not None and "GB0170" in hover.contents.value  # type: ignore[union-attr]
