"""Notebook documents in the editor (LSP 3.17 `notebookDocument/*` sync).

A notebook's code cells run in one namespace, in order, so they are analysed as one module (the
CLI's `notebooks.join_cells`: a marker line per cell, IPython syntax masked). Each cell is then
shown as a document of its own: the findings inside it, at the cell's own line numbers; quick
fixes whose edits stay inside the cell; hover. A fix that must also write in another cell (a
helper defined after `import torch`) is declined here with that reason: `graphmend fix nb.ipynb`
applies it to the whole notebook.
"""

from __future__ import annotations

import copy
from dataclasses import replace

from lsprotocol import types
from pygls.workspace import Workspace

from ..analysis import AnalysisResult
from ..findings import Edit, Finding
from ..notebooks import CellSpan, join_cells
from ..rewrite import Declined, FileFix, Fix, fix_source
from ..rewrite.model import Safety
from .documents import Analysis


def joined_cells(workspace: Workspace, notebook_uri: str) -> tuple[str, dict[str, CellSpan]] | None:
    """The notebook's Python code cells as one module, and where each cell (by uri) lies in it."""
    notebook = workspace.get_notebook_document(notebook_uri=notebook_uri)
    if notebook is None:
        return None
    code: list[tuple[int, str]] = []
    uris: dict[int, str] = {}
    for number, cell in enumerate(notebook.cells, start=1):
        if cell.kind != types.NotebookCellKind.Code:
            continue
        document = workspace.get_text_document(cell.document)
        if document.language_id not in (None, "python"):
            continue
        code.append((number, document.source))
        uris[number] = cell.document
    text, spans, _ = join_cells(code)
    return text, {uris[span.number]: span for span in spans}


def notebook_of(workspace: Workspace, cell_uri: str) -> str | None:
    """The uri of the notebook a cell belongs to, or None for a plain document."""
    notebook = workspace.get_notebook_document(cell_uri=cell_uri)
    return notebook.uri if notebook is not None else None


class CellAnalysis(Analysis):
    """One cell's view of its notebook's analysis: what is in the cell, at the cell's positions."""

    def __init__(self, uri: str, version: int | None, text: str, notebook: Analysis, cell: CellSpan) -> None:
        self.notebook = notebook
        self.cell = cell
        self.indices: list[int] = []  # index of each shown finding in the notebook's findings
        local: list[Finding] = []
        for index, finding in enumerate(notebook.result.findings):
            if cell.holds(finding.span):
                self.indices.append(index)
                related = tuple(replace(r, span=cell.local(r.span)) for r in finding.related if cell.holds(r.span))
                local.append(replace(finding, span=cell.local(finding.span), related=related, break_line=cell.local_line(finding.break_line)))
        result: AnalysisResult = copy.copy(notebook.result)  # the notebook's tree and facts; the cell's findings
        result.findings = local
        super().__init__(uri, version, text, result, local, notebook.config, notebook.generation)

    def plan(self, index: int, level: Safety) -> Fix | Declined:
        """The notebook's fix for the finding, in the cell's coordinates, when it edits only the cell."""
        outcome = self.notebook.plan(self.indices[index], level)
        finding = self.findings[index]
        if isinstance(outcome, Declined):
            return replace(outcome, finding=finding)
        edits = []
        for edit in outcome.edits:
            if not self.cell.holds(edit.span):
                return Declined(
                    finding,
                    "the fix also writes in another cell (a helper defined after `import torch`); run `graphmend fix` on the notebook",
                    "other-cell",
                )
            edits.append(Edit(self.cell.local(edit.span), edit.new_text))
        return replace(outcome, finding=finding, edits=tuple(edits))

    def fixed(self, path: str) -> FileFix:
        """Fix-all of a cell would write in other cells too: nothing (the CLI fixes notebooks)."""
        return fix_source(self.text, path, self.config, codes=frozenset())
