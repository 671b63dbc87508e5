"""Runtime confirmation through the language server: the code lens, the `graphmend.confirm`
command run in the background, diagnostics marked with what real TorchDynamo did, runtime-only
breaks as diagnostics of their own, before/after counts, and failures that never hang it."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

import pytest
import pytest_lsp
from graphmend.rewrite import fix_source
from lsprotocol import types
from pytest_lsp import LanguageClient

from .confirm_project import HELPERS, NET, make_project, marked_lines
from .lsp_client import SERVER, capabilities, open_document, wait_until

CONFIRM = "graphmend.confirm"


@pytest_lsp.fixture(config=SERVER)
async def client(lsp_client: LanguageClient, tmp_path: Path):
    make_project(tmp_path)
    lsp_client.workspace_path = tmp_path
    lsp_client.lens_refreshes = 0

    @lsp_client.feature(types.CLIENT_REGISTER_CAPABILITY)
    def register(params: types.RegistrationParams) -> None:
        return None

    @lsp_client.feature(types.WORKSPACE_CODE_LENS_REFRESH)
    def lens_refresh(params: None) -> None:
        lsp_client.lens_refreshes += 1

    caps = capabilities("visual_studio_code")
    caps.workspace.code_lens = types.CodeLensWorkspaceClientCapabilities(refresh_support=True)
    await lsp_client.initialize_session(
        types.InitializeParams(
            capabilities=caps,
            root_uri=tmp_path.as_uri(),
            workspace_folders=[types.WorkspaceFolder(uri=tmp_path.as_uri(), name="ws")],
            initialization_options={"diagnosticMode": "push"},
        )
    )
    yield
    await lsp_client.shutdown_session()


async def lenses(client: LanguageClient, uri: str) -> list[types.CodeLens]:
    return list(await client.text_document_code_lens_async(types.CodeLensParams(text_document=types.TextDocumentIdentifier(uri=uri))) or [])


async def confirm(client: LanguageClient, *arguments: object) -> dict:
    return await client.workspace_execute_command_async(types.ExecuteCommandParams(command=CONFIRM, arguments=list(arguments)))


def by_line(diagnostics: list[types.Diagnostic]) -> dict[int, list[types.Diagnostic]]:
    found: dict[int, list[types.Diagnostic]] = {}
    for diagnostic in diagnostics:
        found.setdefault(diagnostic.range.start.line + 1, []).append(diagnostic)
    return found


async def test_confirm_marks_diagnostics_and_reports_runtime_only_breaks(client: LanguageClient) -> None:
    root = client.workspace_path
    net, helpers = open_document(client, root / "net.py"), open_document(client, root / "helpers.py")
    await wait_until(lambda: client.diagnostics.get(net))
    await wait_until(lambda: client.diagnostics.get(helpers))  # the cross-file call was resolved
    (lens,) = await lenses(client, net)
    assert lens.command.title == "Confirm with TorchDynamo" and lens.range.start.line + 1 == NET.splitlines().index("class Net(nn.Module):") + 1

    result = await confirm(client, *lens.command.arguments)
    (run,) = result["runs"]
    assert "graphs" in run, run
    assert run["target"] == "net.py:Net" and run["device"] == "cpu"
    assert run["breaks"] == len(marked_lines(NET, "BREAK")) + len(marked_lines(HELPERS, "BREAK"))
    assert run["confirmed"] >= 2 and run["not_seen"] == 1 and run["not_reached"] == 1

    def marked() -> dict[int, list[types.Diagnostic]] | None:
        found = by_line(client.diagnostics.get(net, []))
        return found if any("TorchDynamo" in d.message for ds in found.values() for d in ds) else None

    lines = await wait_until(marked)
    for line in marked_lines(NET, "BREAK"):
        assert any("[confirmed by TorchDynamo (GB0170)]" in d.message for d in lines[line])
    (not_seen,) = marked_lines(NET, "NOT-SEEN")
    assert "[not seen by TorchDynamo: the line ran and did not break]" in lines[not_seen][0].message
    (not_reached,) = marked_lines(NET, "NOT-REACHED")
    assert "[not reached by the sample input]" in lines[not_reached][0].message

    # the helper is compiled because net.py calls it (jedi found that before the run): confirmed
    assert any(d.code == "GM201" and "[confirmed by TorchDynamo (GB0124)]" in d.message for d in client.diagnostics[helpers])
    await wait_until(lambda: client.lens_refreshes >= 2)
    (after,) = await lenses(client, net)
    assert after.command.title.startswith(f"TorchDynamo: {run['graphs']} graphs, {run['breaks']} breaks on cpu")

    # an edit drops the marks (their lines may have moved); the static findings stay
    client.text_document_did_change(
        types.DidChangeTextDocumentParams(
            text_document=types.VersionedTextDocumentIdentifier(uri=net, version=2),
            content_changes=[types.TextDocumentContentChangeWholeDocument(text="\n" + NET)],
        )
    )
    await wait_until(lambda: client.diagnostics.get(net) and not any("TorchDynamo" in d.message for d in client.diagnostics[net]))


async def test_a_break_no_rule_predicted_becomes_a_diagnostic_with_dynamos_reason(client: LanguageClient) -> None:
    client.workspace_did_change_configuration(types.DidChangeConfigurationParams(settings={"graphmend": {"crossFile": False}}))
    helpers = open_document(client, client.workspace_path / "helpers.py")
    await wait_until(lambda: helpers in client.diagnostics)
    assert not client.diagnostics[helpers]  # not compiled as far as this file alone shows
    run = (await confirm(client, {"uri": (client.workspace_path / "net.py").as_uri()}))["runs"][0]
    assert run["runtime_only"] == 1
    (diagnostic,) = await wait_until(lambda: client.diagnostics.get(helpers))
    assert diagnostic.source == "graphmend (TorchDynamo)" and diagnostic.code == "GB0124"
    assert diagnostic.range.start.line + 1 == next(iter(marked_lines(HELPERS, "BREAK")))
    assert "no static rule predicted it: Unsupported Tensor.item() call" in diagnostic.message and "Hint:" in diagnostic.message
    assert diagnostic.code_description.href.endswith("gb0124.html")


async def test_confirm_after_a_mend_shows_before_and_after(client: LanguageClient) -> None:
    root = client.workspace_path
    first = (await confirm(client, {"target": "net.py:Net"}))["runs"][0]
    (root / "net.py").write_text(fix_source(NET, "net.py").fixed, encoding="utf-8")  # as a mend would
    second = (await confirm(client, {"target": "net.py:Net"}))["runs"][0]
    assert "graphs" in first and "graphs" in second, (first, second)
    assert second["previous"] == [first["graphs"], first["breaks"]]
    assert second["breaks"] < first["breaks"]
    net = open_document(client, root / "net.py")
    (lens,) = await lenses(client, net)
    assert f"(was {first['graphs']} graphs, {first['breaks']} breaks)" in lens.command.title


async def test_the_server_keeps_answering_and_stops_a_run_at_the_timeout(client: LanguageClient) -> None:
    root = client.workspace_path
    (root / "pyproject.toml").write_text('[tool.graphmend.samples]\n"failing.py:compute" = "failing.py:hangs"\n', encoding="utf-8")
    client.workspace_did_change_configuration(types.DidChangeConfigurationParams(settings={"graphmend": {"confirmTimeoutS": 12}}))
    running = asyncio.ensure_future(confirm(client, {"target": "failing.py:compute"}))
    await wait_until(lambda: (root / "pid.txt").exists())
    pid = int((root / "pid.txt").read_text())
    net = open_document(client, root / "net.py")
    await wait_until(lambda: client.diagnostics.get(net))  # analysis goes on meanwhile
    assert await lenses(client, net) == [] and not running.done()
    result = await asyncio.wait_for(running, 120)
    assert result["runs"][0]["stage"] == "timeout"
    assert any("took longer than 12 s and was stopped" in m.message for m in client.messages)
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)


@pytest.mark.parametrize(
    ("target", "stage", "message"),
    [
        ("failing.py:compute", "factory", "the sample factory raised for failing.py:compute: ValueError"),
        ("broken.py:make_sample", "import", "importing the target's module failed"),
    ],
)
async def test_failures_are_shown_and_the_server_goes_on(client: LanguageClient, target: str, stage: str, message: str) -> None:
    result = await confirm(client, {"target": target})
    assert result["runs"][0]["stage"] == stage
    assert any(message in m.message for m in client.messages if m.type == types.MessageType.Error)
    crashed = await confirm(client, {"target": "failing.py:compute"}) if stage == "import" else None
    if crashed is not None:
        assert crashed["runs"][0]["stage"] == "factory"
    net = open_document(client, client.workspace_path / "net.py")
    await wait_until(lambda: client.diagnostics.get(net))


async def test_without_a_sample_the_command_says_how_to_add_one(client: LanguageClient) -> None:
    (client.workspace_path / "pyproject.toml").write_text("[tool.graphmend]\n", encoding="utf-8")
    result = await confirm(client)
    assert result["runs"] == [] and "[tool.graphmend.samples]" in result["error"]
    assert any("make_sample() returns (callable, args, kwargs)" in m.message for m in client.messages)
