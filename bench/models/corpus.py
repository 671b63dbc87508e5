"""One transformers release, installed apart from the project's environment, in three variants:
`original`, `safe` (after `graphmend fix`), `costly` (after `graphmend fix --fix-level costly`) and
`unsafe` (after `graphmend fix --fix-level unsafe`).

    .cache/bench/transformers-4.52.4/site/          pip --target install (transformers + its deps)
    .cache/bench/transformers-4.52.4/safe/transformers/    a copy of the package, fixed
    .cache/bench/transformers-4.52.4/unsafe/transformers/

A probe for a variant runs with PYTHONPATH = the variant's directory, then site/: the variant's
transformers package shadows the installed one, the dependencies are shared. torch is never
installed here (it is the project's pinned CPU wheel).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
CACHE = Path(os.environ.get("GRAPHMEND_BENCH_CACHE", ROOT / ".cache" / "bench"))
VARIANTS = ("original", "safe", "costly", "unsafe")
FIXED = VARIANTS[1:]
# how each fixed variant is made, for logs and reports
FIX_COMMAND = {"safe": "graphmend fix", "costly": "graphmend fix --fix-level costly", "unsafe": "graphmend fix --fix-level unsafe"}


@dataclass(frozen=True)
class Corpus:
    version: str
    base: Path

    @property
    def site(self) -> Path:
        return self.base / "site"

    def package(self, variant: str) -> Path:
        return (self.site if variant == "original" else self.base / variant) / "transformers"

    def pythonpath(self, variant: str) -> str:
        entries = [str(self.site)] if variant == "original" else [str(self.base / variant), str(self.site)]
        return os.pathsep.join(entries + [str(ROOT / "server")])

    def fix_log(self, variant: str) -> Path:
        return self.base / f"{variant}.fix.txt"


def prepare(version: str, log=print, refix: tuple[str, ...] = ()) -> Corpus:  # type: ignore[no-untyped-def]
    """Install `transformers==version` (once) and make the fixed copies (once per version, again
    for the variants in `refix`: after the fixers changed)."""
    corpus = Corpus(version, CACHE / f"transformers-{version}")
    for variant in refix:
        (corpus.base / variant / ".fixed").unlink(missing_ok=True)
    if not (corpus.site / "transformers" / "__init__.py").is_file():
        log(f"installing transformers=={version} into {corpus.site}")
        subprocess.run(
            [sys.executable, "-m", "pip", "install", "--quiet", "--target", str(corpus.site), f"transformers=={version}"],
            check=True,
        )
        for leftover in corpus.site.glob("torch*"):  # never shadow the project's torch
            shutil.rmtree(leftover, ignore_errors=True)
    for variant in FIXED:
        stamp = corpus.base / variant / ".fixed"
        if stamp.is_file():
            continue
        target = corpus.package(variant)
        shutil.rmtree(target, ignore_errors=True)
        shutil.copytree(corpus.package("original"), target, ignore=shutil.ignore_patterns("__pycache__"))
        log(f"{FIX_COMMAND[variant]} on a copy of transformers {version}")
        command = [sys.executable, "-m", "graphmend", "fix", str(target), "--exit-zero", "--quiet", "--statistics", "-j", "2", "--fix-level", variant]
        done = subprocess.run(command, capture_output=True, text=True, cwd=corpus.base)
        corpus.fix_log(variant).write_text(done.stdout + done.stderr, encoding="utf-8")
        if done.returncode not in (0, 1):
            raise RuntimeError(f"graphmend fix failed on {target}: {done.stderr[-2000:]}")
        stamp.write_text("", encoding="utf-8")
    return corpus
