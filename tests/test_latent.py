"""Latent findings against real dynamo where the corpus format cannot hold the case: dynamo logs the
frame skip of a loop over `enumerate` at a location outside the case file, which the corpus test
rejects as a break elsewhere. Here the records are read directly."""

from __future__ import annotations

from pathlib import Path

from graphmend.analysis import analyze
from graphmend.findings import Finding
from graphmend.runtime.worker import capture

from .ground_truth import import_case

ENUMERATE_LOOP = '''import torch


@torch.compile
def f(x):
    y = x * 2
    for i, v in enumerate([0.5, 0.25, 0.1]):
        y = y * v
        print("step")
        if i > 10:
            return y
    return y + y.sum().item()


def inputs():
    return [(torch.ones(3),)]
'''


def test_a_loop_over_enumerate_stops_the_frame_and_what_follows_is_latent(tmp_path: Path) -> None:
    """The `return` in the body would let dynamo resume after the print (its bytecode scan meets
    the return first), but it cannot rebuild the enumerate iterator mid-loop, so it skips the frame
    and never reaches the `.item()`: the analyser says so (frame-skip at the print, latent after)."""
    path = tmp_path / "enumerate_loop.py"
    path.write_text(ENUMERATE_LOOP, encoding="utf-8")
    module = import_case(path)
    records = capture(module.f, module.inputs()[0])["breaks"]
    in_file = {record["line"] for record in records if record["file"] == str(path)}
    assert in_file == {9}, records
    assert any(record.get("frame_skip") for record in records), records

    findings = {(f.span.start_line, f.code): f for f in analyze(ENUMERATE_LOOP, str(path))}
    assert findings[(9, "GM301")].effect == "frame-skip" and not findings[(9, "GM301")].latent
    assert findings[(12, "GM201")].latent


def _breaks_and_findings(tmp_path: Path, name: str, source: str) -> tuple[set[int], dict[tuple[int, str], Finding]]:
    """The lines in the case file where real dynamo breaks on its first input, and the analyser's
    findings by (line, code)."""
    path = tmp_path / name
    path.write_text(source, encoding="utf-8")
    module = import_case(path)
    records = capture(module.f, module.inputs()[0])["breaks"]
    lines = {record["line"] for record in records if record["file"] == str(path)}
    return lines, {(f.span.start_line, f.code): f for f in analyze(source, str(path))}


UNTRACEABLE_WITH = '''import torch


@torch.compile
def f(x):
    y = x * 2
    with torch.backends.cudnn.flags(enabled=False):
        z = y.sum().item()
    return y * z


def inputs():
    return [(torch.ones(3),)]
'''


def test_entering_an_untraceable_context_manager_makes_what_follows_latent(tmp_path: Path) -> None:
    """Dynamo skips the whole function at the `with` it cannot enter and logs nothing after it: the
    `.item()` inside the block is latent (it breaks once the `with` is gone), not a break today."""
    lines, findings = _breaks_and_findings(tmp_path, "untraceable_with.py", UNTRACEABLE_WITH)
    assert lines == {7}
    assert findings[(7, "GM514")].effect == "frame-skip" and not findings[(7, "GM514")].latent
    assert findings[(8, "GM201")].latent


WITH_IN_A_LOOP = '''import torch


@torch.compile
def f(x, n: int):
    y = x * 2
    for _ in range(n):
        with torch.backends.cudnn.flags(enabled=False):
            y = y + 1
    return y + y.sum().item()


def inputs():
    return [(torch.ones(3), 0)]
'''


def test_a_with_in_a_loop_that_may_not_run_leaves_what_follows_counted(tmp_path: Path) -> None:
    """A loop body may not run (here it runs 0 times): dynamo then traces on past it and breaks
    at the `.item()`, which must stay a counted break, not a latent one."""
    lines, findings = _breaks_and_findings(tmp_path, "with_in_loop.py", WITH_IN_A_LOOP)
    assert lines == {10}
    assert not findings[(10, "GM201")].latent


HELPER_WITH_A_LOOP = '''import torch


def g(x, ks):
    out = x.new_zeros(())
    for i in range(2):
        v, _ = torch.topk(x[i], k=ks[i])
        out = out + v.sum()
    if out > 0:
        out = out * 2
    return out


@torch.compile
def f(x):
    ks = (x > 0).sum(1).clamp(min=1, max=4)
    return g(x, ks) + 1


def inputs():
    return [(torch.randn(3, 5),)]
'''


def test_a_break_in_a_loop_of_a_called_function_makes_the_rest_of_that_function_latent(tmp_path: Path) -> None:
    """The break in `g`'s loop stops `f`'s frame at the call; dynamo then runs `g` as a frame of its
    own, meets the break in the loop again and runs all of `g` eagerly: the `if` after the loop is
    never reported (YOLOX's SimOTA matching). It is latent, not a break today."""
    lines, findings = _breaks_and_findings(tmp_path, "helper_with_a_loop.py", HELPER_WITH_A_LOOP)
    assert lines == {7}
    assert findings[(7, "GM206")].effect == "frame-skip" and not findings[(7, "GM206")].latent
    assert findings[(9, "GM101")].latent


ARM_IN_A_LOOP = '''import torch


@torch.compile
def f(x, flag: bool):
    loss = x.sum() * 0
    keep = x[:, 0] > 0
    for c in range(2):
        a = x[:, c]
        if flag:
            a = a[keep]
            b = x[:, c][keep]
            loss = loss + b.sum()
        loss = loss + a.sum()
    return loss


def inputs():
    return [(torch.tensor([[1.0, 2.0], [-1.0, 0.5], [3.0, -2.0], [0.5, 0.25]]), True)]
'''


def test_the_rest_of_an_arm_inside_a_loop_after_a_break_there_is_latent(tmp_path: Path) -> None:
    """A break in an arm of an undecided `if` inside a loop stops the frame when that arm runs:
    the rest of the arm runs after it in the same iteration and is never reported (segmentation
    models' focal loss: `cls_y_true[not_ignored]`, then `cls_y_pred[not_ignored]`)."""
    lines, findings = _breaks_and_findings(tmp_path, "arm_in_loop.py", ARM_IN_A_LOOP)
    assert lines == {11}
    assert not findings[(11, "GM402")].latent
    assert findings[(12, "GM402")].latent
