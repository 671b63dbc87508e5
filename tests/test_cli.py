"""`graphmend check`: output formats, exit codes, bad input that must not stop a run."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from graphmend.cli import main

from .cli_runner import run

BREAKING = '''import torch

@torch.compile
def f(x):
    y = x * 2
    if y.sum() > 0:
        print("positive", *y.shape)  # `*`: no safe fix (the checks below look at plain findings)
    return y
'''
CLEAN = '''import torch

@torch.compile
def f(x):
    return x * 2 + x.shape[0]
'''


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "model.py").write_text(BREAKING, encoding="utf-8")
    (tmp_path / "clean.py").write_text(CLEAN, encoding="utf-8")
    return tmp_path


def test_text_lines_are_path_line_col_code_message(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "check", "model.py")
    lines = out.splitlines()
    assert code == 1
    assert lines[0].startswith("model.py:6:8: GM101 `if` branches on the tensor value `y.sum() > 0`")
    assert lines[1].startswith("model.py:7:9: GM301 ")
    assert lines[-1] == "Found 2 graph breaks (0 costing a whole function or more) in 1 of 1 file."


def test_clean_file_exits_zero(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "check", "clean.py")
    assert code == 0
    assert out.strip() == "No graph breaks found in 1 file."


def test_json_format_has_the_documented_fields(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "check", "--format", "json", ".")
    records = json.loads(out)
    assert code == 1
    assert [r["code"] for r in records] == ["GM101", "GM301"]
    first = records[0]
    assert {"path", "line", "column", "end_line", "end_column", "code", "message", "severity", "fixable"} <= set(first)
    assert (first["path"], first["line"], first["column"], first["end_line"], first["end_column"]) == ("model.py", 6, 8, 6, 19)
    assert first["severity"] == "warning" and first["fixable"] is False


LATENT = '''import torch


@torch.compile
def f(x):
    for step in range(3):
        x = x + step
        print(step)
    if x.sum().item() > 0:
        x = x + 1
    return x
'''


def test_latent_breaks_are_marked_and_counted_apart(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The print in the loop makes dynamo run the rest of `f` eagerly: the `.item()` after it is
    latent (tests/corpus/amp_latent_after_skipped_loop.py checks the same against dynamo)."""
    (project / "latent.py").write_text(LATENT, encoding="utf-8")
    _, out, _ = run(capsys, "check", "--format", "json", "latent.py")
    records = {r["line"]: r for r in json.loads(out)}
    assert records[8]["latent"] is False and records[8]["severity"] == "error"
    assert records[9]["latent"] is True and records[9]["severity"] == "info"
    _, out, _ = run(capsys, "check", "latent.py")
    line_nine = next(line for line in out.splitlines() if line.startswith("latent.py:9:"))
    assert " GM201 " in line_nine and "(latent)" in line_nine
    assert out.splitlines()[-2].startswith("Found 1 graph break (1 costing a whole function or more) in 1 of 1 file, and 1 latent behind them")


FIXABLE = '''import torch


@torch.compile
def f(x):
    y = x * 2
    if y.sum() > 0:
        y = y + 1
    print(y)
    return y
'''


def _apply(text: str, replacements: list[dict]) -> str:
    """Apply SARIF replacements (1-based lines, 1-based code-point columns) as a consumer would."""
    lines = text.splitlines(keepends=True)
    starts = [0]
    for line in lines:
        starts.append(starts[-1] + len(line))

    def offset(line: int, column: int) -> int:
        return starts[line - 1] + column - 1

    for replacement in sorted(replacements, key=lambda r: (r["deletedRegion"]["startLine"], r["deletedRegion"]["startColumn"]), reverse=True):
        region = replacement["deletedRegion"]
        start, end = offset(region["startLine"], region["startColumn"]), offset(region["endLine"], region["endColumn"])
        text = text[:start] + replacement["insertedContent"]["text"] + text[end:]
    return text


def test_sarif_has_rules_results_and_the_safe_fixes(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from graphmend.rewrite import fix_source

    (project / "fixable.py").write_text(FIXABLE, encoding="utf-8")
    code, out, _ = run(capsys, "check", "--format", "sarif", ".")
    log = json.loads(out)
    assert code == 1 and log["version"] == "2.1.0"
    (sarif_run,) = log["runs"]
    rules = {rule["id"] for rule in sarif_run["tool"]["driver"]["rules"]}
    results = sarif_run["results"]
    assert {r["ruleId"] for r in results} == rules == {"GM101", "GM301"}
    assert all(r["level"] in ("error", "warning", "note") and r["message"]["text"] for r in results)
    model = [r for r in results if r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] == "model.py"]
    assert [r["locations"][0]["physicalLocation"]["region"]["startLine"] for r in model] == [6, 7]
    assert not any("fixes" in r for r in model)  # model.py's print has no safe fix, so its if has none
    fixed = [r for r in results if "fixes" in r]
    assert {r["ruleId"] for r in fixed} == {"GM101", "GM301"}
    for result in fixed:  # each fix alone is what `graphmend fix --select <its code>` writes
        (change,) = result["fixes"][0]["artifactChanges"]
        alone = fix_source(FIXABLE, "fixable.py", codes=frozenset({result["ruleId"]})).fixed
        assert _apply(FIXABLE, change["replacements"]) == alone


# The OASIS SARIF 2.1.0 schema, as Microsoft's SARIF SDK ships it (npm devDependency; `make test`
# runs `npm ci` first).
SARIF_SCHEMA = Path(__file__).resolve().parents[1] / "node_modules" / "@microsoft" / "jest-sarif" / "lib" / "schemas" / "sarif-2.1.0-rtm.5.json"


def test_sarif_output_is_valid_against_the_sarif_2_1_0_schema(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    import jsonschema

    assert SARIF_SCHEMA.is_file(), f"{SARIF_SCHEMA} is missing: run `npm ci` in the repository root (make test does)"
    schema = json.loads(SARIF_SCHEMA.read_text(encoding="utf-8"))
    (project / "fixable.py").write_text(FIXABLE, encoding="utf-8")
    (project / "broken.py").write_text("def f(:\n", encoding="utf-8")  # a parse error is reported too
    _, out, _ = run(capsys, "check", "--format", "sarif", ".")
    log = json.loads(out)
    assert log["runs"][0]["results"], "nothing to validate"
    validator = jsonschema.validators.validator_for(schema)(schema)  # the schema's own draft (04)
    problems = sorted(f"{'/'.join(map(str, e.absolute_path))}: {e.message}" for e in validator.iter_errors(log))
    assert not problems, "\n".join(problems[:10])
    log["runs"][0]["results"][0]["level"] = "fatal"  # the validator does reject what SARIF forbids
    assert any(e.validator == "enum" for e in validator.iter_errors(log))


def test_github_format_escapes_and_annotates(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _, out, _ = run(capsys, "check", "--format", "github", "model.py")
    first = out.splitlines()[0]
    assert first.startswith("::warning file=model.py,line=6,col=8,endLine=6,endColumn=19,title=GraphMend GM101 (tensor-if)::")
    assert "\n" not in first


def test_select_and_ignore_by_prefix(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _, out, _ = run(capsys, "check", "--select", "GM3", "model.py")
    assert [line.split()[1] for line in out.splitlines()[:-1]] == ["GM301"]
    code, out, _ = run(capsys, "check", "--ignore", "GM1,GM3", "model.py")
    assert code == 0


def test_pyproject_configuration_applies(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (project / "pyproject.toml").write_text('[tool.graphmend]\nignore = ["GM3"]\nselect = ["GM", "GM301"]\n')
    _, out, _ = run(capsys, "check", "model.py")
    assert [line.split()[1] for line in out.splitlines()[:-1]] == ["GM101", "GM301"]  # GM301 is more specific
    (project / "pyproject.toml").write_text('[tool.graphmend]\nignore = ["GM3"]\n')
    _, out, _ = run(capsys, "check", "model.py")
    assert [line.split()[1] for line in out.splitlines()[:-1]] == ["GM101"]


def test_each_file_uses_its_own_pyproject(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """As in the editor and in ruff: a file in a subproject is checked with the subproject's
    [tool.graphmend], the others with theirs; --config overrides both."""
    (project / "pyproject.toml").write_text('[tool.graphmend]\nignore = ["GM3"]\n')
    sub = project / "sub"
    sub.mkdir()
    (sub / "pyproject.toml").write_text('[tool.graphmend]\nselect = ["GM3"]\n')
    (sub / "model.py").write_text((project / "model.py").read_text())
    _, out, _ = run(capsys, "check", "model.py", "sub/model.py")
    reported = sorted((line.split(":")[0], line.split()[1]) for line in out.splitlines()[:-1])
    assert reported == [("model.py", "GM101"), (str(Path("sub/model.py")), "GM301")]
    _, out, _ = run(capsys, "check", "--config", "pyproject.toml", "model.py", "sub/model.py")
    assert sorted(line.split()[1] for line in out.splitlines()[:-1]) == ["GM101", "GM101"]


def test_invalid_configuration_is_a_usage_error(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (project / "pyproject.toml").write_text('[tool.graphmend]\nselect = ["XX1"]\n')
    code, _, err = run(capsys, "check", "model.py")
    assert code == 2
    assert "'XX1' is not a rule code" in err and "pyproject.toml" in err
    (project / "pyproject.toml").write_text('[tool.graphmend]\nselekt = ["GM1"]\n')
    code, _, err = run(capsys, "check", "model.py")
    assert code == 2 and "unknown key 'selekt'" in err


def test_usage_errors_exit_two(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run(capsys, "check", "missing.py")
    assert code == 2 and "no such file" in err
    with pytest.raises(SystemExit) as raised:
        main(["check", "--format", "xml", "model.py"])
    assert raised.value.code == 2
    code, _, _ = run(capsys, "check", "--jobs", "0", "model.py")
    assert code == 2


def test_syntax_error_is_one_gm000_finding_and_the_run_goes_on(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (project / "broken.py").write_text("import torch\ndef f(x:\n    return x\n", encoding="utf-8")
    code, out, _ = run(capsys, "check", "--format", "json", ".")
    records = json.loads(out)
    assert code == 1
    broken = [r for r in records if r["path"] == "broken.py"]
    assert len(broken) == 1 and broken[0]["code"] == "GM000" and broken[0]["severity"] == "error"
    assert broken[0]["line"] == 2
    assert any(r["path"] == "model.py" for r in records)


def test_binary_and_non_utf8_files_are_skipped_with_a_message(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (project / "blob.py").write_bytes(b"\x00\x01\x02binary")
    (project / "latin.py").write_bytes("x = 'caf\u00e9'\n".encode("latin-1"))
    (project / "declared.py").write_bytes(b"# -*- coding: latin-1 -*-\nx = '\xe9'\n")
    code, out, err = run(capsys, "check", ".")
    assert "skipped blob.py: binary file" in err
    assert "skipped latin.py: not valid UTF-8 text" in err
    assert "declared.py" not in err  # a PEP 263 cookie is honoured, as Python does
    assert code == 1 and "model.py:6:8" in out
    assert out.splitlines()[-1].endswith("; skipped 2.")


def test_directories_skip_virtualenvs_and_respect_exclude(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    venv = project / ".venv" / "lib"
    venv.mkdir(parents=True)
    (venv / "vendored.py").write_text(BREAKING, encoding="utf-8")
    (project / "generated").mkdir()
    (project / "generated" / "gen.py").write_text(BREAKING, encoding="utf-8")
    (project / "pyproject.toml").write_text('[tool.graphmend]\nexclude = ["generated/"]\n')
    _, out, _ = run(capsys, "check", "--format", "json", ".")
    assert {r["path"] for r in json.loads(out)} == {"model.py"}


def test_parallel_jobs_give_the_same_result(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    for number in range(6):
        (project / f"copy{number}.py").write_text(BREAKING, encoding="utf-8")
    _, serial, _ = run(capsys, "check", "--format", "json", "-j", "1", ".")
    _, parallel, _ = run(capsys, "check", "--format", "json", "-j", "2", ".")
    assert json.loads(serial) == json.loads(parallel)
    assert len(json.loads(serial)) == 14


def test_statistics_counts_findings_per_code(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _, out, _ = run(capsys, "check", "--statistics", "-q", "model.py")
    assert "     1  GM101  tensor-if" in out and "     1  GM301  print" in out


def test_console_script_runs_as_a_module(project: Path) -> None:
    result = subprocess.run(
        [sys.executable, "-m", "graphmend", "check", "model.py", "--format", "json"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 1
    assert [r["code"] for r in json.loads(result.stdout)] == ["GM101", "GM301"]


def test_rules_command_lists_every_rule(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "rules")
    from graphmend.analysis.rules import ALL_RULES

    assert code == 0
    assert [line.split()[0] for line in out.splitlines()] == [rule.code for rule in ALL_RULES]


MASKED_SUM = '''import torch

@torch.compile
def f(x):
    return x[x > 0].sum()
'''


def _hook_command(hook_id: str) -> list[str]:
    """The command pre-commit runs for a hook of .pre-commit-hooks.yaml (before the file names)."""
    import shlex

    import yaml

    hooks = yaml.safe_load((Path(__file__).resolve().parents[1] / ".pre-commit-hooks.yaml").read_text(encoding="utf-8"))
    (hook,) = [h for h in hooks if h["id"] == hook_id]
    assert hook["language"] == "python" and hook["types_or"] == ["python", "jupyter"]
    program, *arguments = shlex.split(hook["entry"])
    assert program == "graphmend"
    return [sys.executable, "-m", "graphmend", *arguments]


def test_pre_commit_hooks_check_and_fix_the_named_files_but_not_excluded_ones(project: Path) -> None:
    (project / "generated").mkdir()
    (project / "generated" / "gen.py").write_text(MASKED_SUM, encoding="utf-8")
    (project / "fixable.py").write_text(MASKED_SUM, encoding="utf-8")
    (project / "pyproject.toml").write_text('[tool.graphmend]\nexclude = ["generated/"]\n')
    names = ["model.py", "clean.py", "fixable.py", "generated/gen.py"]  # pre-commit passes each changed file

    checked = subprocess.run([*_hook_command("graphmend"), "--format", "json", *names], capture_output=True, text=True, check=False)
    assert checked.returncode == 1, checked.stderr
    assert {r["path"] for r in json.loads(checked.stdout)} == {"model.py", "fixable.py"}

    fixed = subprocess.run([*_hook_command("graphmend-fix"), *names], capture_output=True, text=True, check=False)
    assert fixed.returncode == 0, fixed.stdout + fixed.stderr  # pre-commit fails the hook itself: files changed
    assert "torch.where(x > 0, x, 0).sum()" in (project / "fixable.py").read_text(encoding="utf-8")
    assert (project / "generated" / "gen.py").read_text(encoding="utf-8") == MASKED_SUM
    assert (project / "model.py").read_text(encoding="utf-8") == BREAKING  # no safe fix there


HELPER = '''import torch


def accuracy(pred, target, ignore_index=-100):
    if (target != ignore_index).sum() == 0:
        return pred.new_tensor(0.0)
    return (pred.argmax(-1) == target).float().mean()


class Scheduler:
    def step(self, x):
        return x * x.max().item()
'''


def test_functions_compiled_elsewhere_are_analysed_when_the_config_names_them(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (project / "losses.py").write_text(HELPER, encoding="utf-8")
    code, out, _ = run(capsys, "check", "--format", "json", "losses.py")
    # nothing here is compiled as far as the file shows: breaks only if compiled, no fix, exit 0
    assert [(r["line"], r["code"], r["if_compiled"], r["severity"], r["fixable"]) for r in json.loads(out)] == [
        (5, "GM101", True, "info", False),
        (12, "GM201", True, "info", False),
    ]
    assert code == 0
    _, out, _ = run(capsys, "check", "--format", "json", "--compiled-only", "losses.py")
    assert json.loads(out) == []
    (project / "pyproject.toml").write_text('[tool.graphmend]\ncompiled = ["losses.py:accuracy", "*.py:Scheduler.step"]\n')
    code, out, _ = run(capsys, "check", "--format", "json", "losses.py")
    assert [(r["line"], r["code"], r["if_compiled"]) for r in json.loads(out)] == [(5, "GM101", False), (12, "GM201", False)]
    assert code == 1


CLOSURE = '''import torch


def make(scale):
    def step(x):
        if x.sum() > 0:
            x = x * scale
        return x

    return step
'''


def test_a_closure_is_named_compiled_by_its_qualified_name(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """`make.<locals>.step`, as Python's `__qualname__` names what `make()` returns."""
    (project / "steps.py").write_text(CLOSURE, encoding="utf-8")
    (project / "pyproject.toml").write_text('[tool.graphmend]\ncompiled = ["steps.py:make.<locals>.step"]\n')
    _, out, _ = run(capsys, "check", "--format", "json", "steps.py")
    assert [(r["line"], r["code"]) for r in json.loads(out)] == [(6, "GM101")]
    (project / "pyproject.toml").write_text('[tool.graphmend]\ncompiled = ["steps.py:make.<locals>.other"]\n')
    _, out, _ = run(capsys, "check", "--format", "json", "steps.py")
    assert json.loads(out) == []


def test_a_compiled_entry_without_a_path_is_a_configuration_error(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (project / "pyproject.toml").write_text('[tool.graphmend]\ncompiled = ["accuracy"]\n')
    code, _, err = run(capsys, "check", "model.py")
    assert code == 2 and "`compiled`" in err and "path.py:Name" in err


OPS = '''import torch


def keep_positive(boxes: torch.Tensor, scores: torch.Tensor):
    if (scores > 0).sum() == 0:
        return boxes * 0
    return boxes * 2


def largest(x):
    return x.max().item()


def unused(x):
    return x.max().item()  # never called from compiled code: a break only if compiled
'''
HEAD = '''import torch.nn as nn

from . import ops
from .ops import keep_positive


class Head(nn.Module):
    def forward(self, boxes, scores):
        out = keep_positive(boxes, scores)
        return out + ops.largest(out)
'''


def _package(project: Path) -> None:
    (project / "pkg").mkdir()
    (project / "pkg" / "__init__.py").write_text("", encoding="utf-8")
    (project / "pkg" / "ops.py").write_text(OPS, encoding="utf-8")
    (project / "pkg" / "head.py").write_text(HEAD, encoding="utf-8")


def test_helpers_in_other_checked_files_called_from_compiled_code_are_analysed(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _package(project)
    _, out, _ = run(capsys, "check", "--format", "json", "pkg")
    assert [(r["path"], r["line"], r["code"], r["function"], r["if_compiled"]) for r in json.loads(out)] == [
        ("pkg/ops.py", 5, "GM101", "keep_positive", False),
        ("pkg/ops.py", 11, "GM201", "largest", False),
        ("pkg/ops.py", 15, "GM201", "unused", True),
    ]
    _, out, _ = run(capsys, "check", "--format", "json", "--no-cross-module", "pkg")
    assert all(r["if_compiled"] for r in json.loads(out))  # no compiled caller seen: all only if compiled
    _, out, _ = run(capsys, "check", "--format", "json", "--no-cross-module", "--compiled-only", "pkg")
    assert json.loads(out) == []
    _, out, _ = run(capsys, "check", "--format", "json", "pkg/head.py")  # ops.py not checked: not reported
    assert json.loads(out) == []


def test_fix_rewrites_a_helper_called_from_compiled_code_in_another_file(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _package(project)
    _code, out, _ = run(capsys, "fix", "pkg")
    assert "pkg/ops.py:5:8: GM101 fixed" in out
    assert "torch.where((scores > 0).sum() == 0, boxes * 0, boxes * 2)" in (project / "pkg" / "ops.py").read_text(encoding="utf-8")


def _write_tree(project: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        (project / name).parent.mkdir(parents=True, exist_ok=True)
        (project / name).write_text(text, encoding="utf-8")


MIXIN_PACKAGE = {
    "pkg/__init__.py": "",
    "pkg/base.py": (
        "import warnings\n\n\nclass Mixin:\n    def extended_mask(self, mask, device=None):\n"
        "        if device is not None:\n            warnings.warn('device is deprecated', FutureWarning)\n"
        "        return mask[:, None, None, :].float()\n\n    def unused(self, x):\n        return x.sum().item()\n"
    ),
    "pkg/model.py": (
        "from torch import nn\n\nfrom .base import Mixin\n\n\nclass Net(nn.Module, Mixin):\n    def __init__(self):\n"
        "        super().__init__()\n        self.proj = nn.Linear(4, 4)\n\n    def own(self, x):\n        return x * 2\n\n"
        "    def forward(self, x, mask):\n        return self.own(self.proj(x)) * self.extended_mask(mask, x.device).sum()\n"
    ),
}


def test_a_method_inherited_from_a_base_in_another_module_is_analysed_as_compiled(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """transformers' shape: a model's forward calls `self.get_extended_attention_mask(...)`, defined
    on a mixin in `modeling_utils.py`, whose `warnings.warn` dynamo skips (3 graphs, measured with
    this package). Methods the class defines itself, and ones never called, are not followed."""
    _write_tree(project, MIXIN_PACKAGE)
    _, out, _ = run(capsys, "check", "--format", "json", "pkg")
    assert [(r["path"], r["line"], r["code"], r["function"]) for r in json.loads(out)] == [("pkg/base.py", 7, "GM307", "Mixin.extended_mask")]
    _, out, _ = run(capsys, "check", "--format", "json", "--no-cross-module", "pkg")
    assert json.loads(out) == []


def test_a_disable_alias_re_exported_by_another_module_is_seen(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """timm's shape: `disable_compiler` bound in `layers/_fx.py`, re-exported by `layers/__init__.py`,
    decorating a method in `model.py`. The call breaks (GM502); the body is never traced."""
    (project / "pkg" / "layers").mkdir(parents=True)
    (project / "pkg" / "__init__.py").write_text("", encoding="utf-8")
    (project / "pkg" / "layers" / "_fx.py").write_text(
        "import torch\n\n\ndef nullwrap(fn=None):\n    return fn\n\n\n"
        'disable_compiler = getattr(getattr(torch, "compiler", None), "disable", None) or nullwrap\n',
        encoding="utf-8",
    )
    (project / "pkg" / "layers" / "__init__.py").write_text("from ._fx import disable_compiler\n", encoding="utf-8")
    (project / "pkg" / "model.py").write_text(
        "from torch import nn\n\nfrom .layers import disable_compiler\n\n\nclass Net(nn.Module):\n"
        "    @disable_compiler\n    def pack(self, x):\n        return x.nonzero()\n\n"
        "    def forward(self, x):\n        return self.pack(x).sum() + x.sum()\n",
        encoding="utf-8",
    )
    _, out, _ = run(capsys, "check", "--format", "json", "pkg")
    assert [(r["path"], r["line"], r["code"]) for r in json.loads(out)] == [("pkg/model.py", 12, "GM502")]
    _, out, _ = run(capsys, "check", "--format", "json", "pkg/model.py")  # pre-commit: the changed file only
    assert [(r["path"], r["line"], r["code"]) for r in json.loads(out)] == [("pkg/model.py", 12, "GM502")]
    _, out, _ = run(capsys, "check", "--format", "json", "--no-cross-module", "pkg")
    assert [(r["path"], r["line"], r["code"]) for r in json.loads(out)] == [("pkg/model.py", 9, "GM401")]  # one file cannot tell


def test_a_compiling_query_wrapped_in_another_module_guards_dead_code(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """kornia's shape: `is_compiling` in `core/utils.py` returns torch.compiler.is_compiling()
    (imported under another name in a `try`), re-exported by `core/__init__.py`; a loss checks its
    input only `if not is_compiling():`, which dynamo never enters (measured in
    tests/corpus/guard_compiling_wrapper.py). One file alone cannot tell."""
    (project / "pkg" / "core").mkdir(parents=True)
    (project / "pkg" / "__init__.py").write_text("", encoding="utf-8")
    (project / "pkg" / "core" / "utils.py").write_text(
        "try:\n    from torch.compiler import is_compiling as _torch_is_compiling\nexcept ImportError:\n"
        "    _torch_is_compiling = None\n\n\ndef is_compiling() -> bool:\n"
        "    return bool(_torch_is_compiling()) if _torch_is_compiling is not None else False\n",
        encoding="utf-8",
    )
    (project / "pkg" / "core" / "__init__.py").write_text("from .utils import is_compiling\n", encoding="utf-8")
    (project / "pkg" / "loss.py").write_text(
        "from torch import nn\n\nfrom .core import is_compiling\n\n\nclass Loss(nn.Module):\n"
        "    def forward(self, x):\n        if not is_compiling():\n            if (x < 0).any():\n"
        "                raise ValueError('negative')\n        return x.sum()\n",
        encoding="utf-8",
    )
    _, out, _ = run(capsys, "check", "--format", "json", "pkg")
    assert json.loads(out) == []
    _, out, _ = run(capsys, "check", "--format", "json", "--no-cross-module", "pkg")
    assert [(r["path"], r["line"], r["code"]) for r in json.loads(out)] == [("pkg/loss.py", 9, "GM101")]


def test_watch_checks_again_after_a_change(project: Path) -> None:
    process = subprocess.Popen(
        [sys.executable, "-m", "graphmend", "check", "--watch", "--format", "json", "clean.py", "model.py"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        # Ctrl+C as in a terminal, even when the suite itself runs as a background job (a shell
        # without job control starts those with SIGINT ignored, and children inherit that)
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    try:
        assert process.stderr is not None and process.stdout is not None
        while "watching for changes" not in process.stderr.readline():
            assert process.poll() is None, process.stderr.read()
        changed = CLEAN + "\n\n@torch.compile\ndef g(x):\n    return x.item()\n"
        done = threading.Event()

        def edit() -> None:  # again until seen: the watcher may start a moment after it says so
            for number in range(30):
                (project / "clean.py").write_text(changed + "#" * number + "\n", encoding="utf-8")
                if done.wait(1.0):
                    return

        editor = threading.Thread(target=edit, daemon=True)
        editor.start()
        seen = ""
        while "clean.py" not in seen.split("== ")[-1]:
            seen += process.stdout.readline()
        while '"code": "GM201"' not in seen:  # the new finding, from the run after the change
            seen += process.stdout.readline()
        done.set()
    finally:
        process.send_signal(signal.SIGINT)
        assert process.wait(timeout=30) == 0


def test_naming_a_module_class_as_compiled_changes_nothing_about_its_forward(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A named class is compiled through its forward, exactly as compile-forward treats it: its
    parameters are not assumed to be tensors (a decorated function's are)."""
    (project / "net.py").write_text(
        "import torch.nn as nn\n\n\nclass Net(nn.Module):\n    def forward(self, x, scale):\n"
        "        if scale > 1:\n            x = x * 2\n        return x\n",
        encoding="utf-8",
    )
    _, before, _ = run(capsys, "check", "--format", "json", "net.py")
    (project / "pyproject.toml").write_text('[tool.graphmend]\ncompiled = ["net.py:Net"]\n')
    _, after, _ = run(capsys, "check", "--format", "json", "net.py")
    assert json.loads(before) == json.loads(after) == []


def test_a_reader_that_stops_early_gets_no_traceback(project: Path) -> None:
    """`graphmend check --format json | head -c 100`: the pipe closes while GraphMend still writes.
    It stops quietly (exit 1, nothing on stderr) instead of printing a BrokenPipeError traceback."""
    body = "".join(f"\n\n@torch.compile\ndef f{n}(x):\n    print('step', {n})\n    return x.item()\n" for n in range(200))
    (project / "many.py").write_text("import torch\n" + body, encoding="utf-8")
    process = subprocess.Popen(
        [sys.executable, "-m", "graphmend", "check", "--format", "json", "many.py"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=project,
    )
    assert process.stdout is not None and process.stderr is not None
    assert len(process.stdout.read(100)) == 100
    process.stdout.close()  # the reader leaves
    errors = process.stderr.read().decode()
    assert process.wait(timeout=60) == 1
    assert "Traceback" not in errors and "BrokenPipe" not in errors, errors


def test_fixable_marks_are_the_same_when_fix_texts_are_not_rendered(tmp_path: Path) -> None:
    """`check` (text, json, github) plans fixes without rendering the ordered op's code; the
    findings it marks fixable must be exactly those a full plan fixes, a decline found only while
    writing the module-level helper (torch imported under a condition) included."""
    import dataclasses

    from graphmend.cli import check_file
    from graphmend.config import Config

    plain = tmp_path / "plain.py"
    plain.write_text(
        "import logging\nimport torch\n\nlogger = logging.getLogger(__name__)\n\n\n@torch.compile\ndef f(x):\n"
        "    y = x * 2\n    print(y.sum())\n    if y.max() > 3:\n        logger.warning('large %s', y.max())\n"
        "    if y.min() < -3:\n        raise ValueError('small')\n    return y\n",
        encoding="utf-8",
    )
    guarded = tmp_path / "guarded.py"
    guarded.write_text(
        "import logging\n\ntry:\n    import torch\nexcept ImportError:\n    torch = None\n\nlogger = logging.getLogger(__name__)\n\n\n"
        "@torch.compile\ndef f(x):\n    y = x * 2\n    logger.warning('value %s', y.sum())\n    return y\n",
        encoding="utf-8",
    )
    for path in (plain, guarded):
        full = check_file(path, Config())
        decided = check_file(path, dataclasses.replace(Config(), fix_texts=False))
        assert full.findings == decided.findings
        assert set(full.fixes) == set(decided.fixes), path.name
    assert check_file(plain, Config()).fixes, "the plain file has ordered-op fixes to compare"
    assert not check_file(guarded, Config()).fixes, "the guarded import declines the helper"
