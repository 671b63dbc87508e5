"""How brittle are the fixers? Rewrite every fixture in ways that keep its meaning and see whether
the same fixes still apply.

    .venv/bin/python bench/variations.py [--only Fixer/name ...] [--variation NAME ...] [--check]

Code nobody here wrote says the same thing in other words: `import torch as th`, other local names,
a condition held in a variable first, `x.sum()` for `torch.sum(x)`. A fixer shaped on the fixtures'
spelling declines these (the brief: fixers remove 89% of breaks where they were built and about
half elsewhere). For each fixture `.in.py` and each variation that changes it, this runs
`fix_source` at the fixture's level and compares the number of fixes applied with the unvaried
fixture's. With --check, a varied fixture whose fixes do apply is also run against real dynamo and
eagerly, as the fixture tests do (fewer breaks than its original, the same outputs): a variation must
not turn a right rewrite into a wrong one.

Prints one line per (fixture, variation) that loses fixes (or fails --check), then the totals per
variation. Exit status 0 always: this measures, the tests enforce.

With --static it varies the rules' `breaks` examples instead (server/graphmend/analysis/rules/
examples, each checked against dynamo by the test suite) and counts the findings of each expected
code that the analysis still reports: recall on code spelled differently.
"""

from __future__ import annotations

import argparse
import sys
from collections import Counter
from collections.abc import Callable
from pathlib import Path

import libcst as cst

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "server"))
sys.path.insert(0, str(ROOT))

from graphmend.rewrite import fix_source  # noqa: E402
from graphmend.rewrite.model import Safety  # noqa: E402

FIXTURES = ROOT / "tests" / "fixtures"


def _level(source: str) -> Safety:
    return Safety.UNSAFE if "UNSAFE = True" in source else Safety.COSTLY if "COSTLY = True" in source else Safety.SAFE


# -- variations --------------------------------------------------------------------------------------
class _TorchAlias(cst.CSTTransformer):
    """`import torch` -> `import torch as th`, and every `torch.` root -> `th.`."""

    def leave_Import(self, original: cst.Import, updated: cst.Import) -> cst.Import:
        self.in_import -= 1
        names = [
            alias.with_changes(asname=cst.AsName(name=cst.Name("th"))) if isinstance(alias.name, cst.Name) and alias.name.value == "torch" and alias.asname is None else alias
            for alias in updated.names
        ]
        return updated.with_changes(names=names)

    def __init__(self) -> None:
        super().__init__()
        self.in_import = 0

    def visit_Import(self, node: cst.Import) -> None:
        self.in_import += 1

    def visit_ImportFrom(self, node: cst.ImportFrom) -> None:
        self.in_import += 1

    def leave_ImportFrom(self, original: cst.ImportFrom, updated: cst.ImportFrom) -> cst.ImportFrom:
        self.in_import -= 1
        return updated

    def leave_Name(self, original: cst.Name, updated: cst.Name) -> cst.Name:
        # `import torch.nn as nn` names the module, not the alias
        return updated.with_changes(value="th") if updated.value == "torch" and not self.in_import else updated


def torch_alias(module: cst.Module) -> cst.Module:
    if "import torch\n" not in module.code:
        return module
    return module.visit(_TorchAlias())


class _RenameLocals(cst.CSTTransformer):
    """Inside each function, every name it assigns (not its parameters) gets a suffix: `h` -> `h_v`."""

    def __init__(self) -> None:
        super().__init__()
        self.stack: list[set[str]] = []

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        assigned: set[str] = set()

        class Collect(cst.CSTVisitor):
            def visit_FunctionDef(self, inner: cst.FunctionDef) -> bool:
                return inner is node

            def visit_ClassDef(self, inner: cst.ClassDef) -> bool:
                return False

            def visit_AssignTarget(self, target: cst.AssignTarget) -> None:
                for name in _target_names(target.target):
                    assigned.add(name)

            def visit_AugAssign(self, aug: cst.AugAssign) -> None:
                assigned.update(_target_names(aug.target))

            def visit_For(self, loop: cst.For) -> None:
                assigned.update(_target_names(loop.target))

        node.visit(Collect())
        globals_ = {n.name.value for s in _walk(node) if isinstance(s, (cst.Global, cst.Nonlocal)) for n in s.names}
        self.stack.append(assigned - globals_)

    def leave_FunctionDef(self, original: cst.FunctionDef, updated: cst.FunctionDef) -> cst.FunctionDef:
        self.stack.pop()
        return updated

    def leave_Name(self, original: cst.Name, updated: cst.Name) -> cst.Name:
        if self.stack and updated.value in self.stack[-1]:
            return updated.with_changes(value=updated.value + "_v")
        return updated

    def leave_Attribute(self, original: cst.Attribute, updated: cst.Attribute) -> cst.Attribute:
        # `self.h` is an attribute, not the local `h`: undo a rename of the attribute's name
        if self.stack and original.attr.value in self.stack[-1]:
            return updated.with_changes(attr=original.attr)
        return updated

    def leave_Arg(self, original: cst.Arg, updated: cst.Arg) -> cst.Arg:
        if original.keyword is not None:  # `f(h=...)`: the keyword names a parameter
            return updated.with_changes(keyword=original.keyword)
        return updated


def _walk(node: cst.CSTNode) -> list[cst.CSTNode]:
    found: list[cst.CSTNode] = []

    class Collect(cst.CSTVisitor):
        def on_visit(self, inner: cst.CSTNode) -> bool:
            found.append(inner)
            return True

    node.visit(Collect())
    return found


def _target_names(target: cst.BaseExpression) -> list[str]:
    if isinstance(target, cst.Name):
        return [target.value]
    if isinstance(target, (cst.Tuple, cst.List)):
        return [n for element in target.elements for n in _target_names(element.value)]
    return []


def rename_locals(module: cst.Module) -> cst.Module:
    return module.visit(_RenameLocals())


class _HoistConditions(cst.CSTTransformer):
    """`if <test>:` -> `condition_N = <test>` then `if condition_N:` (tests that are not a name)."""

    def __init__(self) -> None:
        super().__init__()
        self.count = 0
        self.depth = 0

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        self.depth += 1

    def leave_FunctionDef(self, original: cst.FunctionDef, updated: cst.FunctionDef) -> cst.FunctionDef:
        self.depth -= 1
        return updated

    def leave_If(self, original: cst.If, updated: cst.If) -> cst.If | cst.FlattenSentinel[cst.BaseStatement]:
        if self.depth == 0 or isinstance(updated.test, cst.Name) or _is_python_guard(updated.test):
            return updated
        self.count += 1
        name = cst.Name(f"condition_{self.count}")
        assign = cst.SimpleStatementLine([cst.Assign([cst.AssignTarget(name)], updated.test.with_changes(lpar=(), rpar=()))])
        return cst.FlattenSentinel([assign, updated.with_changes(test=name)])


def _is_python_guard(test: cst.BaseExpression) -> bool:
    """`x is None`, `isinstance(...)`, `self.training`: plain Python tests the fixers read as such."""
    code = cst.Module([]).code_for_node(test)
    return " is " in code or code.startswith(("isinstance", "not isinstance", "self.training", "hasattr", "torch.jit", "torch.compiler", "th."))


def hoist_conditions(module: cst.Module) -> cst.Module:
    # `elif` tests cannot be hoisted before their `if` without changing what runs: leave files with elif
    if any(isinstance(n, cst.If) and isinstance(n.orelse, cst.If) for n in _walk(module)):
        return module
    return module.visit(_HoistConditions())


METHOD_FUNCTIONS = frozenset({"sum", "mean", "abs", "exp", "log", "sqrt", "max", "min", "any", "all", "isnan", "isinf", "isfinite", "clamp", "argmax", "nonzero", "count_nonzero", "masked_fill", "numel"})


class _MethodCalls(cst.CSTTransformer):
    """`torch.f(x, ...)` -> `x.f(...)` for reductions and elementwise functions with a method."""

    def leave_Call(self, original: cst.Call, updated: cst.Call) -> cst.BaseExpression:
        func = updated.func
        if not (isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name) and func.value.value == "torch" and func.attr.value in METHOD_FUNCTIONS):
            return updated
        if not updated.args or updated.args[0].keyword is not None or updated.args[0].star:
            return updated
        receiver = updated.args[0].value
        if not isinstance(receiver, (cst.Name, cst.Attribute, cst.Call, cst.Subscript)):
            receiver = receiver.with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()])
        rest = list(updated.args[1:])
        if rest:
            rest[-1] = rest[-1].with_changes(comma=cst.MaybeSentinel.DEFAULT)
        return cst.Call(func=cst.Attribute(value=receiver, attr=func.attr), args=rest)


def method_calls(module: cst.Module) -> cst.Module:
    return module.visit(_MethodCalls())


class _FunctionCalls(cst.CSTTransformer):
    """`x.f(...)` -> `torch.f(x, ...)` for the same functions (a plain name or attribute receiver)."""

    def leave_Call(self, original: cst.Call, updated: cst.Call) -> cst.BaseExpression:
        func = updated.func
        if not (isinstance(func, cst.Attribute) and func.attr.value in METHOD_FUNCTIONS - {"numel", "masked_fill", "nonzero"}):
            return updated
        receiver = func.value
        if not isinstance(receiver, (cst.Name, cst.Attribute)) or _dotted(receiver).split(".")[0] in ("torch", "th", "self", "np", "math", "F", "nn"):
            return updated
        if _dotted(receiver) in ("self",) or (any(a.keyword is not None and a.keyword.value == "dim" for a in updated.args) and func.attr.value in ("max", "min")):
            return updated
        first = cst.Arg(value=receiver, comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" "))) if updated.args else cst.Arg(value=receiver)
        return cst.Call(func=cst.Attribute(value=cst.Name("torch"), attr=func.attr), args=[first, *updated.args])


def _dotted(node: cst.BaseExpression) -> str:
    if isinstance(node, cst.Name):
        return node.value
    if isinstance(node, cst.Attribute):
        return _dotted(node.value) + "." + node.attr.value
    return "?"


def function_calls(module: cst.Module) -> cst.Module:
    """Only for tensors' methods: a receiver that is a Python number or list would change meaning,
    so the variation only touches names the fixture passes tensors in (checked by --check)."""
    return module.visit(_FunctionCalls())


_FLIPPED = {cst.LessThan: cst.GreaterThan, cst.GreaterThan: cst.LessThan, cst.LessThanEqual: cst.GreaterThanEqual, cst.GreaterThanEqual: cst.LessThanEqual}


class _FlipComparisons(cst.CSTTransformer):
    """`a < b` -> `b > a` (one comparison, both sides evaluated once either way: pure operands only
    would matter for order, and the fixtures' comparisons read names and literals)."""

    def leave_Comparison(self, original: cst.Comparison, updated: cst.Comparison) -> cst.BaseExpression:
        if len(updated.comparisons) != 1:
            return updated
        target = updated.comparisons[0]
        flipped = _FLIPPED.get(type(target.operator))
        if flipped is None or not all(isinstance(side, (cst.Name, cst.Attribute, cst.Integer, cst.Float)) for side in (updated.left, target.comparator)):
            return updated
        operator = flipped(whitespace_before=cst.SimpleWhitespace(" "), whitespace_after=cst.SimpleWhitespace(" "))
        return updated.with_changes(left=target.comparator, comparisons=[target.with_changes(operator=operator, comparator=updated.left)])


def flip_comparisons(module: cst.Module) -> cst.Module:
    return module.visit(_FlipComparisons())


class _SwapBranches(cst.CSTTransformer):
    """`if c: A else: B` -> `if not c: B else: A` (not `elif`)."""

    def leave_If(self, original: cst.If, updated: cst.If) -> cst.If:
        if not isinstance(updated.orelse, cst.Else):
            return updated
        test = updated.test
        negated = cst.UnaryOperation(operator=cst.Not(), expression=test if isinstance(test, (cst.Name, cst.Attribute, cst.Call)) else test.with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()]))
        return updated.with_changes(test=negated, body=updated.orelse.body, orelse=updated.orelse.with_changes(body=updated.body))


def swap_branches(module: cst.Module) -> cst.Module:
    return module.visit(_SwapBranches())


class _TernaryToIf(cst.CSTTransformer):
    """`y = a if c else b` (a statement of its own) -> `if c: y = a` / `else: y = b`."""

    def leave_SimpleStatementLine(self, original: cst.SimpleStatementLine, updated: cst.SimpleStatementLine) -> cst.BaseStatement:
        if len(updated.body) != 1 or not isinstance(updated.body[0], cst.Assign) or not isinstance(updated.body[0].value, cst.IfExp):
            return updated
        assign = updated.body[0]
        ternary = assign.value
        body = cst.IndentedBlock([cst.SimpleStatementLine([assign.with_changes(value=ternary.body.with_changes(lpar=[], rpar=[]))])])
        orelse = cst.Else(cst.IndentedBlock([cst.SimpleStatementLine([assign.with_changes(value=ternary.orelse.with_changes(lpar=[], rpar=[]))])]))
        return cst.If(test=ternary.test.with_changes(lpar=[], rpar=[]), body=body, orelse=orelse, leading_lines=updated.leading_lines)


def ternary_to_if(module: cst.Module) -> cst.Module:
    return module.visit(_TernaryToIf())


class _CompileCall(cst.CSTTransformer):
    """`@torch.compile` on a module-level function -> the plain function and, after the module's
    code, `<name>_compiled = torch.compile(<name>)` (how scripts compile what they import)."""

    def __init__(self) -> None:
        super().__init__()
        self.compiled: list[tuple[str, cst.BaseExpression | None]] = []
        self.depth = 0

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        self.depth += 1

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        self.depth += 1

    def leave_ClassDef(self, original: cst.ClassDef, updated: cst.ClassDef) -> cst.ClassDef:
        self.depth -= 1
        return updated

    def leave_FunctionDef(self, original: cst.FunctionDef, updated: cst.FunctionDef) -> cst.FunctionDef:
        self.depth -= 1
        if self.depth:
            return updated
        kept = []
        for decorator in updated.decorators:
            code = cst.Module([]).code_for_node(decorator.decorator)
            if code == "torch.compile" or code.startswith("torch.compile("):
                self.compiled.append((updated.name.value, decorator.decorator if isinstance(decorator.decorator, cst.Call) else None))
            else:
                kept.append(decorator)
        return updated.with_changes(decorators=kept)

    def leave_Module(self, original: cst.Module, updated: cst.Module) -> cst.Module:
        lines = []
        for name, call in self.compiled:
            arguments = ", ".join(cst.Module([]).code_for_node(a) for a in call.args) if call is not None else ""
            lines.append(cst.parse_statement(f"{name}_compiled = torch.compile({name}{', ' + arguments if arguments else ''})\n"))
        return updated.with_changes(body=[*updated.body, *lines]) if lines else updated


def compile_call(module: cst.Module) -> cst.Module:
    return module.visit(_CompileCall())


class _ExtractHelper(cst.CSTTransformer):
    """`@torch.compile def f(a, b): <body>` -> `def _f_body(a, b): <body>` and `@torch.compile
    def f(a, b): return _f_body(a, b)`: the work in a private helper that compiled code calls."""

    def leave_Module(self, original: cst.Module, updated: cst.Module) -> cst.Module:
        body: list[cst.CSTNode] = []
        for statement in updated.body:
            if isinstance(statement, cst.FunctionDef) and _compiled_plainly(statement):
                names = [p.name.value for p in statement.params.params]
                helper = statement.with_changes(name=cst.Name(f"_{statement.name.value}_body"), decorators=[])
                call = cst.parse_statement(f"return _{statement.name.value}_body({', '.join(names)})\n")
                wrapper = statement.with_changes(body=cst.IndentedBlock([call]), leading_lines=[cst.EmptyLine(), cst.EmptyLine()])
                body += [helper, wrapper]
            else:
                body.append(statement)
        return updated.with_changes(body=body)


def _compiled_plainly(function: cst.FunctionDef) -> bool:
    """Decorated `@torch.compile`, taking plain positional parameters (no defaults, *args,
    **kwargs), and not a generator."""
    params = function.params
    if params.star_arg is not cst.MaybeSentinel.DEFAULT or params.star_kwarg is not None or params.kwonly_params or params.posonly_params:
        return False
    if any(p.default is not None for p in params.params) or any(isinstance(n, cst.Yield) for n in _walk(function)):
        return False  # a generator's body in a helper would make the wrapper return a generator
    return any(cst.Module([]).code_for_node(d.decorator) in ("torch.compile",) or cst.Module([]).code_for_node(d.decorator).startswith("torch.compile(") for d in function.decorators)


def extract_helper(module: cst.Module) -> cst.Module:
    return module.visit(_ExtractHelper())


VARIATIONS: dict[str, Callable[[cst.Module], cst.Module]] = {
    "torch_alias": torch_alias,
    "rename_locals": rename_locals,
    "hoist_conditions": hoist_conditions,
    "method_calls": method_calls,
    "function_calls": function_calls,
    "flip_comparisons": flip_comparisons,
    "swap_branches": swap_branches,
    "ternary_to_if": ternary_to_if,
    "compile_call": compile_call,
    "extract_helper": extract_helper,
}


def _applied(source: str, path: str, level: Safety) -> int:
    return len(fix_source(source, path, level=level).applied)


def _check(original: str, varied: str, level: Safety, scratch: Path) -> str | None:
    """None when the varied fixture's fix removes breaks and keeps eager behaviour, else why not."""
    import torch

    from tests.differential import breaks, callable_of, same
    from tests.ground_truth import import_case
    from tests.observe import differences, observe

    fixed = fix_source(varied, str(scratch / "varied.py"), level=level).fixed
    before_file, after_file = scratch / "varied.py", scratch / "varied_fixed.py"
    before_file.write_text(varied, encoding="utf-8")
    after_file.write_text(fixed, encoding="utf-8")
    _, breaks_before = breaks(before_file)
    _, breaks_after = breaks(after_file)
    if breaks_after >= breaks_before:
        return f"breaks {breaks_before} -> {breaks_after}"
    a, b = import_case(before_file), import_case(after_file)
    torch.manual_seed(0)
    fa = callable_of(a)
    torch.manual_seed(0)
    fb = callable_of(b)
    for number, args in enumerate(a.inputs()):
        torch.manual_seed(number)
        seen_a = observe(fa, args)
        torch.manual_seed(number)
        seen_b = observe(fb, args)
        problems = differences(seen_a, seen_b, same)
        if problems:
            return f"input #{number}: {problems}"
    return None


def static_robustness(chosen: dict[str, Callable[[cst.Module], cst.Module]]) -> None:
    """The rules' `breaks` examples (checked against dynamo by the test suite), varied: does the
    analysis still find as many breaks of each expected code? A variation keeps the meaning, so
    dynamo breaks the same; a finding lost is a miss the analysis would make on code spelled so."""
    import re
    import tomllib

    from graphmend.analysis import analyze_detailed

    examples = ROOT / "server" / "graphmend" / "analysis" / "rules" / "examples"
    tried: Counter[str] = Counter()
    kept: Counter[str] = Counter()
    for path in sorted(examples.glob("GM*.toml")):
        data = tomllib.loads(path.read_text(encoding="utf-8"))
        for number, example in enumerate(data.get("breaks", [])):
            code = example["code"]
            expected = Counter(re.findall(r"# expect: (GM\d{3})", code))
            if not expected:
                continue
            module = cst.parse_module(code)
            for name, vary in chosen.items():
                try:
                    varied = vary(module).code
                except Exception:  # a variation that cannot apply to this code
                    continue
                if varied == code:
                    continue
                tried[name] += 1
                found = Counter(f.code for f in analyze_detailed(varied, f"{path.stem}_{number}.py").findings)
                lost = {c: n - found[c] for c, n in expected.items() if found[c] < n}
                if lost:
                    print(f"MISSED {name:17s} {path.stem} breaks[{number}]: {lost}")
                else:
                    kept[name] += 1
    print()
    for name in chosen:
        print(f"{name:17s} findings kept in {kept[name]} of {tried[name]} varied rule examples")
    print(f"{'all':17s} {sum(kept.values())} of {sum(tried.values())}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--only", nargs="*", help="fixtures (Fixer/name)")
    parser.add_argument("--variation", nargs="*", choices=sorted(VARIATIONS))
    parser.add_argument("--check", action="store_true", help="run varied fixes against dynamo and eagerly")
    parser.add_argument("--static", action="store_true", help="vary the rules' break examples instead: are the breaks still found?")
    args = parser.parse_args()
    if args.static:
        static_robustness({name: VARIATIONS[name] for name in (args.variation or VARIATIONS)})
        return 0
    pairs = sorted(FIXTURES.glob("*/*.in.py"))
    if args.only:
        pairs = [p for p in pairs if f"{p.parent.name}/{p.name[:-6]}" in args.only]
    chosen = {name: VARIATIONS[name] for name in (args.variation or VARIATIONS)}
    tried: Counter[str] = Counter()
    kept: Counter[str] = Counter()
    wrong: Counter[str] = Counter()
    import tempfile

    for path in pairs:
        source = path.read_text(encoding="utf-8")
        level = _level(source)
        if level is not Safety.SAFE:
            continue
        base = _applied(source, str(path), level)
        if not base:
            continue
        module = cst.parse_module(source)
        for name, vary in chosen.items():
            varied = vary(module).code
            if varied == source:
                continue
            tried[name] += 1
            label = f"{path.parent.name}/{path.name[:-6]}"
            try:
                count = _applied(varied, str(path), level)
            except Exception as error:  # a crash is a finding too
                print(f"CRASH {name:17s} {label}: {type(error).__name__}: {error}")
                continue
            if count < base:
                result = fix_source(varied, str(path), level=level)
                reasons = "; ".join(sorted({f"{d.key}: {d.reason[:90]}" for d in result.declined}))[:300]
                print(f"LOST  {name:17s} {label}: {count}/{base} fixes ({reasons})")
                continue
            kept[name] += 1
            if args.check:
                with tempfile.TemporaryDirectory() as scratch:
                    problem = _check(source, varied, level, Path(scratch))
                if problem:
                    wrong[name] += 1
                    print(f"WRONG {name:17s} {label}: {problem}")
    print()
    for name in chosen:
        extra = f", {wrong[name]} wrong under --check" if args.check else ""
        print(f"{name:17s} fixes kept in {kept[name]} of {tried[name]} varied safe fixtures{extra}")
    total_kept, total = sum(kept.values()), sum(tried.values())
    print(f"{'all':17s} {total_kept} of {total} ({total_kept / max(total, 1):.0%})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
