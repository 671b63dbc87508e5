"""The analyser's contract: positions, suppressions, configuration, regions, robustness.

Whether a rule is *right* is decided against real dynamo in test_corpus.py; these tests pin down
the behaviour around the rules.
"""

from __future__ import annotations

import textwrap

import pytest
from graphmend import Config, analyze
from graphmend.analysis import analyze_detailed
from graphmend.config import ConfigError, config_from_table, rule_selected
from graphmend.findings import Severity


def codes(source: str, config: Config | None = None) -> list[tuple[int, str]]:
    return [(f.span.start_line, f.code) for f in analyze(textwrap.dedent(source), config=config, strict=True)]


SIMPLE = """
import torch

@torch.compile
def f(x):
    y = x * 2
    if y.sum() > 0:
        print("positive")
    return y
"""


# -- positions ---------------------------------------------------------------------------------
def test_columns_are_characters_not_utf8_bytes() -> None:
    source = textwrap.dedent(
        """
        import torch

        @torch.compile
        def f(x):
            s = "→ é"; n = x.sum().item()
            return x * n
        """
    )
    (finding,) = analyze(source, strict=True)
    line = source.splitlines()[finding.span.start_line - 1]
    assert line[finding.span.start_col : finding.span.end_col] == "x.sum().item()"


def test_spans_cover_multi_line_expressions() -> None:
    source = textwrap.dedent(
        """
        import torch

        @torch.compile
        def f(x):
            print(
                "value",
                x.shape,
            )
            return x
        """
    )
    (finding,) = analyze(source, strict=True)
    assert (finding.span.start_line, finding.span.end_line) == (6, 9)


def test_lines_split_like_the_tokenizer_not_like_splitlines() -> None:
    # A form feed is not a line break for Python; str.splitlines would shift every position.
    source = "import torch\n\x0c\n@torch.compile\ndef f(x):\n    return x.sum().item()\n"
    (finding,) = analyze(source, strict=True)
    assert finding.span.start_line == 5 and finding.span.start_col == 11


# -- robustness ----------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "source, fragment",
    [
        ("def f(:\n    pass\n", "does not parse"),
        ("x = 1\0\n", "null bytes"),
        ("x = " + "(" * 300 + ")" * 300 + "\n", "too many nested parentheses"),
        ("x = a" + ".b" * 200_000 + "\n", "nested too deeply"),
        ("x = " + "-" * 100_000 + "1\n", "too large"),
        ("@torch.compile\ndef f(x):\n    if x.sum(\n", "does not parse"),
    ],
)
def test_unparsable_source_gives_one_gm000(source: str, fragment: str) -> None:
    (finding,) = analyze(source)
    assert finding.code == "GM000" and fragment in finding.message
    assert finding.severity.value == "error"


def test_half_typed_code_inside_a_region_never_raises() -> None:
    # Every prefix of a real file, as an editor sees it while the user types.
    source = textwrap.dedent(SIMPLE)
    for end in range(len(source)):
        findings = analyze(source[:end])
        assert all(f.code in {"GM000", "GM101", "GM301"} for f in findings)


def test_empty_and_whitespace_sources() -> None:
    assert analyze("") == []
    assert analyze("\n\n   \n") == []


# -- suppressions ----------------------------------------------------------------------------------
def test_suppression_by_code_prefix_and_bare() -> None:
    base = textwrap.dedent(SIMPLE)
    assert codes(base) == [(7, "GM101"), (8, "GM301")]
    suppressed = base.replace("> 0:", "> 0:  # graphmend: ignore[GM101]")
    assert codes(suppressed) == [(8, "GM301")]
    by_prefix = base.replace('print("positive")', 'print("positive")  # graphmend: ignore[gm3]')
    assert codes(by_prefix) == [(7, "GM101")]
    other_code = base.replace("> 0:", "> 0:  # graphmend: ignore[GM201]")
    assert codes(other_code) == [(7, "GM101"), (8, "GM301")]
    bare = base.replace("> 0:", "> 0:  # graphmend: ignore")
    assert codes(bare) == [(8, "GM301")]


def test_suppression_on_the_last_line_of_a_multi_line_finding() -> None:
    source = textwrap.dedent(
        """
        import torch

        @torch.compile
        def f(x):
            print(
                x.shape,
            )  # graphmend: ignore[GM301]
            return x
        """
    )
    assert codes(source) == []


def test_file_level_suppression() -> None:
    source = "# graphmend: ignore-file[GM3]\n" + textwrap.dedent(SIMPLE)
    assert codes(source) == [(8, "GM101")]


# -- configuration ----------------------------------------------------------------------------------
def test_selection_prefers_the_most_specific_entry() -> None:
    assert rule_selected("GM101", ["GM"], [])
    assert not rule_selected("GM101", ["GM"], ["GM1"])
    assert rule_selected("GM101", ["GM101"], ["GM1"])
    assert not rule_selected("GM101", ["GM1"], ["GM1"])  # a tie goes to ignore
    assert rule_selected("GM201", ["ALL"], ["GM1"])
    assert not rule_selected("GM201", ["GM1"], [])


def test_config_select_and_ignore_filter_findings() -> None:
    assert codes(SIMPLE, Config(select=("GM3",))) == [(8, "GM301")]
    assert codes(SIMPLE, Config(ignore=("GM301",))) == [(7, "GM101")]


@pytest.mark.parametrize(
    "table, message",
    [
        ({"select": "GM1"}, "must be a list"),
        ({"select": ["GM1", "E501"]}, "'E501' is not a rule code"),
        ({"compile-forward": "yes"}, "must be true or false"),
        ({"max-file-bytes": 0}, "positive integer"),
        ({"samples": {"a.py:Net": 3}}, "must map"),
        ({"exclude": "build"}, "list of glob patterns"),
        ({"unknown": 1}, "unknown key 'unknown'"),
    ],
)
def test_invalid_settings_name_the_problem(table: dict, message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        config_from_table(table, "pyproject.toml")


# -- regions ---------------------------------------------------------------------------------------
def test_code_outside_compiled_regions_is_not_flagged() -> None:
    source = """
    import torch

    def eager_helper(x):
        print(x.sum().item())

    class NotAModule:
        def forward(self, x):
            print(x)
    """
    findings = analyze(textwrap.dedent(source), strict=True)
    # checked as if compiled (it works on tensors), but only as a break if it is compiled
    assert [(f.span.start_line, f.code, f.if_compiled, f.severity) for f in findings] == [
        (5, "GM301", True, Severity.INFO),
        (5, "GM201", True, Severity.INFO),
    ]
    assert "Nothing GraphMend sees compiles `eager_helper`" in findings[0].message
    assert codes(source, Config(check_uncompiled=False)) == []


def test_forward_of_modules_is_compiled_unless_disabled() -> None:
    source = """
    import torch
    from torch import nn

    class Net(nn.Module):
        def forward(self, x):
            return x + x.sum().item()
    """
    assert codes(source) == [(7, "GM201")]
    assert not analyze(textwrap.dedent(source), strict=True)[0].if_compiled
    assert codes(source, Config(compile_forward=False, check_uncompiled=False)) == []
    # without compile-forward, a forward is one more function nothing known compiles
    assert [f.if_compiled for f in analyze(textwrap.dedent(source), config=Config(compile_forward=False), strict=True)] == [True]


def test_compile_call_targets_are_regions_even_without_forward_default() -> None:
    source = """
    import torch
    from torch import nn

    class Net(nn.Module):
        def forward(self, x):
            return x + x.sum().item()

    def step(x):
        return x.tolist()

    model = Net()
    compiled = torch.compile(model)
    fast_step = torch.compile(step)
    """
    assert codes(source, Config(compile_forward=False)) == [(7, "GM201"), (10, "GM202")]


def test_why_each_function_counts_as_compiled() -> None:
    source = textwrap.dedent(
        """
        import torch
        from torch import nn

        def helper(t):
            return t

        class Net(nn.Module):
            def forward(self, x):
                return helper(x)
        """
    )
    result = analyze_detailed(source)
    assert result.compiled == {
        "Net.forward": "`Net.forward`, the forward of an nn.Module",
        "helper": "called from `Net.forward` on line 10",
    }


def test_a_loop_in_the_caller_amplifies_a_break_in_the_callee() -> None:
    source = textwrap.dedent(
        """
        import torch

        def helper(t):
            return t + t.sum().item()

        @torch.compile
        def f(x):
            for _ in range(2):
                x = helper(x)
            return x
        """
    )
    (finding,) = analyze(source, strict=True)
    assert finding.span.start_line == 5 and finding.effect == "frame-skip" and finding.severity.value == "error"
    assert "`helper` is called inside the `for` loop on line 9 of `f`" in finding.message
    assert finding.related and finding.related[0].span.start_line == 9


def test_unknown_values_never_warn_on_their_own() -> None:
    source = """
    import torch

    @torch.compile
    def f(x, flag=None, scale=2.0, *args, **kwargs):
        value = some_library_call(x)
        if value:
            x = x + 1
        if flag and kwargs.get("k"):
            x = x * scale
        return x + len(args)
    """
    assert codes(source) == []


DEEP = f'''import torch


@torch.compile
def f(x):
    print(x)
    y = {" + ".join(["x"] * 600)}
    z = y{".t()" * 900}
    if x.sum() > 0:
        y = y + 1
    return y
'''


def test_a_statement_too_deep_to_walk_costs_only_itself() -> None:
    import sys

    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(1000)  # the interpreter's default, whatever the process set
    try:
        found = sorted((f.code, f.span.start_line) for f in analyze(DEEP, "deep.py"))
    finally:
        sys.setrecursionlimit(limit)
    assert found == [("GM001", 7), ("GM001", 8), ("GM101", 9), ("GM301", 6)]


def test_the_command_line_walks_long_expressions_whole(tmp_path) -> None:  # type: ignore[no-untyped-def]
    import subprocess
    import sys

    path = tmp_path / "deep.py"
    path.write_text(DEEP, encoding="utf-8")
    done = subprocess.run([sys.executable, "-m", "graphmend", "check", str(path)], capture_output=True, text=True, timeout=120)
    assert "GM101" in done.stdout and "GM301" in done.stdout and "GM001" not in done.stdout, done.stdout + done.stderr


TORCHSCRIPT_STYLE = '''import torchvision
from torch import nn


class Paste(nn.Module):
    def forward(self, mask, box):
        # type: (Tensor, Tensor) -> Tensor
        w = int(box[2] - box[0] + 1)
        if torchvision._is_tracing():
            return mask[: int(box[3])]
        return mask[:w]


class Untyped(nn.Module):
    def forward(self, mask, box):
        w = int(box[2] - box[0] + 1)
        return mask[:w]
'''


def test_a_type_comment_signature_gives_parameters_their_kinds() -> None:
    """torchvision declares tensors in TorchScript type comments (`Tensor` needs no import
    there): `int(box[...])` of a commented `box` breaks; of an untyped one it is not known to.
    Under `torchvision._is_tracing()` (False while dynamo traces) nothing is reported."""
    found = [(f.code, f.span.start_line) for f in analyze(TORCHSCRIPT_STYLE)]
    assert found == [("GM203", 8)]


def test_a_malformed_type_comment_is_ignored() -> None:
    source = TORCHSCRIPT_STYLE.replace("# type: (Tensor, Tensor) -> Tensor", "# type: (Tensor, Tensor -> ")
    assert [(f.code, f.span.start_line) for f in analyze(source)] == []
