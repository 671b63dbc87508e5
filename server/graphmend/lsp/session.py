"""The language server's state for one editor session: open documents and their analyses,
settings, configuration per file, the worker pools, cross-file facts and runtime confirmations,
and how results are published (pull or push). server.py wires the protocol's handlers to it."""

from __future__ import annotations

import asyncio
import logging
import multiprocessing
from concurrent.futures import ProcessPoolExecutor, ThreadPoolExecutor
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from lsprotocol import types
from pygls.lsp.server import LanguageServer

from .. import __version__
from ..config import Config, ConfigResolver
from ..imported_disables import ImportedDisables
from ..notebooks import CellSpan
from ..workers import worker_pool
from .capabilities import ClientSupport
from .confirm import (
    RuntimeStore,
    decorate,
)
from .convert import to_diagnostic
from .crossfile import CrossFileIndex, call_sites, resolve
from .documents import (
    Analysis,
    DocumentStore,
    display_name,
    editor_config,
    path_of,
)
from .notebook_cells import CellAnalysis, joined_cells, notebook_of
from .protocol import GraphMendProtocol
from .settings import Settings, parse_editor_settings

logger = logging.getLogger(__name__)


@dataclass
class _Text:
    uri: str
    version: int | None
    text: str


class GraphMendServer(LanguageServer):
    def __init__(self) -> None:
        super().__init__(
            "graphmend",
            __version__,
            text_document_sync_kind=types.TextDocumentSyncKind.Incremental,
            protocol_cls=GraphMendProtocol,
            # Python cells of any notebook: analysed together, shown per cell (notebook_cells.py)
            notebook_document_sync=types.NotebookDocumentSyncOptions(
                notebook_selector=[types.NotebookDocumentFilterWithCells(cells=[types.NotebookCellLanguage(language="python")], notebook="*")]
            ),
        )
        self.settings = Settings()
        self.store = DocumentStore()
        self.configs = ConfigResolver()
        self.crossfile = CrossFileIndex()
        self.imported_disables = ImportedDisables()  # names bound to torch.compiler.disable in other files
        self.runtime = RuntimeStore()  # the last TorchDynamo run of each sample
        self.pull = False  # decided at initialization
        self.generation = 0  # bumped when settings or configuration change every document's result
        self.background: set[asyncio.Future[None]] = set()  # cross-file follow-ups still running
        self.analysis_pool = ThreadPoolExecutor(max_workers=2, thread_name_prefix="graphmend-analysis")
        self._scheduled: dict[str, asyncio.Task] = {}
        self._shown_errors: set[str] = set()
        self.pushed_closed: set[str] = set()  # uris given diagnostics by checkWorkspace while closed
        self.support = ClientSupport()  # read from `initialize` (start)
        self.pending_problems: list[str] = []  # settings problems found before the client could show them
        self._jedi_pool: ProcessPoolExecutor | None = None

    def jedi_pool(self) -> ProcessPoolExecutor:
        """One long-lived worker process for jedi: its inference takes seconds on a large file and
        would hold the GIL against the analyses of the user's next keystrokes; its caches stay
        warm between calls."""
        if self._jedi_pool is None:
            self._jedi_pool = worker_pool(1, multiprocessing.get_context("spawn"))
        return self._jedi_pool

    # -- the client ---------------------------------------------------------------------------------
    def start(self, params: types.InitializeParams) -> None:
        """Read what `initialize` says once: the client's capabilities, the settings it passes, and
        whether its diagnostics are pulled (only when it can pull, unless the settings say)."""
        self.support = ClientSupport.of(params.capabilities)
        parsed = parse_editor_settings(params.initialization_options)
        self.settings = parsed.settings
        self.pending_problems = list(parsed.problems)
        mode = self.settings.diagnostic_mode
        self.pull = mode == "pull" or (mode == "auto" and self.support.pull_diagnostics)

    def show_pending_problems(self) -> None:
        """The settings problems found at `initialize`, shown once the client can display them."""
        for problem in self.pending_problems:
            self.show(problem)
        self.pending_problems = []

    # -- messages -------------------------------------------------------------------------------
    def show(self, message: str, kind: types.MessageType = types.MessageType.Warning) -> None:
        self.window_show_message(types.ShowMessageParams(type=kind, message=message))

    def show_once(self, key: str, message: str, kind: types.MessageType = types.MessageType.Warning) -> None:
        if key not in self._shown_errors:
            self._shown_errors.add(key)
            self.show(message, kind)

    def folders(self) -> list[Path]:
        """The workspace folders that exist (the root path for clients that send no folders)."""
        folders = [path_of(f.uri) for f in (self.workspace.folders or {}).values()]
        found = [f for f in folders if f is not None and f.is_dir()]
        if not found and self.workspace.root_path:
            found = [Path(self.workspace.root_path)]
        return found

    # -- configuration --------------------------------------------------------------------------
    def config_for(self, path: Path | None) -> Config:
        config, error = self.configs.lookup(path)
        if error is not None:
            self.show_once(f"config:{error}", f"GraphMend: {error}; using the default configuration", types.MessageType.Error)
        config = editor_config(config, self.settings)
        if self.settings.cross_file and path is not None:
            config = replace(config, extra_entries=self.crossfile.entries_for(path), disable_resolver=self.imported_disables.names_for)
        return config

    def apply_settings(self, raw: Any) -> None:
        parsed = parse_editor_settings(raw, self.settings)
        for problem in parsed.problems:
            self.show(problem)
        if parsed.settings != self.settings:
            self.settings = parsed.settings
            self.refresh_all()

    # -- analysis -------------------------------------------------------------------------------
    def current_text(self, uri: str) -> _Text | None:
        try:
            document = self.workspace.get_text_document(uri)
            return _Text(uri, document.version, document.source)
        except Exception:
            return None

    def _stored(self, uri: str) -> tuple[_Text | None, Analysis | None]:
        """The document's current text, and its stored analysis when that is still fresh: of this
        text, under the current settings and configuration."""
        current = self.current_text(uri)
        if current is None:
            return None, None
        stored = self.store.current(uri, current.version)
        if stored is not None and stored.generation == self.generation and stored.text == current.text:
            path = path_of(uri)
            if not self.settings.cross_file or path is None or stored.config.extra_entries == self.crossfile.entries_for(path):
                return current, stored
        return current, None

    async def analyze_now(self, uri: str) -> Analysis | None:
        """Analyse the document's current text (off the event loop) and store the result."""
        notebook_uri = notebook_of(self.workspace, uri)
        if notebook_uri is not None:
            return await self.cell_analysis(uri, notebook_uri)
        current, stored = self._stored(uri)
        if current is None or stored is not None:
            return stored
        path = path_of(uri)
        config = self.config_for(path)
        size = len(current.text.encode("utf-8", errors="surrogatepass"))
        if size > config.max_file_bytes:
            self.show_once(
                f"large:{uri}",
                f"GraphMend: {display_name(uri)} has {size:,} bytes, more than max-file-bytes ({config.max_file_bytes:,}); not analysed",
                types.MessageType.Info,
            )
            return None
        loop = asyncio.get_running_loop()
        analysis = await loop.run_in_executor(
            self.analysis_pool, self.store.analyze, uri, current.version, current.text, str(path or uri), config, self.generation
        )
        if self.settings.cross_file and path is not None:
            # after the diagnostics are out: this coroutine's caller publishes before yielding
            task = asyncio.ensure_future(self.follow_calls(analysis, path))
            self.background.add(task)  # the loop keeps only a weak reference to a task
            task.add_done_callback(self.background.discard)
        return analysis

    async def cell_analysis(
        self, cell_uri: str, notebook_uri: str, joined: tuple[str, dict[str, CellSpan]] | None = None
    ) -> Analysis | None:
        """A notebook cell's view of the analysis of its whole notebook (all code cells, one module;
        `joined`, when the caller has it already)."""
        joined = joined or joined_cells(self.workspace, notebook_uri)
        current = self.current_text(cell_uri)
        if joined is None or current is None or cell_uri not in joined[1]:
            return None
        text, cells = joined
        notebook = self.store.get(notebook_uri)
        if notebook is None or notebook.text != text or notebook.generation != self.generation:
            path = path_of(notebook_uri)
            loop = asyncio.get_running_loop()
            notebook = await loop.run_in_executor(
                self.analysis_pool, self.store.analyze, notebook_uri, None, text, str(path or notebook_uri), self.config_for(path), self.generation
            )
        return CellAnalysis(cell_uri, current.version, current.text, notebook, cells[cell_uri])

    async def publish_notebook(self, notebook_uri: str) -> None:
        """Push each code cell's diagnostics (a pull client asks for them per cell instead)."""
        if self.pull:
            return
        joined = joined_cells(self.workspace, notebook_uri)  # once, not once per cell
        for cell_uri in joined[1] if joined is not None else ():
            analysis = await self.cell_analysis(cell_uri, notebook_uri, joined)
            if analysis is not None:
                self.publish(analysis)

    async def follow_calls(self, analysis: Analysis, path: Path) -> None:
        """Resolve the document's calls out of compiled code; re-analyse the open files whose
        compiled helpers that changed."""
        try:
            loop = asyncio.get_running_loop()
            sites = await loop.run_in_executor(self.analysis_pool, call_sites, analysis)
            if self.crossfile.unchanged(path, sites):
                return
            targets = await loop.run_in_executor(self.jedi_pool(), resolve, analysis.text, path, self.folders(), sites)
            changed = self.crossfile.update(path, sites, targets)
        except Exception:
            logger.exception("following calls out of %s failed", path)
            return
        if not changed:
            return
        for uri in list(self.workspace.text_documents):
            target = path_of(uri)
            if target is not None and target.resolve() in changed:
                self.schedule(uri, 0)
        if self.pull and self.support.diagnostic_refresh:
            self.workspace_diagnostic_refresh(None)

    def schedule(self, uri: str, delay: float) -> asyncio.Task:
        """(Re)start the debounced analysis of a document; the newest call wins."""
        previous = self._scheduled.get(uri)
        if previous is not None and not previous.done():
            previous.cancel()
        task = asyncio.ensure_future(self._debounced(uri, delay))
        self._scheduled[uri] = task
        return task

    def cancel(self, uri: str) -> None:
        """Stop a pending analysis of a document (it was closed)."""
        task = self._scheduled.pop(uri, None)
        if task is not None:
            task.cancel()

    def scheduled(self) -> list[asyncio.Task]:
        """The analyses scheduled and not yet collected (tests wait for them)."""
        return list(self._scheduled.values())

    async def _debounced(self, uri: str, delay: float) -> Analysis | None:
        if delay > 0:
            await asyncio.sleep(delay)
        try:
            analysis = await self.analyze_now(uri)
        except Exception as exc:
            logger.exception("analysis of %s failed", uri)
            self.show_once(f"crash:{uri}", f"GraphMend could not analyse {display_name(uri)}: {type(exc).__name__}: {exc}", types.MessageType.Error)
            return None
        if analysis is not None and not self.pull:
            self.publish(analysis)
        return analysis

    async def analysis_for(self, uri: str) -> Analysis | None:
        """The analysis of the document's current version, waiting for a pending one if needed."""
        current, stored = self._stored(uri)
        if current is None or stored is not None:
            return stored
        pending = self._scheduled.get(uri)
        if pending is not None and not pending.done():
            try:
                await asyncio.shield(pending)
            except asyncio.CancelledError:
                pass  # superseded by a newer edit: analyse what is there now
        return await self.analyze_now(uri)

    def diagnostics(self, analysis: Analysis) -> list[types.Diagnostic]:
        codec = self.workspace.position_codec
        diagnostics = [to_diagnostic(f, analysis.uri, codec, analysis.lines, self.settings.docs_url) for f in analysis.findings]
        path = path_of(analysis.uri)
        if path is None or not self.runtime.runs:
            return diagnostics
        return decorate(diagnostics, self.runtime.for_text(path, analysis.text), path, analysis.uri, codec, analysis.lines)

    def publish(self, analysis: Analysis) -> None:
        self.text_document_publish_diagnostics(
            types.PublishDiagnosticsParams(uri=analysis.uri, version=analysis.version, diagnostics=self.diagnostics(analysis))
        )

    def clear(self, uri: str) -> None:
        self.text_document_publish_diagnostics(types.PublishDiagnosticsParams(uri=uri, diagnostics=[]))

    def refresh_all(self) -> None:
        """Settings or a pyproject.toml changed: every open document's result may differ."""
        self.generation += 1
        for uri in list(self.workspace.text_documents):
            self.schedule(uri, 0)
        if self.pull and self.support.diagnostic_refresh:
            self.workspace_diagnostic_refresh(None)

    def result_id(self, analysis: Analysis) -> str:
        text = analysis.notebook.text if isinstance(analysis, CellAnalysis) else analysis.text  # other cells count
        return f"{analysis.version}:{self.generation}:{self.runtime.generation}:{hash(text)}"

    def runtime_changed(self) -> None:
        """A confirmation started or finished: show its marks and update the code lenses."""
        if self.pull:
            if self.support.diagnostic_refresh:
                self.workspace_diagnostic_refresh(None)
        else:
            for uri in list(self.workspace.text_documents):
                stored = self.store.get(uri)
                if stored is not None:
                    self.publish(stored)
        if self.support.code_lens_refresh:
            self.workspace_code_lens_refresh(None)
