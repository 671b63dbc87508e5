"""The `graphmend` command line: `check` now; `fix`, `explain` and `lsp` build on the same analysis.

Exit codes (as ruff): 0 no findings, 1 findings, 2 usage or configuration error.
"""

from __future__ import annotations

import argparse
import os
import sys
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Sequence

from . import __version__
from .analysis import analyze
from .analysis.rules import ALL_RULES
from .config import Config, ConfigError, config_for, load_config
from .files import discover, read_source
from .findings import Finding, Severity
from .output import write_github, write_json, write_statistics, write_text

EXIT_CLEAN, EXIT_FINDINGS, EXIT_USAGE = 0, 1, 2


@dataclass
class FileResult:
    path: Path
    findings: list[Finding] = field(default_factory=list)
    skip_reason: str | None = None


def check_file(path: Path, config: Config) -> FileResult:
    source = read_source(path, config.max_file_bytes)
    if source.text is None:
        return FileResult(path, skip_reason=source.skip_reason)
    return FileResult(path, analyze(source.text, str(path), config))


def _check_file_job(job: tuple[Path, Config]) -> FileResult:
    return check_file(*job)


def check_files(paths: list[Path], config: Config, jobs: int) -> list[FileResult]:
    if jobs <= 1 or len(paths) < 4:
        return [check_file(path, config) for path in paths]
    with ProcessPoolExecutor(max_workers=jobs) as pool:
        chunk = max(1, len(paths) // (jobs * 8))
        return list(pool.map(_check_file_job, [(p, config) for p in paths], chunksize=chunk))


def _codes(value: str) -> list[str]:
    return [part.strip() for part in value.split(",") if part.strip()]


def _display_path(path: Path) -> str:
    try:
        relative = os.path.relpath(path)
    except ValueError:
        return str(path)
    return relative if not relative.startswith("..") else str(path)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="graphmend",
        description="Find (and fix) TorchDynamo graph breaks in PyTorch code, statically.",
    )
    parser.add_argument("--version", action="version", version=f"graphmend {__version__}")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    check = commands.add_parser("check", help="report predicted graph breaks", description="Report predicted graph breaks.")
    check.add_argument("paths", nargs="*", type=Path, default=[Path(".")], help="files or directories (default: .)")
    check.add_argument("--format", choices=("text", "json", "github"), default="text", help="output format")
    check.add_argument("--select", type=_codes, help="comma-separated codes or prefixes to report (replaces the config's)")
    check.add_argument("--ignore", type=_codes, help="comma-separated codes or prefixes to leave out (replaces the config's)")
    check.add_argument("--extend-ignore", type=_codes, help="codes or prefixes to leave out in addition to the config's")
    check.add_argument("--config", type=Path, help="a pyproject.toml to read [tool.graphmend] from")
    check.add_argument(
        "--no-compile-forward",
        action="store_true",
        help="only treat explicitly compiled functions as compiled, not every nn.Module.forward",
    )
    check.add_argument("--jobs", "-j", type=int, default=os.cpu_count() or 1, help="parallel worker processes")
    check.add_argument("--statistics", action="store_true", help="print the number of findings per code")
    check.add_argument("--exit-zero", action="store_true", help="exit 0 even when there are findings")
    check.add_argument("--quiet", "-q", action="store_true", help="print findings only, no summary")

    rules = commands.add_parser("rules", help="list the rules", description="List every rule with its code and summary.")
    rules.add_argument("--format", choices=("text", "markdown"), default="text")
    return parser


def _load_configuration(args: argparse.Namespace) -> Config:
    if args.config is not None:
        config = load_config(args.config)
    else:
        start = args.paths[0] if args.paths else Path(".")
        config = config_for(start if start.exists() else Path("."))
    return config.with_overrides(
        select=args.select,
        ignore=args.ignore,
        extend_ignore=args.extend_ignore,
        compile_forward=False if args.no_compile_forward else None,
    )


def run_check(args: argparse.Namespace) -> int:
    if args.jobs < 1:
        print("graphmend: --jobs must be at least 1", file=sys.stderr)
        return EXIT_USAGE
    try:
        config = _load_configuration(args)
        paths = list(discover(args.paths, config.exclude, config.root))
    except ConfigError as exc:
        print(f"graphmend: configuration error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except FileNotFoundError as exc:
        print(f"graphmend: no such file or directory: {exc}", file=sys.stderr)
        return EXIT_USAGE
    results = check_files(paths, config, args.jobs)
    shown = [(_display_path(r.path), r.findings) for r in results if r.findings]
    skipped = [r for r in results if r.skip_reason]
    for result in skipped:
        print(f"graphmend: skipped {_display_path(result.path)}: {result.skip_reason}", file=sys.stderr)
    out = sys.stdout
    if args.format == "json":
        write_json(out, shown)
    elif args.format == "github":
        write_github(out, shown)
    else:
        write_text(out, shown)
    all_findings = [f for _, findings in shown for f in findings]
    if args.statistics:
        write_statistics(out if args.format == "text" else sys.stderr, all_findings)
    if args.format == "text" and not args.quiet:
        checked = len(results) - len(skipped)
        if all_findings:
            whole = sum(1 for f in all_findings if f.severity is Severity.ERROR)
            print(
                f"Found {len(all_findings)} graph break{'s' if len(all_findings) != 1 else ''} "
                f"({whole} costing a whole function or more) in {len(shown)} of {checked} file{'s' if checked != 1 else ''}"
                + (f"; skipped {len(skipped)}." if skipped else "."),
                file=out,
            )
        else:
            print(f"No graph breaks found in {checked} file{'s' if checked != 1 else ''}.", file=out)
    if all_findings and not args.exit_zero:
        return EXIT_FINDINGS
    return EXIT_CLEAN


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


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command == "check":
        return run_check(args)
    if args.command == "rules":
        return run_rules(args)
    parser.error(f"unknown command {args.command}")
    return EXIT_USAGE


if __name__ == "__main__":
    sys.exit(main())
