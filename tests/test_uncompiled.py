"""Functions nothing known compiles: checked as if compiled, reported `if_compiled` (information, no
fix), and only those that work on tensors and are not training, I/O or test code
(analysis/uncompiled.py). Whether such a finding is a break once compiled is checked against dynamo
by the corpus (`# expect if compiled:` markers, tests/ground_truth.py)."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest
from graphmend import Config, analyze
from graphmend.findings import Finding, Severity
from graphmend.rewrite import fix_source
from graphmend.rewrite.engine import break_count, plan_fixes
from graphmend.rewrite.model import Declined

from .cli_runner import run


def _conditional(source: str, path: str = "losses.py", config: Config | None = None) -> list[tuple[int, str, str]]:
    findings = analyze(textwrap.dedent(source), path, config, strict=True)
    return [(f.span.start_line, f.code, f.function) for f in findings if f.if_compiled]


LOSS = """
import torch

def focal(pred, target):
    p = torch.sigmoid(pred)
    return (p - target).abs().mean() * p.max().item()
"""


def test_a_function_on_tensors_nothing_compiles_is_reported_if_compiled() -> None:
    findings = analyze(textwrap.dedent(LOSS), "losses.py", strict=True)
    assert [(f.span.start_line, f.code, f.if_compiled, f.severity) for f in findings] == [(6, "GM201", True, Severity.INFO)]
    assert '("losses.py:focal")' in findings[0].message
    assert break_count(findings) == 0  # not a break of code known to be compiled
    assert analyze(textwrap.dedent(LOSS), "losses.py", Config(check_uncompiled=False), strict=True) == []


def test_naming_it_compiled_makes_it_an_ordinary_finding() -> None:
    config = Config(compiled=("losses.py:focal",))
    findings = analyze(textwrap.dedent(LOSS), "losses.py", config, strict=True)
    assert [(f.code, f.if_compiled, f.severity) for f in findings] == [("GM201", False, Severity.WARNING)]


def test_a_helper_is_walked_from_its_caller_and_named_after_it() -> None:
    source = """
    import torch

    def _scale(x):
        return x * x.max().item()

    def loss(pred, target):
        return _scale(pred.view(-1) - target).mean()
    """
    findings = [f for f in analyze(textwrap.dedent(source), "losses.py", strict=True) if f.if_compiled]
    assert [(f.span.start_line, f.function) for f in findings] == [(5, "_scale")]
    assert "compiles `loss`" in findings[0].message  # reached through `loss`, the function to name



def test_a_public_helper_keeps_the_arms_its_callers_here_never_take() -> None:
    """Walked from a function nothing known compiles, a helper is taken with the constant its
    caller passes only where it is private: a public one is called from other files too, where
    `mode="slow"` may be passed, and its `mode == "slow"` arm is checked as if compiled."""
    source = """
    import torch

    def scale(x, mode="fast"):
        if mode == "slow" and x.sum() > 0:
            x = x * 2
        return x

    def _scale(x, mode="fast"):
        if mode == "slow" and x.sum() > 0:
            x = x * 2
        return x

    def loss(pred):
        y = pred.view(-1)
        return scale(y).mean() + _scale(y).mean()
    """
    assert _conditional(source) == [(5, "GM101", "scale")]

@pytest.mark.parametrize(
    "source",
    [
        pytest.param(
            """
            import torch

            def train_step(model, batch, opt):
                loss = model(batch).mean()
                loss.backward()
                opt.step()
                return loss.item()
            """,
            id="backward",
        ),
        pytest.param(
            """
            import torch

            def checkpoint(state, path):
                torch.save(state, path)
                return state["w"].sum().item()
            """,
            id="torch-save",
        ),
        pytest.param(
            """
            import torch

            class Net(torch.nn.Module):
                def summary(self, x):
                    return x.view(-1).sum().item()
            """,
            id="module-method-not-forward",
        ),
        pytest.param(
            """
            import functools
            import torch

            @functools.lru_cache
            def table(x):
                return x.view(-1).sum().item()
            """,
            id="other-decorator",
        ),
        pytest.param(
            """
            import torch

            def main(x):
                return x.view(-1).sum().item()
            """,
            id="main",
        ),
        pytest.param(
            """
            import numpy as np

            def total(x):
                return x.reshape(-1).sum().item()
            """,
            id="no-torch-import",
        ),
        pytest.param(
            """
            import torch

            def total(count, scale):
                return count * scale
            """,
            id="no-tensor-evidence",
        ),
    ],
)
def test_code_that_runs_but_is_not_compiled_is_left_out(source: str) -> None:
    assert _conditional(source) == []


def test_test_files_are_left_out() -> None:
    assert _conditional(LOSS, "test_losses.py") == []
    assert _conditional(LOSS, "losses.py") == [(6, "GM201", "focal")]


def test_an_annotated_tensor_parameter_is_evidence_enough() -> None:
    source = """
    import torch
    from torch import Tensor

    def norm(x: Tensor, eps: float = 1e-6):
        scale = float(x.abs().max())
        return x / (scale + eps)
    """
    assert _conditional(source) == [(6, "GM203", "norm")]


def test_no_fix_is_planned_or_applied_and_the_decline_says_why() -> None:
    source = textwrap.dedent(
        """
        import torch

        def clip(x):
            if x.sum() > 0:
                return x * 2
            return x
        """
    )
    [planned] = plan_fixes(source, "ops.py")
    assert isinstance(planned, Declined) and planned.key == "not-compiled"
    assert "name it in `[tool.graphmend] compiled`" in planned.reason
    assert fix_source(source, "ops.py").fixed == source
    named = Config(compiled=("ops.py:clip",))
    assert "torch.where" in fix_source(source, "ops.py", named).fixed  # once named, the ordinary fix


def test_check_counts_them_apart_and_they_alone_exit_zero(tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "losses.py").write_text(textwrap.dedent(LOSS), encoding="utf-8")
    code, out, _ = run(capsys, "check", "losses.py")
    assert code == 0
    assert "GM201 (if compiled)" in out
    assert "No graph breaks found in compiled code in 1 file; 1 in functions nothing known compiles" in out
    code, out, _ = run(capsys, "check", "--compiled-only", "losses.py")
    assert (code, out.strip()) == (0, "No graph breaks found in 1 file.")
    (tmp_path / "model.py").write_text(
        "import torch\n\n\n@torch.compile\ndef f(x):\n    return x.sum().item()\n", encoding="utf-8"
    )
    code, out, _ = run(capsys, "check", "losses.py", "model.py")
    assert code == 1
    assert "Found 1 graph break (0 costing a whole function or more) in 2 of 2 files, and 1 more in functions nothing known compiles" in out


def test_fix_leaves_them_and_says_so_once(tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "losses.py").write_text(textwrap.dedent(LOSS), encoding="utf-8")
    code, out, _ = run(capsys, "fix", "losses.py")
    assert code == 0
    assert out == (
        "Fixed 0 graph breaks in 0 files (0 rewrites); 0 left; 1 more in functions nothing known compiles, "
        "not rewritten (name them in `[tool.graphmend] compiled`).\n"
    )
    assert (tmp_path / "losses.py").read_text(encoding="utf-8") == textwrap.dedent(LOSS)


@pytest.mark.parametrize(
    "source",
    [
        pytest.param(
            """
            import torch
            from torch.utils.data import Dataset

            class Pairs(Dataset):
                def pick(self, x):
                    return x.view(-1).sum().item()
            """,
            id="framework-base",
        ),
        pytest.param(
            """
            import torch

            def kaiser(window):
                return window.view(-1) * window.max().item()

            class Net(torch.nn.Module):
                def __init__(self, window):
                    super().__init__()
                    self.register_buffer("taps", kaiser(window))
            """,
            id="called-only-from-init",
        ),
        pytest.param(
            """
            import torch

            class Clip(torch.autograd.Function):
                @staticmethod
                def forward(ctx, x):
                    return x.clamp(max=x.max().item())
            """,
            id="autograd-function",
        ),
    ],
)
def test_code_the_file_shows_runs_elsewhere_is_left_out(source: str) -> None:
    assert _conditional(source) == []


def test_a_plain_class_method_and_a_function_the_file_never_calls_are_checked() -> None:
    source = """
    import torch

    class Sampler:
        def step(self, x):
            return x.view(-1) * x.max().item()

    def scale(x):
        return x.view(-1) * x.max().item()
    """
    assert _conditional(source) == [(6, "GM201", "Sampler.step"), (9, "GM201", "scale")]


def test_a_helper_called_from_setup_and_from_a_checked_function_is_checked_through_that_one() -> None:
    source = """
    import torch

    def _scale(x):
        return x.view(-1) * x.max().item()

    class Normalizer:
        def __init__(self, x):
            self.reference = _scale(x)

        def apply(self, x):
            return _scale(torch.abs(x)) - self.reference
    """
    assert _conditional(source) == [(5, "GM201", "_scale")]
    only_setup = source.replace("return _scale(torch.abs(x)) - self.reference", "return torch.abs(x) - self.reference")
    assert _conditional(only_setup) == []


def test_call_is_what_calling_an_instance_runs() -> None:
    source = """
    import torch

    class Normalize:
        def __call__(self, img):
            return img.view(-1) / img.max().item()
    """
    assert _conditional(source) == [(6, "GM201", "Normalize.__call__")]


def test_the_summary_of_latent_findings_alone_still_counts_them() -> None:
    """Latent findings whose hiding break is suppressed: no counted break, but not "nothing in
    compiled code" either (review of stop 48)."""
    from graphmend.cli import found_summary
    from graphmend.findings import Span

    latent = Finding("GM201", Span(3, 0, 3, 5), "m", Severity.INFO, function="f", latent=True)
    uncompiled = Finding("GM201", Span(9, 0, 9, 5), "m", Severity.INFO, function="g", if_compiled=True)
    assert found_summary([latent, uncompiled], 1, 1, 0) == (
        "Found 0 graph breaks (0 costing a whole function or more) in 1 of 1 file, 1 latent behind them "
        "(dynamo reaches those once the breaks before them are fixed), and 1 more in functions nothing known compiles "
        "(breaks if they are compiled: `--compiled-only` hides them)."
    )


def test_a_nested_function_of_a_candidate_is_its_code() -> None:
    source = """
    import torch

    def helper(x: torch.Tensor):
        def pick(v, m):
            return v[m].sum()

        return pick(x, x > 0)
    """
    findings = analyze(textwrap.dedent(source), "ops.py", strict=True)
    assert [(f.code, f.function, f.if_compiled, f.severity) for f in findings] == [("GM402", "helper.<locals>.pick", True, Severity.INFO)]
    assert "compiles `helper`" in findings[0].message


def test_fixes_are_the_same_with_and_without_the_uncompiled_pass() -> None:
    """Every call of a file's reporting helper is rewritten, an uncompiled caller's too; how it is
    must not depend on what the uncompiled pass learnt there (review of stop 48: its tensor `if`
    moved into the op only when the pass had run)."""
    source = textwrap.dedent(
        """
        import math, warnings
        import torch

        def rank_zero_warn(message, category=UserWarning):
            warnings.warn(message, category, stacklevel=2)

        @torch.compile
        def f(var_x, var_y):
            bound = math.sqrt(torch.finfo(var_x.dtype).eps)
            if (var_x < bound).any() or (var_y < bound).any():
                rank_zero_warn(f"variance close to zero (dtype {var_x.dtype}).", UserWarning)
            return var_x.sqrt() + var_y.sqrt()

        def f_uc(var_x, var_y):
            bound = math.sqrt(torch.finfo(var_x.dtype).eps)
            if (var_x < bound).any() or (var_y < bound).any():
                rank_zero_warn(f"variance close to zero (dtype {var_x.dtype}).", UserWarning)
            return var_x.sqrt() + var_y.sqrt()
        """
    )
    with_pass = fix_source(source, "metrics.py")
    without = fix_source(source, "metrics.py", Config(check_uncompiled=False))
    assert with_pass.applied and with_pass.fixed == without.fixed
    assert any(f.if_compiled for f in with_pass.before)


def test_a_helper_called_by_a_function_that_only_passes_tensors_on_is_checked() -> None:
    """facenet-pytorch's `pnet_stage(reg, probs, scale, thresh)` hands its parameters to
    `generateBoundingBox`, with no use of its own that shows they are tensors: the caller is no
    candidate, but nothing says it runs outside compiled code, so the helper is checked."""
    source = """
    import torch

    def generate(reg, probs, thresh):
        mask = probs.sigmoid() >= thresh
        return reg.permute(1, 0)[:, mask]

    def stage(reg, probs, thresh):
        return generate(reg, probs, thresh)
    """
    assert _conditional(source) == [(6, "GM402", "generate")]


@pytest.mark.parametrize("path", ["timm/data/random_erasing.py", "pkg/transforms/intensity.py", "pkg/optim/lamb.py", "vision/transforms.py"])
def test_data_pipeline_and_optimizer_code_is_left_out_by_its_place(path: str) -> None:
    assert _conditional(LOSS, path) == []
    assert _conditional(LOSS, "pkg/models/losses.py") == [(6, "GM201", "focal")]


def test_folders_above_the_project_do_not_count() -> None:
    assert _conditional(LOSS, "/data/projects/vision/models/losses.py") == [(6, "GM201", "focal")]
    inside = Config(root=Path("/data/projects/vision"))
    assert _conditional(LOSS, "/data/projects/vision/models/losses.py", inside) == [(6, "GM201", "focal")]
    assert _conditional(LOSS, "/data/projects/vision/data/losses.py", inside) == []


def test_a_modules_inference_entry_point_is_checked_but_its_other_methods_are_not() -> None:
    source = """
    import torch
    from torch import nn

    class Decoder(nn.Module):
        def forward(self, x):
            return x * 2

        def infer(self, memory: torch.Tensor):
            n = int(memory.sum().item())
            return memory[:n]

        def reset_cache(self, memory: torch.Tensor):
            self.cached = memory.max().item()
    """
    assert _conditional(source, "decoder.py") == [(10, "GM201", "Decoder.infer")]


def test_a_plain_class_method_called_on_self_returns_its_kind() -> None:
    source = """
    import torch

    class PoseLoss:
        def _select(self, keypoints):
            return torch.cat([keypoints, keypoints])

        def __call__(self, keypoints: torch.Tensor, masks):
            selected = self._select(keypoints)
            return selected[masks].sum()
    """
    assert _conditional(source, "pose.py") == [(10, "GM402", "PoseLoss.__call__")]


def test_a_parameter_converted_with_to_and_then_used_as_a_tensor_takes_tensors() -> None:
    source = """
    import torch

    def class_count(target, n_support):
        target_cpu = target.to("cpu")
        classes = torch.unique(target_cpu)
        return len(classes) - n_support
    """
    assert _conditional(source, "protonet.py") == [(6, "GM404", "class_count")]
