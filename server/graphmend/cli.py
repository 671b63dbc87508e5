"""The `graphmend` command line: `check`, `fix` and `rules` over the same analysis and rewrites.

Exit codes (as ruff): 0 no findings, 1 findings, 2 usage or configuration error.
"""

from __future__ import annotations

import argparse
import dataclasses
import gc
import os
import sys
import time
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field, replace
from pathlib import Path

from . import __version__
from . import explain as explain_command
from .analysis import AnalysisResult, analyze_detailed
from .analysis.rules import ALL_RULES
from .batch import Job, Result, each_result, kept_workers
from .config import Config, ConfigError, ConfigResolver, load_config
from .crossmodule import CallSite, call_sites, import_header, may_reach_a_function, reachable_names, resolve
from .files import discover, read_source
from .findings import Finding, Severity
from .imported_disables import ImportedDisables
from .notebooks import NotebookError, read_notebook
from .output import shown_findings, write_github, write_json, write_statistics, write_text
from .progress import tracked
from .rewrite.context import FixContext
from .rewrite.engine import break_count, plan_fix
from .rewrite.files import FileOutcome, fix_file, unified_diff
from .rewrite.fixers import fixers_for
from .rewrite.model import Fix, Safety
from .sarif import write_sarif

EXIT_CLEAN, EXIT_FINDINGS, EXIT_USAGE = 0, 1, 2


@dataclass
class FileResult:
    path: Path
    findings: list[Finding] = field(default_factory=list)
    skip_reason: str | None = None
    fixes: dict[int, Fix] = field(default_factory=dict)  # by index into `findings`: the safe fix of each
    cells: list[int] | None = None  # a notebook: each finding's cell (its span is in the cell's lines)
    sites: tuple[CallSite, ...] = ()  # calls its compiled code makes to imported names (cross-module)
    header: str = ""  # its import statements, where it has sites (what jedi resolves them from)
    reachable: frozenset[str] = frozenset()  # names a call may reach a function of it by (crossmodule.reachable_names)

    @property
    def fixable(self) -> frozenset[int]:
        """Indices of the findings `graphmend fix` would fix."""
        return frozenset(self.fixes)


def check_file(path: Path, config: Config) -> FileResult:
    """Findings of one file, and which of them a safe fix exists for (as ruff's `[*]`)."""
    source = read_source(path, config.max_file_bytes)
    if source.text is None:
        return FileResult(path, skip_reason=source.skip_reason)
    if path.suffix == ".ipynb":
        return _check_notebook(path, source.text, config)
    result = analyze_detailed(source.text, str(path), config, keep_facts=True)
    sites = call_sites(result, source.text)
    header = import_header(result.tree, source.text) if sites and result.tree is not None else ""
    reachable = reachable_names(result.tree) if result.tree is not None else frozenset()
    fixes = safe_fixes(result, decide_only=not config.fix_texts)
    return FileResult(path, result.findings, fixes=fixes, sites=sites, header=header, reachable=reachable)


def _check_notebook(path: Path, raw: str, config: Config) -> FileResult:
    """A notebook's code cells analysed as one module; findings placed in their cells."""
    try:
        notebook = read_notebook(raw)
    except NotebookError as exc:
        return FileResult(path, skip_reason=str(exc))
    result = analyze_detailed(notebook.text, str(path), config, keep_facts=True)
    findings: list[Finding] = []
    cells: list[int] = []
    fixes: dict[int, Fix] = {}
    planned = safe_fixes(result)
    for index, finding in enumerate(result.findings):
        cell = notebook.cell_of(finding.span)
        if cell is None:
            continue  # on a marker line (never, for a finding of a cell's code)
        if index in planned:
            fixes[len(findings)] = planned[index]
        findings.append(dataclasses.replace(finding, span=cell.local(finding.span), related=(), break_line=cell.local_line(finding.break_line)))
        cells.append(cell.number)
    return FileResult(path, findings, fixes=fixes, cells=cells)


def safe_fixes(result: AnalysisResult, decide_only: bool = False) -> dict[int, Fix]:
    """The safe fix of each finding that has one, by index. Planning is skipped for rules with no
    safe fixer, so a file without such findings costs nothing more than its analysis. With
    `decide_only`, a fixer may leave a fix's edits out once it has decided (FixContext.decide_only)."""
    candidates = [i for i, f in enumerate(result.findings) if not f.if_compiled and fixers_for(f.code, Safety.SAFE)]
    if not candidates or result.tree is None:
        return {}
    context = FixContext(result)
    context.decide_only = decide_only
    planned = {i: plan_fix(result.findings[i], context, riskier=False) for i in candidates}
    return {i: fix for i, fix in planned.items() if isinstance(fix, Fix)}


def _check_file_job(job: tuple[Path, Config]) -> FileResult:
    return check_file(*job)


def check_files(configs: Mapping[Path, Config], jobs: int, cross_module: bool = True) -> list[FileResult]:
    """Every file's findings, each file checked with its own configuration; with `cross_module`,
    functions called from compiled code in another of the files are analysed as compiled too (to a
    fixed point: such a helper's own calls count)."""
    return check_files_and_entries(configs, jobs, cross_module)[0]


def check_files_and_entries(
    configs: Mapping[Path, Config], jobs: int, cross_module: bool = True
) -> tuple[list[FileResult], dict[Path, Config]]:
    """`check_files`, and the configuration each file was last checked with where the others
    changed it: extra compiled entries (functions the others' compiled code calls). Imported names
    another module binds to `torch.compiler.disable` (or to a query such as
    `torch.compiler.is_compiling`) are the configuration's `disable_resolver`'s."""
    with kept_workers(jobs, len(configs)) as pool:
        return _check_and_follow(configs, jobs, cross_module, pool)


def _check_and_follow(
    configs: Mapping[Path, Config], jobs: int, cross_module: bool, pool: ProcessPoolExecutor | None
) -> tuple[list[FileResult], dict[Path, Config]]:
    results = _check_each(list(configs.items()), jobs, "checking", pool)
    entries: dict[Path, dict[str, str]] = {}
    if not cross_module or len(configs) < 2:
        return results, {}
    by_path = {r.path.resolve(): n for n, r in enumerate(results)}
    own = {path.resolve(): config for path, config in configs.items()}

    def with_entries(path: Path) -> Config:
        return replace(own[path], extra_entries=tuple(sorted(entries.get(path, {}).items())))

    reachable = frozenset().union(*(r.reachable for r in results))
    pending = results
    for _ in range(MAX_CROSS_MODULE_ROUNDS):
        grown = _called_from_compiled_code(pending, set(by_path), entries, jobs, reachable, pool)
        if not grown:
            break
        pending = _check_each([(results[by_path[t]].path, with_entries(t)) for t in sorted(grown)], jobs, "following calls", pool)
        for result in pending:
            results[by_path[result.path.resolve()]] = result
    return results, {path: with_entries(path) for path in entries}


MAX_CROSS_MODULE_ROUNDS = 4  # each round follows one more level of helper calling helper


def _called_from_compiled_code(
    results: list[FileResult],
    checked: set[Path],
    entries: dict[Path, dict[str, str]],
    workers: int,
    reachable: frozenset[str],
    pool: ProcessPoolExecutor | None = None,
) -> set[Path]:
    """Add to `entries` the functions of checked files that `results`' compiled code calls (jedi
    resolves each call that may reach one: `reachable` holds the checked files' reachable names);
    the files that gained an entry."""
    grown: set[Path] = set()
    roots = _outermost({p.parent for p in checked})
    jobs = [(r.path, roots, sites, r.header) for r in results if (sites := tuple(s for s in r.sites if may_reach_a_function(s, reachable)))]
    for targets in _map(_resolve_job, jobs, workers, "following calls", pool):
        for target, found in targets.items():
            if target not in checked:
                continue
            known = entries.setdefault(target, {})
            for qualified, reason in found.items():
                if qualified not in known:
                    known[qualified] = reason
                    grown.add(target)
    return grown


def _outermost(folders: set[Path]) -> list[Path]:
    """The folders none of the others contains (jedi's project roots; fewer roots, fewer checks)."""
    kept: list[Path] = []
    for folder in sorted(folders, key=lambda f: len(f.parts)):
        if not any(folder.is_relative_to(k) for k in kept):
            kept.append(folder)
    return kept


def _resolve_job(job: tuple[Path, list[Path], tuple[CallSite, ...], str]) -> dict[Path, dict[str, str]]:
    path, roots, sites, header = job
    return resolve("", path, roots, sites, header=header)


def _map(function: Callable[[Job], Result], jobs: list[Job], workers: int, label: str, pool: ProcessPoolExecutor | None = None) -> list[Result]:
    """`function` over `jobs`, in order (batch.py), with the progress bar on a terminal."""
    return list(tracked(each_result(function, jobs, workers, pool=pool), len(jobs), label))


def _check_each(jobs: list[tuple[Path, Config]], workers: int, label: str, pool: ProcessPoolExecutor | None = None) -> list[FileResult]:
    return _map(_check_file_job, jobs, workers, label, pool)


def _codes(value: str) -> list[str]:
    return [part.strip() for part in value.split(",") if part.strip()]


def _display_path(path: Path) -> str:
    try:
        relative = os.path.relpath(path)
    except ValueError:
        return str(path)
    return relative if not relative.startswith("..") else str(path)


CROSS_MODULE_HELP = "do not follow calls from compiled code into the other files checked (faster; helpers there then count as uncompiled)"
FORCE_EXCLUDE_HELP = "apply the config's `exclude` to files named on the command line too (for pre-commit)"


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="graphmend",
        description="Find (and fix) TorchDynamo graph breaks in PyTorch code, statically.",
    )
    parser.add_argument("--version", action="version", version=f"graphmend {__version__}")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    check = commands.add_parser("check", help="report predicted graph breaks", description="Report predicted graph breaks.")
    check.add_argument("paths", nargs="*", type=Path, default=[Path(".")], help="files or directories (default: .)")
    check.add_argument(
        "--format", choices=("text", "json", "github", "sarif"), default="text", help="output format (sarif: SARIF 2.1.0, safe fixes included)"
    )
    check.add_argument("--select", type=_codes, help="comma-separated codes or prefixes to report (replaces the config's)")
    check.add_argument("--ignore", type=_codes, help="comma-separated codes or prefixes to leave out (replaces the config's)")
    check.add_argument("--extend-ignore", type=_codes, help="codes or prefixes to leave out in addition to the config's")
    check.add_argument("--config", type=Path, help="a pyproject.toml to read [tool.graphmend] from")
    check.add_argument(
        "--no-compile-forward",
        action="store_true",
        help="only treat explicitly compiled functions as compiled, not every nn.Module.forward",
    )
    check.add_argument(
        "--compiled-only",
        action="store_true",
        help="leave out functions on tensors that nothing known compiles (reported by default, at information severity)",
    )
    check.add_argument("--force-exclude", action="store_true", help=FORCE_EXCLUDE_HELP)
    check.add_argument("--no-cross-module", action="store_true", help=CROSS_MODULE_HELP)
    check.add_argument(
        "--watch", action="store_true", help="check again whenever a Python file, notebook or pyproject.toml changes (needs graphmend[watch])"
    )
    check.add_argument("--jobs", "-j", type=int, default=os.cpu_count() or 1, help="parallel worker processes")
    check.add_argument("--statistics", action="store_true", help="print the number of findings per code")
    check.add_argument("--exit-zero", action="store_true", help="exit 0 even when there are findings")
    check.add_argument("--quiet", "-q", action="store_true", help="print findings only, no summary")

    fix = commands.add_parser(
        "fix",
        help="rewrite code so the graph no longer breaks, where that provably keeps its meaning",
        description=(
            "Apply the safe rewrites in place (atomic writes, only code that parses, idempotent) and say, "
            "for every finding left, why it was not rewritten. Exit status: 0 when no finding is left, "
            "1 when some are (or, with --diff, when there are changes to show), 2 on usage errors."
        ),
    )
    fix.add_argument("paths", nargs="*", type=Path, default=[Path(".")], help="files or directories (default: .)")
    fix.add_argument("--diff", action="store_true", help="print a unified diff of the fixes and write nothing")
    fix.add_argument(
        "--fix-level",
        choices=[s.value for s in Safety],
        default=Safety.SAFE.value,
        help=(
            "the riskiest fixes to apply: safe (default: same values, prints, logs and checks), costly (also same "
            "values up to rounding at more compute, e.g. every expert on every token), unsafe (also fixes that "
            "change behaviour: a skipped print, a process-wide dynamo flag)"
        ),
    )
    fix.add_argument("--unsafe-fixes", action="store_true", help="the same as --fix-level unsafe")
    fix.add_argument("--select", type=_codes, help="comma-separated codes or prefixes to fix (others are left as they are)")
    fix.add_argument("--ignore", type=_codes, help="comma-separated codes or prefixes not to fix")
    fix.add_argument("--config", type=Path, help="a pyproject.toml to read [tool.graphmend] from")
    fix.add_argument("--no-compile-forward", action="store_true", help="see `check`")
    fix.add_argument("--force-exclude", action="store_true", help=FORCE_EXCLUDE_HELP)
    fix.add_argument("--no-cross-module", action="store_true", help=CROSS_MODULE_HELP)
    fix.add_argument("--jobs", "-j", type=int, default=os.cpu_count() or 1, help="parallel worker processes")
    fix.add_argument("--quiet", "-q", action="store_true", help="print only the summary (and the diff)")
    fix.add_argument("--statistics", action="store_true", help="count fixes and declines by reason")
    fix.add_argument("--exit-zero", action="store_true", help="exit 0 even when findings are left (or, with --diff, changes)")

    lsp = commands.add_parser(
        "lsp",
        help="run the language server (stdio by default)",
        description="Serve diagnostics, quick fixes and the workspace commands over the Language Server Protocol.",
    )
    lsp.add_argument("--stdio", action="store_true", help="talk over stdin/stdout (the default)")
    lsp.add_argument("--tcp", type=int, metavar="PORT", help="listen on a TCP port instead")
    lsp.add_argument("--host", default="127.0.0.1", help="address to listen on with --tcp (default: 127.0.0.1)")

    explain_command.add_parser(commands)

    rules = commands.add_parser("rules", help="list the rules", description="List every rule with its code and summary.")
    rules.add_argument("--format", choices=("text", "markdown"), default="text")
    return parser


def _root_configuration(args: argparse.Namespace, resolver: ConfigResolver) -> Config:
    """--config's, else the first path's: what decides which files are discovered (`exclude`)."""
    if args.config is not None:
        return load_config(args.config)
    start = args.paths[0] if args.paths else Path(".")
    return resolver.require(start if start.exists() else Path("."))


def _with_command_line(args: argparse.Namespace, config: Config, overrides: bool, disables: ImportedDisables) -> Config:
    """A file's configuration with the command line's options (--select/--ignore only with `overrides`)."""
    if not getattr(args, "no_cross_module", True):
        # a name bound to torch.compiler.disable in the file's package, checked or not (pre-commit
        # checks only the files that changed); one cache for all the files
        config = replace(config, disable_resolver=disables.names_for)
    return config.with_overrides(
        select=args.select if overrides else None,
        ignore=args.ignore if overrides else None,
        extend_ignore=getattr(args, "extend_ignore", None),
        compile_forward=False if args.no_compile_forward else None,
        check_uncompiled=False if getattr(args, "compiled_only", False) else None,
    )


def _file_configurations(
    args: argparse.Namespace, paths: list[Path], root: Config, overrides: bool, resolver: ConfigResolver
) -> dict[Path, Config]:
    """Each file's configuration: --config's for every file when given, else the nearest
    pyproject.toml's with a [tool.graphmend] table (as ruff, and as the editor does), each with the
    command line's options."""
    disables = ImportedDisables()
    combined: dict[int, Config] = {}  # files of one project share one configuration object
    configs: dict[Path, Config] = {}
    for path in paths:
        base = root if args.config is not None else resolver.require(path)
        if id(base) not in combined:
            combined[id(base)] = _with_command_line(args, base, overrides, disables)
        configs[path] = combined[id(base)]
    return configs


def run_check(args: argparse.Namespace) -> int:
    if getattr(args, "watch", False):
        return _watch(args)
    return _check_once(args)


def _watch(args: argparse.Namespace) -> int:
    """Check, then check again after every change under the paths, until interrupted. watchfiles
    (inotify and friends, debounced) tells what changed; every run is a whole `check`, as ruff's."""
    try:
        from watchfiles import watch
    except ImportError:
        print("graphmend: --watch needs the watchfiles package: pip install 'graphmend[watch]'", file=sys.stderr)
        return EXIT_USAGE
    status = _check_once(args)
    if status == EXIT_USAGE:
        return status

    def relevant(_change: object, path: str) -> bool:
        return path.endswith((".py", ".ipynb", "pyproject.toml"))

    print("graphmend: watching for changes (Ctrl+C to stop)", file=sys.stderr, flush=True)
    try:
        for changes in watch(*args.paths, watch_filter=relevant, raise_interrupt=False):
            names = sorted({_display_path(Path(path)) for _, path in changes})
            print(f"\n== {time.strftime('%H:%M:%S')} changed: {', '.join(names[:5])}{' ...' if len(names) > 5 else ''}", flush=True)
            _check_once(args)
            sys.stdout.flush()
    except KeyboardInterrupt:
        pass
    return EXIT_CLEAN


def _configured_paths(args: argparse.Namespace, overrides: bool = True) -> tuple[dict[Path, Config], dict[Path, Config]] | None:
    """The files to process, each with its configuration (with the command line's --select/--ignore
    applied when `overrides`, and with them applied: the selection); None after saying why not (a
    usage error)."""
    if args.jobs < 1:
        print("graphmend: --jobs must be at least 1", file=sys.stderr)
        return None
    try:
        resolver = ConfigResolver()  # one for the run: each pyproject.toml is read once
        root = _root_configuration(args, resolver)
        paths = list(discover(args.paths, root.exclude, root.root, args.force_exclude))
        configs = _file_configurations(args, paths, root, overrides, resolver)
        selections = configs if overrides else {p: c.with_overrides(select=args.select, ignore=args.ignore) for p, c in configs.items()}
        return configs, selections
    except ConfigError as exc:
        print(f"graphmend: configuration error: {exc}", file=sys.stderr)
    except FileNotFoundError as exc:
        print(f"graphmend: no such file or directory: {exc}", file=sys.stderr)
    return None


def _check_once(args: argparse.Namespace) -> int:
    configured = _configured_paths(args)
    if configured is None:
        return EXIT_USAGE
    configs, _ = configured
    if args.format != "sarif":  # only SARIF carries the fixes' edits; `[*]` needs only that one exists
        configs = {path: dataclasses.replace(config, fix_texts=False) for path, config in configs.items()}
    results = check_files(configs, args.jobs, cross_module=not args.no_cross_module)
    shown = [(_display_path(r.path), r.findings) for r in results if r.findings]
    fixable = [r.fixable for r in results if r.findings]
    cells = [r.cells for r in results if r.findings]
    skipped = [r for r in results if r.skip_reason]
    for result in skipped:
        print(f"graphmend: skipped {_display_path(result.path)}: {result.skip_reason}", file=sys.stderr)
    out = sys.stdout
    if args.format == "json":
        write_json(out, shown_findings(shown, fixable, cells))
    elif args.format == "github":
        write_github(out, shown_findings(shown, fixable, cells))
    elif args.format == "sarif":  # a notebook's fixes are edits of its joined cells: not SARIF's
        write_sarif(out, shown, [r.fixes if r.cells is None else {} for r in results if r.findings], cells)
    else:
        write_text(out, shown_findings(shown, fixable, cells))
    all_findings = [f for _, findings in shown for f in findings]
    if args.statistics:
        write_statistics(out if args.format == "text" else sys.stderr, all_findings)
    if args.format == "text" and not args.quiet:
        checked = len(results) - len(skipped)
        if all_findings:
            print(found_summary(all_findings, len(shown), checked, len(skipped)), file=out)
            count = sum(len(f) for f in fixable)
            if count:
                print(f"[*] {count} fixable with `graphmend fix` (semantics-checked rewrites).", file=out)
        else:
            print(f"No graph breaks found in {checked} file{'s' if checked != 1 else ''}.", file=out)
    if any(not f.if_compiled for f in all_findings) and not args.exit_zero:
        return EXIT_FINDINGS  # breaks only if something compiles them fail nothing (information, as pyright's)
    return EXIT_CLEAN


def found_summary(findings: list[Finding], files: int, checked: int, skipped: int) -> str:
    """`check`'s closing line: breaks in compiled code, then the latent ones behind them and those in
    code nothing known compiles, each counted apart."""
    uncompiled = sum(1 for f in findings if f.if_compiled)
    latent = sum(1 for f in findings if f.latent and not f.if_compiled)
    whole = sum(1 for f in findings if f.severity is Severity.ERROR)
    found = len(findings) - latent - uncompiled
    if not found and not latent:  # only breaks in code nothing known compiles
        return (
            f"No graph breaks found in compiled code in {checked} file{'s' if checked != 1 else ''}; {uncompiled} in functions nothing known "
            "compiles, which break if they are compiled (name them in `[tool.graphmend] compiled`; `--compiled-only` hides them)"
            + (f"; skipped {skipped}." if skipped else ".")
        )
    parts = [
        f"Found {found} graph break{'s' if found != 1 else ''} ({whole} costing a whole function or more) "
        f"in {files} of {checked} file{'s' if checked != 1 else ''}"
    ]
    if latent:
        parts.append(f"{latent} latent behind them (dynamo reaches those once the breaks before them are fixed)")
    if uncompiled:
        parts.append(f"{uncompiled} more in functions nothing known compiles (breaks if they are compiled: `--compiled-only` hides them)")
    text = parts[0] + "".join(f", and {p}" if n == len(parts) - 1 else f", {p}" for n, p in enumerate(parts) if n)
    return text + (f"; skipped {skipped}." if skipped else ".")


def _fix_job(job: tuple[Path, Config, Safety, frozenset[str] | None, bool]) -> FileOutcome:
    path, config, level, codes, write = job
    return fix_file(path, config, level=level, codes=codes, write=write)


def run_fix(args: argparse.Namespace) -> int:
    configured = _configured_paths(args, overrides=False)
    if configured is None:
        return EXIT_USAGE
    configs, selections = configured
    codes = {path: frozenset(rule.code for rule in ALL_RULES if selection.is_enabled(rule.code)) for path, selection in selections.items()}
    # helpers in other files called from compiled code are fixed as compiled code (found by a check pass)
    followed = {} if args.no_cross_module or len(configs) < 2 else check_files_and_entries(configs, args.jobs)[1]
    level = Safety.UNSAFE if args.unsafe_fixes else Safety(args.fix_level)
    jobs = [(path, followed.get(path.resolve(), config), level, codes[path], not args.diff) for path, config in configs.items()]
    outcomes = _map(_fix_job, jobs, args.jobs, "fixing")
    out = sys.stdout
    fixed = rewrites = left = changed_files = 0
    reasons: Counter[str] = Counter()
    titles: Counter[str] = Counter()
    uncompiled = 0  # break sites in functions nothing known compiles: never rewritten
    failed = False
    for (path, *_), outcome in zip(jobs, outcomes):
        shown = _display_path(outcome.path)
        if outcome.skip_reason:
            print(f"graphmend: skipped {shown}: {outcome.skip_reason}", file=sys.stderr)
            continue
        for error in outcome.errors:
            print(f"graphmend: {error}", file=sys.stderr)
            failed = True
        result = outcome.fix
        assert result is not None
        remaining = [f for f in result.remaining if selections[path].is_enabled(f.code)]  # deselected rules are not reported
        fixed += result.gone(codes[path])
        rewrites += len(result.applied)
        left += break_count(remaining)  # in the summary's unit: breaks as dynamo counts them
        changed_files += result.changed
        titles.update(f"{f.finding.code} {f.title}" for f in result.applied)
        if args.diff and result.changed:
            out.write(unified_diff(shown, result.original, result.fixed))
        if not args.quiet:
            for applied in result.applied:
                span = result.where(applied.finding)
                verb = "would fix" if args.diff else "fixed"
                out.write(f"{shown}:{outcome.location(span.start_line, span.start_col)}: {applied.finding.code} {verb}: {applied.title}\n")
        uncompiled += len({(f.function, f.span.start_line) for f in remaining if f.if_compiled})
        for finding in remaining:
            if finding.if_compiled:  # one line in the summary, not one per finding
                reasons["not-compiled"] += 1
                continue
            decline = result.decline_for(finding)
            if decline is not None:
                reason, key = decline.explanation("apply it explicitly, or use --fix-level {level}"), decline.key
            else:
                reason, key = "no automatic rewrite for this rule; see the finding's advice", "no-fixer"
            reasons[key] += 1
            if not args.quiet:
                # in place, positions are in the file as now written; with --diff, in the original
                span = result.where(finding) if args.diff else finding.span
                out.write(f"{shown}:{outcome.location(span.start_line, span.start_col)}: {finding.code} not fixed: {reason}\n")
    if args.statistics:
        for title, count in titles.most_common():
            out.write(f"{count:6d}  fixed     {title}\n")
        for key, count in reasons.most_common():
            out.write(f"{count:6d}  declined  {key}\n")
    verb = "Would fix" if args.diff else "Fixed"
    # the count is of findings gone (checked statically), not of rewrites: one `if` moved into an
    # op can remove a branch and a log call at once
    out.write(
        f"{verb} {fixed} graph break{'s' if fixed != 1 else ''} in {changed_files} file{'s' if changed_files != 1 else ''}"
        f" ({rewrites} rewrite{'s' if rewrites != 1 else ''}); {left} left"
        + (f"; {uncompiled} more in functions nothing known compiles, not rewritten (name them in `[tool.graphmend] compiled`)" if uncompiled else "")
        + ".\n"
    )
    if failed:
        return EXIT_USAGE
    if args.exit_zero:
        return EXIT_CLEAN
    if args.diff:
        return EXIT_FINDINGS if changed_files else EXIT_CLEAN
    return EXIT_FINDINGS if left else EXIT_CLEAN


def run_rules(args: argparse.Namespace) -> int:
    if args.format == "markdown":
        print("| code | name | what | effect |\n|---|---|---|---|")
        for rule in ALL_RULES:
            what = rule.message.replace("{subject}", "…").replace("|", "\\|")
            print(f"| {rule.code} | {rule.name} | {what} | {rule.effect.value} |")
        return EXIT_CLEAN
    for rule in ALL_RULES:
        print(f"{rule.code}  {rule.name:34s} {rule.why}")
    return EXIT_CLEAN


# The analysis walks syntax trees recursively: a sum of 600 terms is 600 nested nodes, several
# Python frames each. Python 3.11 runs Python-to-Python calls without growing the C stack, so a
# higher limit is safe here; past it, only the statement too deep is skipped (see walker.walk_body).
RECURSION_LIMIT = 10_000


# The cyclic collector's thresholds for a run over many files (inherited by forked workers).
# Python's default collects the youngest objects every 700 allocations and every object after
# each 100 of those; a file's analysis keeps its syntax tree and facts alive for the whole file,
# so each collection went over them again, and collecting was 14% of `check`'s time over
# transformers' `models/` (gc.callbacks, stop 59). Ten times fewer young collections and fewer
# full ones: 10% (mypy raises its thresholds for the same reason).
COLLECTOR_THRESHOLDS = (7000, 10, 10)


def main(argv: Sequence[str] | None = None) -> int:
    sys.setrecursionlimit(max(sys.getrecursionlimit(), RECURSION_LIMIT))
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return _run(parser, args)
    except BrokenPipeError:
        # `graphmend check | head`: the reader left; stop quietly, as other command-line tools do
        # (and keep Python from reporting the same error again when it flushes stdout at exit)
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return EXIT_FINDINGS


def _run(parser: argparse.ArgumentParser, args: argparse.Namespace) -> int:
    if args.command in ("check", "fix"):
        gc.set_threshold(*COLLECTOR_THRESHOLDS)
    if args.command == "check":
        return run_check(args)
    if args.command == "fix":
        return run_fix(args)
    if args.command == "rules":
        return run_rules(args)
    if args.command == "explain":
        return explain_command.run_explain(args)
    if args.command == "lsp":
        from .lsp.server import main as serve  # pygls is imported only for the server

        serve(tcp=args.tcp, host=args.host)
        return EXIT_CLEAN
    parser.error(f"unknown command {args.command}")
    return EXIT_USAGE


if __name__ == "__main__":
    sys.exit(main())
