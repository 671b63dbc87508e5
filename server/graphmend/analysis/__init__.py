"""Source text -> findings. Pure: no torch import, no I/O, the same answer for the same input.

`analyze(source, path, config)` is what the CLI, the language server, the benchmarks and the tests
all call. Detection runs on stdlib `ast` only (libcst is for rewrites, never the keystroke path).
"""

from __future__ import annotations

import ast
import dataclasses
import gc

from ..config import Config
from ..findings import Finding, Severity, Span
from .kinds import Kind
from .module import ModuleAnalysis
from .module_state import complete_index
from .rules import ALL_RULES, PARSE_ERROR_CODE, RULES_BY_CODE, ruleset
from .source import SourceFile
from .suppressions import parse_suppressions
from .symbols import ModuleIndex, build_index
from .type_comments import IMPLICIT_IMPORTS, comment_signatures

__all__ = ["ALL_RULES", "RULES_BY_CODE", "AnalysisResult", "analyze", "analyze_detailed"]


class AnalysisResult:
    """Findings plus what the analysis learnt on the way: why each function counts as compiled and,
    when asked for (`keep_facts`, used by the rewrites), the syntax tree, the module index and the
    kind inferred for each expression node (keyed by `id(node)` of nodes in `tree`)."""

    def __init__(
        self,
        findings: list[Finding],
        compiled: dict[str, str],
        tree: ast.Module | None = None,
        index: ModuleIndex | None = None,
        kinds: dict[int, Kind] | None = None,
        source: SourceFile | None = None,
        broken: frozenset[str] = frozenset(),
        entries: frozenset[str] = frozenset(),
        roots: dict[str, str] | None = None,
    ) -> None:
        self.findings = findings
        self.compiled = compiled
        # the functions of `compiled` compiled in their own right, not only as callees of those
        self.entries = entries
        # each compiled function -> the entry whose walk reached it (a re-analysis walks only that)
        self.roots = roots or {}
        # entries (compiled functions) from which something breaks: their decorators' wrappers,
        # in another file, then run eagerly where they call them in a `try` (analysis/decorators.py)
        self.broken = broken
        self.tree = tree
        self.index = index
        self.kinds = kinds or {}
        self.source = source
        # what produced it, so a fixer can analyse a variant of the source the same way
        self.path = "<string>"
        self.config: Config | None = None
        # id(call) -> the in-file functions the walk found it may run (with keep_facts)
        self.resolved_calls: dict[int, list[ast.FunctionDef]] = {}


def analyze(source: str, path: str = "<string>", config: Config | None = None, *, strict: bool = False) -> list[Finding]:
    """Predict the graph breaks in `source`.

    Never raises for bad input: a file that does not parse yields a single GM000 finding. With
    `strict=True` (the test suite), an internal error propagates instead of becoming a GM001 note.
    """
    return analyze_detailed(source, path, config, strict=strict).findings


def analyze_detailed(
    source: str,
    path: str = "<string>",
    config: Config | None = None,
    *,
    strict: bool = False,
    keep_facts: bool = False,
) -> AnalysisResult:
    given = config = config or Config()
    named = config.compiled_in(path) if (config.compiled or config.samples) else ()
    if named:
        config = dataclasses.replace(config, named_entries=named)
    # The cyclic garbage collector finds nothing to free in a fresh syntax tree but runs again and
    # again while the parser allocates it: pausing it halves the time of a large file.
    collecting = gc.isenabled()
    gc.disable()
    try:
        result = _analyze(source, path, config, strict, keep_facts)
        result.path, result.config = path, given
        return result
    finally:
        if collecting:
            gc.enable()


def _analyze(source: str, path: str, config: Config, strict: bool, keep_facts: bool) -> AnalysisResult:
    text = SourceFile(source, path)
    try:
        tree = text.parse()
    except SyntaxError as exc:
        return AnalysisResult([_parse_failure(text, exc)], {})
    except (ValueError, RecursionError, MemoryError) as exc:
        return AnalysisResult([_unparsable(text, exc)], {})
    index = build_index(tree)
    if config.disable_resolver is not None:  # names bound to disable or to a query elsewhere in the package
        imported = config.disable_resolver(path, dict(index.imports))
        if imported:  # the index reads decorators through the imports: build it again knowing them
            index = build_index(tree, imported)
    index.dynamo_flags.update(config.dynamo_flags)
    if "# type:" in source:  # TorchScript-style signatures (torchvision): a substring test first
        index.comment_signatures = comment_signatures(tree, text.lines, set(index.imports) | index.top_level_names)
        if index.comment_signatures:
            index.imports.update(IMPLICIT_IMPORTS)
    complete_index(index, tree, source)
    codes = frozenset(rule.code for rule in ALL_RULES if config.is_enabled(rule.code))
    module = ModuleAnalysis(text, tree, index, ruleset(codes), config, strict=strict, keep_kinds=keep_facts)
    findings = module.run()
    suppressions = parse_suppressions(text.lines, source)
    kept = [f for f in findings if not suppressions.suppresses(f) and config.is_enabled(f.code)]
    kept.sort(key=Finding.sort_key)
    broken = frozenset(module.broken_entries)
    if keep_facts:
        result = AnalysisResult(kept, module.reasons, tree, index, module.kinds, text, broken, module.entries, module.roots)
        result.resolved_calls = module.resolved_calls
        return result
    return AnalysisResult(kept, module.reasons, broken=broken, entries=module.entries)


def _parse_failure(text: SourceFile, exc: SyntaxError) -> Finding:
    line = exc.lineno or 1
    line = max(1, min(line, len(text.lines)))
    line_text = text.lines[line - 1]
    column = max(0, min((exc.offset or 1) - 1, len(line_text)))
    end_line = exc.end_lineno if exc.end_lineno and exc.end_lineno >= line else line
    end_column = (exc.end_offset - 1) if exc.end_offset and end_line == line and exc.end_offset - 1 > column else len(line_text)
    return Finding(
        code=PARSE_ERROR_CODE,
        span=Span(line, column, end_line, max(column, end_column)),
        message=f"The file does not parse ({exc.msg}), so GraphMend cannot check it for graph breaks.",
        severity=Severity.ERROR,
    )


def _unparsable(text: SourceFile, exc: BaseException) -> Finding:
    reasons: dict[type[BaseException], str] = {
        ValueError: "it contains a NUL byte",
        RecursionError: "it is nested too deeply for Python's parser",
        MemoryError: "it is too large to parse",
    }
    reason = reasons.get(type(exc), type(exc).__name__)
    return Finding(
        code=PARSE_ERROR_CODE,
        span=Span(1, 0, 1, len(text.lines[0]) if text.lines else 0),
        message=f"The file cannot be parsed ({reason}), so GraphMend cannot check it for graph breaks.",
        severity=Severity.ERROR,
    )
