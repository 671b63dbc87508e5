"""The module-level code an ordered-effect fix adds: one helper per file, one function per site.

`_graphmend_ordered` turns a function into a custom op (`torch.library.custom_op`) with an
ordered effect. Dynamo puts a call to such an op into the graph instead of breaking, AOTAutograd
and inductor keep it (an effect is never dead code) and run it in program order among the other
effects, and at run time the original Python runs with the real values: prints print, loggers
log (`warning_once` still once), `warnings.warn` warns, and a failed check raises the exception
it always raised. Called outside torch.compile it is the same function behind the dispatcher.

Why not `torch._dynamo.config.reorderable_logging_functions`: on torch 2.13 a reorderable call
made in a function dynamo inlines (every submodule's forward) is silently dropped, and one that
raises would raise after the graph's work (tests/test_ordered_effects.py measures both). Why not
`torch._dynamo.decorators.leaf_function`: inductor cannot compile it on torch 2.13.
"""

from __future__ import annotations

import ast

from ..findings import Edit, Span
from .compile_checks import helper_insertion
from .context import FixContext
from .model import DeclineError
from .ordered_site import Site
from .py_types import Function

HELPER = "_graphmend_ordered"

_HELPER_TEXT = '''

def {helper}(fn):
    """Added by GraphMend: under torch.compile, call `fn` as a custom op with an ordered effect,
    so the caller stays one graph and `fn` still runs in program order with the same values (its
    prints, logs, warnings and checks happen as before); outside torch.compile, call `fn` itself.
    A parameter annotated `object` is only formatted by `fn`: it is passed as the tensor, number or
    bool it holds, or as its text (a list, tuple, dict or torch.Size holding tensors or sizes
    traced symbolically as its text with a slot per value, filled in when the op runs); one annotated
    `Tensor | int | float | bool | str | None` is passed as the one of those it holds. On a torch
    without ordered custom ops, or for values the op's types do not admit, `fn` is called itself
    (the graph break stays, and so does the behaviour)."""
    import functools
    import re
    import types
    import typing

    try:
        from torch._library.effects import EffectType

        hints = typing.get_type_hints(fn)
        names = fn.__code__.co_varnames[: fn.__code__.co_argcount]
        kinds = (str, {torch}.Tensor | None, int, float, bool)  # what a text parameter is passed as
        values = [i for i, n in enumerate(names) if set(typing.get_args(hints[n])) == {{{torch}.Tensor, int, float, bool, str, type(None)}}]
        texts = [i for i, n in enumerate(names) if hints[n] is object or i in values]
        symbolic = {{int: {torch}.SymInt, float: {torch}.SymFloat, bool: {torch}.SymBool}}
        accepted = [tuple(c for t in typing.get_args(hints[n]) or (hints[n],) for c in (t, symbolic.get(t, t))) for n in names]
        base = "graphmend::" + (fn.__module__ + "_" + fn.__qualname__).replace(".", "_").strip("_")
        token = {helper}.__dict__.setdefault("token", {torch}.zeros(()))  # one per module
        ops = []
        for number in range(len(kinds) ** len(texts)):
            variant = types.FunctionType(fn.__code__, fn.__globals__, fn.__name__, fn.__defaults__, fn.__closure__)
            variant.__annotations__ = {{**hints, "return": None}}
            for digit, position in enumerate(texts):
                variant.__annotations__[names[position]] = kinds[number // len(kinds) ** digit % len(kinds)]
            # nondeterministic: tracing must never run it to fold a constant (it would print twice)
            tags = ({torch}.Tag.nondeterministic_seeded,)
            # Every op also "writes" one token tensor, so each op reads what the one before wrote:
            # inductor (torch 2.13) may reorder two ops with only an ORDERED effect in between.
            schema = {torch}.library.infer_schema(variant, mutates_args=())
            schema = "(Tensor(a!) graphmend_token, " + schema[1:].replace(") ->", (", " if schema[1] != ")" else "") + "Tensor[] graphmend_tensors) ->", 1)
            op = {torch}.library.custom_op(
                f"{{base}}_{{number}}", lambda _token, *args, _run=variant: _run(*fill(*args)), mutates_args=("graphmend_token",), schema=schema, tags=tags
            )
            op.register_fake(lambda *args, **kwargs: None)
            op.register_effect(EffectType.ORDERED)
            ops.append(op)
    except Exception:  # an older torch
        return fn

    # Private-use characters, each the place of one value in a container's text, filled in when
    # the op runs: a tensor's text, or a number's (passed as a 0-d tensor, since it may be symbolic).
    slots = {{"\ue000": repr, "\ue001": lambda t: repr(bool(t)), "\ue002": lambda t: repr(int(t)), "\ue003": lambda t: repr(float(t))}}
    dtypes = {{"\ue001": {torch}.bool, "\ue002": {torch}.int64, "\ue003": {torch}.float64}}

    def text_of(value, tensors):
        """`repr(value)` with a slot per tensor or number (its value appended to `tensors`), or None."""
        if isinstance(value, {torch}.Tensor):
            tensors.append(value)
            return "\ue000"
        for slot, kind in (("\ue001", bool), ("\ue002", int), ("\ue003", float)):
            if type(value) is kind and (kind is not int or -(2**63) <= value < 2**63):
                tensors.append({torch}.scalar_tensor(value, dtype=dtypes[slot]))
                return slot
        for slot, kind in (("\ue002", {torch}.SymInt), ("\ue003", {torch}.SymFloat)):
            if isinstance(value, kind):  # a size traced symbolically: its value is known when the op runs
                tensors.append({torch}.scalar_tensor(value, dtype=dtypes[slot]))
                return slot
        if type(value) is {torch}.Size:  # `print(x.shape)`: its sizes may be symbolic
            parts = [text_of(item, tensors) for item in value]
            return None if None in parts else "torch.Size([%s])" % ", ".join(parts)
        if type(value) in (list, tuple):
            parts = [text_of(item, tensors) for item in value]
            if None in parts:
                return None
            inner = ", ".join(parts) + ("," if type(value) is tuple and len(parts) == 1 else "")
            return ("[%s]" if type(value) is list else "(%s)") % inner
        if type(value) is dict:
            keys = [repr(key) if type(key) in (str, int, bool) or key is None else None for key in value]
            items = [text_of(item, tensors) for item in value.values()]
            if None in keys or None in items or any(s in k for k in keys for s in slots):
                return None
            return "{{" + ", ".join(k + ": " + v for k, v in zip(keys, items)) + "}}"
        if value is None or type(value) is str:
            text = repr(value)
            return None if any(s in text for s in slots) else text
        return None

    def fill(*args):
        """The op's arguments, the texts of the values it was given put into their texts' slots."""
        *arguments, tensors = args
        if tensors:
            values = iter(tensors)
            put = lambda match: slots[match.group()](next(values))  # noqa: E731
            arguments = [re.sub("[\ue000-\ue003]", put, a) if isinstance(a, str) else a for a in arguments]
        return arguments

    @functools.wraps(fn)
    def call(*args):
        if not {torch}.compiler.is_compiling():
            return fn(*args)
        arguments, number, tensors = list(args), 0, []
        for position, value in enumerate(args):  # decided while tracing, free afterwards
            if position in texts and position not in values and type(value) in (list, tuple, dict, {torch}.Size):
                text = text_of(value, tensors)
                if text is None:
                    return fn(*args)  # a container the op could not take: call it (the break stays)
                kind, arguments[position] = 0, text
                number += kind * len(kinds) ** texts.index(position)
            elif position in texts:
                if value is None or isinstance(value, {torch}.Tensor):
                    kind = 1
                elif isinstance(value, (bool, {torch}.SymBool)):
                    kind = 4
                elif isinstance(value, (int, {torch}.SymInt)):
                    kind = 2
                elif isinstance(value, (float, {torch}.SymFloat)):
                    kind = 3
                elif position in values and not isinstance(value, str):
                    return fn(*args)  # a value of another type: the op could not take it
                elif any(s in str(value) for s in slots):
                    return fn(*args)  # text that holds the slot character itself
                else:
                    kind, arguments[position] = 0, str(value)
                number += kind * len(kinds) ** texts.index(position)
            elif not isinstance(value, accepted[position]):
                return fn(*args)
        return ops[number](token, *arguments, tensors)

    return call
'''


def helper_present(ctx: FixContext) -> bool:
    return HELPER in ctx.index.functions


def site_name(ctx: FixContext, function: Function, what: str, taken: set[str] | frozenset[str] = frozenset()) -> str:
    """`_graphmend_T5Stack_forward_log`: unique among the module's top-level names (and `taken`)."""
    owner = next((a.name for a in ctx.ancestors(function) if isinstance(a, (ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef))), "")
    base = "_".join(p for p in ("_graphmend", owner, function.name.strip("_"), what) if p)
    name, number = base, 2
    while name in ctx.index.top_level_names or name in taken:
        name, number = f"{base}_{number}", number + 1
    return name


def site_origin(ctx: FixContext, function: Function) -> str:
    """`Class.method` (or the function's own name): where a site function's code was moved from."""
    classes = [a.name for a in reversed(list(ctx.ancestors(function))) if isinstance(a, ast.ClassDef)]
    return ".".join([*classes, function.name])


def site_text(ctx: FixContext, name: str, site: Site, origin: str) -> str:
    torch = ctx.torch_name()
    params = ", ".join(f"{p.name}: {p.type.annotation(torch)}" for p in site.params)
    body = "".join(f"    {line}\n" if line.strip() else "\n" for line in site.body.rstrip("\n").split("\n"))
    return f'@{HELPER}\ndef {name}({params}) -> None:\n    """Moved out of `{origin}` by GraphMend (see {HELPER})."""\n{body}'


def module_edits(ctx: FixContext, function: Function, text: str) -> list[Edit]:
    """Insert the site function before the top-level statement holding `function`, and the helper
    after the module's `import torch` when it is not there yet."""
    return module_edits_for(ctx, [(function, text)])


def module_edits_for(ctx: FixContext, sites: list[tuple[Function, str]]) -> list[Edit]:
    """`module_edits` for several site functions at once (one helper, each site before its
    function's top-level statement)."""
    insertions: dict[int, str] = {}
    if not helper_present(ctx):
        line, prefix = helper_insertion(ctx)
        insertions[line] = prefix + _HELPER_TEXT.format(helper=HELPER, torch=ctx.torch_name()) + "\n"
    for function, text in sites:
        top = _top_level_statement(ctx, function)
        site_line = min([top.lineno] + [d.lineno for d in getattr(top, "decorator_list", [])])
        if not helper_present(ctx) and site_line < helper_insertion(ctx)[0]:
            raise DeclineError("before-torch-import", "the code is above the module's `import torch`")
        insertions[site_line] = insertions.get(site_line, "") + text + "\n\n"
    return [Edit(Span(line, 0, line, 0), inserted) for line, inserted in insertions.items()]


def _top_level_statement(ctx: FixContext, function: Function) -> ast.stmt:
    for stmt in ctx.tree.body:
        first = min([stmt.lineno] + [d.lineno for d in getattr(stmt, "decorator_list", [])])
        if first <= function.lineno <= (stmt.end_lineno or stmt.lineno):
            return stmt
    raise DeclineError("not-in-function", "the code is not inside a module-level definition")
