"""How responsive is `graphmend lsp`? Prints numbers; asserts nothing.

    .venv/bin/python bench/lsp_latency.py [--edits 40] [--actions 30] [--mend PATH]

Starts the real server over stdio with pygls' client and measures, on the transformers modeling
file closest to 3,000 lines:
1. edit -> fresh diagnostics: a keystroke is sent as an incremental `didChange`; the clock stops when the
   diagnostics *for that version* arrive (push client) or when `textDocument/diagnostic` sent right
   after the edit answers (pull client, as VS Code does). Includes the 75 ms debounce.
2. code action latency at a line with a rewritable finding (the quick fix is planned with libcst)
   and at a line without one.
3. "mend whole workspace" over a directory (default: the installed transformers models/), with a
   client that accepts the edit: wall time from the request to the answer.
Edits are spaced 250 ms apart, like a person typing in bursts; p50/p95 over all of them.
"""

from __future__ import annotations

import argparse
import asyncio
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

from lsprotocol import types
from pygls.lsp.client import LanguageClient

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "server"))

from graphmend import analyze  # noqa: E402


def model_file() -> Path:
    import transformers

    models = Path(transformers.__file__).parent / "models"
    candidates = sorted(models.rglob("modeling_*.py"), key=lambda p: abs(len(p.read_text(encoding="utf-8").splitlines()) - 3000))
    return candidates[0]


def percentiles(samples: list[float]) -> str:
    ordered = sorted(samples)
    p95 = ordered[min(len(ordered) - 1, int(round(0.95 * (len(ordered) - 1))))]
    return f"p50 {statistics.median(ordered) * 1000:6.1f} ms   p95 {p95 * 1000:6.1f} ms   (n={len(ordered)})"


OPTIONS: dict = {}


async def start(pull: bool, root: Path) -> tuple[LanguageClient, dict]:
    client = LanguageClient("graphmend-bench", "1")
    state: dict = {"published": {}, "by_uri": {}, "errors": [], "event": asyncio.Event()}

    @client.feature(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
    def published(params: types.PublishDiagnosticsParams) -> None:
        now = time.perf_counter()
        state["published"][params.version] = now
        state["by_uri"].setdefault(params.uri, {})[params.version] = now
        state["event"].set()

    @client.feature(types.WINDOW_SHOW_MESSAGE)
    def shown(params: types.ShowMessageParams) -> None:
        if params.type == types.MessageType.Error:
            state["errors"].append(params.message)

    @client.feature(types.WORKSPACE_APPLY_EDIT)
    def apply_edit(params: types.ApplyWorkspaceEditParams) -> types.ApplyWorkspaceEditResult:
        return types.ApplyWorkspaceEditResult(applied=True)

    for method in (types.WINDOW_LOG_MESSAGE, types.PROGRESS):
        client.feature(method)(lambda params: None)
    client.feature(types.WINDOW_WORK_DONE_PROGRESS_CREATE)(lambda params: None)
    client.feature(types.CLIENT_REGISTER_CAPABILITY)(lambda params: None)
    client.feature(types.WORKSPACE_CONFIGURATION)(lambda params: [None for _ in params.items])

    await client.start_io(sys.executable, "-m", "graphmend", "lsp")
    capabilities = types.ClientCapabilities(
        text_document=types.TextDocumentClientCapabilities(
            diagnostic=types.DiagnosticClientCapabilities() if pull else None,
            publish_diagnostics=types.PublishDiagnosticsClientCapabilities(version_support=True),
        ),
        window=types.WindowClientCapabilities(work_done_progress=True),
        workspace=types.WorkspaceClientCapabilities(workspace_edit=types.WorkspaceEditClientCapabilities(document_changes=True)),
    )
    await client.initialize_async(
        types.InitializeParams(
            capabilities=capabilities,
            root_uri=root.as_uri(),
            workspace_folders=[types.WorkspaceFolder(uri=root.as_uri(), name=root.name)],
            initialization_options=OPTIONS or None,
        )
    )
    client.initialized(types.InitializedParams())
    return client, state


async def stop(client: LanguageClient) -> None:
    await client.shutdown_async(None)
    client.exit(None)
    await client.stop()


def keystroke(text: str, version: int) -> types.TextDocumentContentChangePartial:
    """One keystroke, sent incrementally as editors do: a character typed into a comment line
    appended at the end of the file."""
    last = len(text.split("\n")) - 1  # the empty line after the final newline
    column = version - 2
    position = types.Position(line=last, character=column)
    return types.TextDocumentContentChangePartial(range=types.Range(start=position, end=position), text="#" if version == 2 else "x")


async def edit_latency(path: Path, edits: int, pull: bool) -> list[float]:
    client, state = await start(pull, path.parent)
    uri = path.as_uri()
    text = path.read_text(encoding="utf-8")
    client.text_document_did_open(types.DidOpenTextDocumentParams(text_document=types.TextDocumentItem(uri=uri, language_id="python", version=1, text=text)))
    if pull:
        await client.text_document_diagnostic_async(types.DocumentDiagnosticParams(text_document=types.TextDocumentIdentifier(uri=uri)))
    else:
        while 1 not in state["published"]:
            await asyncio.sleep(0.01)
    samples: list[float] = []
    for version in range(2, edits + 2):
        await asyncio.sleep(0.25)
        started = time.perf_counter()
        client.text_document_did_change(
            types.DidChangeTextDocumentParams(
                text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=version),
                content_changes=[keystroke(text, version)],
            )
        )
        if pull:
            await client.text_document_diagnostic_async(types.DocumentDiagnosticParams(text_document=types.TextDocumentIdentifier(uri=uri)))
            samples.append(time.perf_counter() - started)
        else:
            while version not in state["published"]:
                await asyncio.sleep(0.002)
            samples.append(state["published"][version] - started)
    await stop(client)
    return samples


async def action_latency(path: Path, requests: int) -> tuple[list[float], list[float], int]:
    client, state = await start(False, path.parent)
    uri = path.as_uri()
    text = path.read_text(encoding="utf-8")
    client.text_document_did_open(types.DidOpenTextDocumentParams(text_document=types.TextDocumentItem(uri=uri, language_id="python", version=1, text=text)))
    while 1 not in state["published"]:
        await asyncio.sleep(0.01)
    findings = analyze(text, str(path))
    fixable_line = next((f.span.start_line for f in findings if f.code == "GM101"), findings[0].span.start_line if findings else 1)
    quiet_line = next(n for n in range(1, len(text.splitlines())) if all(not f.span.contains_line(n) for f in findings))
    timings: dict[int, list[float]] = {fixable_line: [], quiet_line: []}
    count = 0
    for _ in range(requests):
        for line in (fixable_line, quiet_line):
            position = types.Position(line=line - 1, character=0)
            started = time.perf_counter()
            actions = await client.text_document_code_action_async(
                types.CodeActionParams(
                    text_document=types.TextDocumentIdentifier(uri=uri),
                    range=types.Range(start=position, end=position),
                    context=types.CodeActionContext(diagnostics=[]),
                )
            )
            timings[line].append(time.perf_counter() - started)
            if line == fixable_line:
                count = len(actions or [])
    await stop(client)
    return timings[fixable_line], timings[quiet_line], count


async def mend_time(root: Path) -> tuple[float, dict]:
    client, _ = await start(False, root)
    started = time.perf_counter()
    result = await client.workspace_execute_command_async(types.ExecuteCommandParams(command="graphmend.mendWorkspace", arguments=[]))
    elapsed = time.perf_counter() - started
    await stop(client)
    return elapsed, result


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--edits", type=int, default=40)
    parser.add_argument("--actions", type=int, default=30)
    parser.add_argument("--mend", type=Path, default=None, help="directory for the mend-workspace timing (default: transformers models/)")
    parser.add_argument("--skip-mend", action="store_true")
    parser.add_argument("--debounce", type=int, default=None, help="debounceMs setting (default: the server's)")
    parser.add_argument("--no-cross-file", action="store_true", help="turn off following calls into other files (jedi)")
    args = parser.parse_args()
    parser_cross = args.no_cross_file
    if args.debounce is not None:
        OPTIONS["debounceMs"] = args.debounce
    if parser_cross:
        OPTIONS["crossFile"] = False
    path = model_file()
    lines = len(path.read_text(encoding="utf-8").splitlines())
    print(f"file: {path.relative_to(path.parents[2])} ({lines} lines)")
    print(f"edit -> diagnostics, push:  {percentiles(asyncio.run(edit_latency(path, args.edits, pull=False)))}")
    print(f"edit -> diagnostics, pull:  {percentiles(asyncio.run(edit_latency(path, args.edits, pull=True)))}")
    fixable, quiet, count = asyncio.run(action_latency(path, args.actions))
    print(f"code actions, fixable line ({count} actions): {percentiles(fixable)}")
    print(f"code actions, line without findings:      {percentiles(quiet)}")
    if not args.skip_mend:
        source = args.mend or path.parents[1]
        with tempfile.TemporaryDirectory() as scratch:
            # a copy outside any git work tree (site-packages is usually .gitignored)
            root = Path(scratch) / source.name
            shutil.copytree(source, root, ignore=shutil.ignore_patterns("__pycache__"))
            files = sum(1 for _ in root.rglob("*.py"))
            elapsed, result = asyncio.run(mend_time(root))
        print(
            f"mend whole workspace over a copy of {source} ({files} .py files): {elapsed:.1f} s; fixed {result['fixed']} in "
            f"{result['changed']} files, {result['left']} left"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
