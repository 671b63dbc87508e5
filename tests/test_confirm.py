"""Runtime confirmation through the CLI (`graphmend explain`): real TorchDynamo on CPU, each static
finding marked against it, and every way a run can fail reported clearly (exit 2, no hang)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from .confirm_project import HELPERS, NET, ground_truth_breaks, make_project, marked_lines
from .processes import running


def explain(root: Path, *args: str, timeout: float = 300) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "graphmend", "explain", *args],
        cwd=root,
        capture_output=True,
        text=True,
        timeout=timeout,
        env=dict(os.environ, GRAPHMEND_TEST_PIDFILE=str(root / "pid.txt")),
    )


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_project(tmp_path_factory.mktemp("confirm"))


@pytest.fixture(scope="module")
def explained(project: Path) -> tuple[subprocess.CompletedProcess, dict]:
    completed = explain(project, "net.py:Net", "--format", "json")
    return completed, json.loads(completed.stdout)


def test_breaks_match_real_dynamo_and_the_marked_lines(project: Path, explained: tuple) -> None:
    completed, report = explained
    assert completed.returncode == 1, completed.stderr  # dynamo breaks: exit 1
    found = {(Path(b["path"]).name, b["line"]) for b in report["breaks"]}
    expected = {("net.py", line) for line in marked_lines(NET, "BREAK")} | {("helpers.py", line) for line in marked_lines(HELPERS, "BREAK")}
    assert found == expected
    assert found == ground_truth_breaks(project)
    assert report["graphs"] == len(found) + 1  # each break ends a graph here: nothing is skipped
    assert report["device"] == "cpu" and report["torch"].startswith("2.")
    assert all(b["gb_id"] and b["gb_id"].startswith("GB") and b["summary"] and b["hints"] for b in report["breaks"])
    assert set(report["timings"]) >= {"import_s", "factory_s", "first_call_s"}


def test_each_static_finding_is_marked(explained: tuple) -> None:
    _, report = explained
    marks = {(Path(f["path"]).name, f["line"]): (f["code"], f["mark"]) for f in report["findings"]}
    for line in marked_lines(NET, "BREAK"):
        assert marks[("net.py", line)] == ("GM101", "confirmed")
    (not_seen,) = marked_lines(NET, "NOT-SEEN")
    assert marks[("net.py", not_seen)] == ("GM101", "not-seen")
    (not_reached,) = marked_lines(NET, "NOT-REACHED")
    assert marks[("net.py", not_reached)][1] == "not-reached"
    # the helper is compiled only because Net.forward calls it from another file: dynamo's break
    # there is runtime-only (the CLI does not follow calls across files; the language server does)
    (helper_line,) = marked_lines(HELPERS, "BREAK")
    assert [(Path(b["path"]).name, b["line"]) for b in report["runtime_only"]] == [("helpers.py", helper_line)]
    assert report["summary"] == {"confirmed": 2, "runtime_only": 1, "not_seen": 1, "not_reached": 1}


def test_text_output_names_lines_reasons_and_the_comparison(project: Path) -> None:
    completed = explain(project, "net.py:Net")
    assert completed.returncode == 1, completed.stderr
    out = completed.stdout
    assert "net.py:Net: TorchDynamo:" in out and "on cpu" in out
    (first,) = sorted(marked_lines(NET, "BREAK"))[:1]
    assert f"net.py:{first}: GB0170 Data-dependent branching [predicted by GM101]" in out
    assert "if h.sum() > 0:  # BREAK" in out  # the source line
    assert "[runtime-only: no static finding]" in out and "hint:" in out
    assert "summary: 2 confirmed, 1 runtime-only, 1 not seen, 1 not reached" in out


def test_a_target_without_breaks_exits_zero(tmp_path: Path) -> None:
    (tmp_path / "clean.py").write_text(
        "import torch\n\ndef f(x):\n    return torch.relu(x) * 2\n\ndef sample():\n    return f, (torch.randn(3),), {}\n",
        encoding="utf-8",
    )
    completed = explain(tmp_path, "clean.py:f", "--sample", "clean.py:sample")
    assert completed.returncode == 0, completed.stderr
    assert "1 graph, 0 break sites" in completed.stdout


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (["net.py:Missing"], "no sample input for net.py:Missing"),
        (["broken.py:make_sample"], "importing the target's module failed for broken.py:make_sample: ModuleNotFoundError"),
        (["failing.py:compute"], "the sample factory raised for failing.py:compute: ValueError: the sample needs a config file"),
        (["failing.py:compute", "--sample", "failing.py:wrong_shape"], "must return (callable, args, kwargs)"),
        (["failing.py:compute", "--sample", "failing.py:crashes"], "was killed by signal SIGABRT"),
        (["failing.py:compute", "--sample", "failing.py:nope"], "AttributeError"),
        (["net.py", "--sample", "net.py:make_sample"], "is not of the form path/to/file.py:Name"),
    ],
)
def test_failures_are_clear_and_exit_2(project: Path, args: list[str], expected: str) -> None:
    completed = explain(project, *args)
    assert completed.returncode == 2
    assert expected in completed.stderr, completed.stderr[-3000:]
    assert completed.stdout == ""


def test_a_run_past_the_timeout_is_stopped_with_its_process(project: Path) -> None:
    completed = explain(project, "failing.py:compute", "--sample", "failing.py:hangs", "--timeout", "15")
    assert completed.returncode == 2
    assert "took longer than 15 s and was stopped" in completed.stderr
    pid = int((project / "pid.txt").read_text())
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)


def test_a_process_that_left_the_session_is_stopped_too(project: Path) -> None:
    completed = explain(project, "failing.py:compute", "--sample", "failing.py:escapes", "--timeout", "15")
    assert completed.returncode == 2 and "was stopped" in completed.stderr
    escaped = int((project / "escaped.txt").read_text())
    deadline = time.monotonic() + 10
    while running(escaped) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not running(escaped), "the process that left the worker's session is still running"


def test_user_modules_named_like_graphmend_internals_are_the_users(tmp_path: Path) -> None:
    """The worker runs from graphmend/runtime/, next to runner.py and samples.py: those names
    must still resolve to the user's files."""
    (tmp_path / "samples.py").write_text(
        "import torch\n\ndef f(x):\n    return x * 2\n\ndef make_sample():\n    return f, (torch.randn(3),), {}\n", encoding="utf-8"
    )
    completed = explain(tmp_path, "samples.py:f", "--sample", "samples.py:make_sample")
    assert completed.returncode == 0, completed.stderr


def test_a_call_that_raises_before_any_break_is_no_answer(tmp_path: Path) -> None:
    (tmp_path / "bad.py").write_text(
        "import torch\n\ndef f(x):\n    return x @ x\n\ndef make_sample():\n    return f, (torch.randn(2, 3),), {}\n", encoding="utf-8"
    )
    completed = explain(tmp_path, "bad.py:f", "--sample", "bad.py:make_sample")
    assert completed.returncode == 2, completed.stdout + completed.stderr
    assert "the compiled call raised" in completed.stdout
