"""Rules as self-describing, self-testing units (the Fixit idea, applied to graph breaks).

A rule is a class with a code and the hooks it listens to. Its words (a message in three parts:
what, why dynamo breaks there, what to do) are in catalogue.toml; its examples, `breaks` (code where
dynamo breaks on the lines marked `# expect: GMxxx`) and `ok` (code where it does not), in
examples/<code>.toml, read into the class when it is defined. tests/test_corpus.py runs every example
through the analyser *and* through real TorchDynamo and requires both to agree, so a rule cannot
claim a break that dynamo does not make.

Example convention: a complete module. When it defines `sample()`, that returns
`(callable, args, kwargs)` or a list of such triples (to reach several branch outcomes); otherwise
the compiled function `f` is called with `torch.randn(4)`.

Call-table rules (`CallTableRule`) are data (in catalogue.toml): a map from a qualified name to
one example call expression. The corpus test builds a module around each entry, so every row of every table is
checked against dynamo on its own.
"""

from __future__ import annotations

import ast
import enum
from collections.abc import Mapping
from typing import TYPE_CHECKING, ClassVar, Protocol

from ..kinds import Kind, is_tensor
from .catalogue import Example, examples_for, words_for

if TYPE_CHECKING:
    from ...findings import Related
    from ..symbols import ModuleIndex


class Effect(enum.Enum):
    """What a break costs, as dynamo reports it."""

    BREAK = "break"  # the graph ends here and a new one starts after the offending code
    RESUME_FAILS = "rest-eager"  # dynamo cannot resume: the rest of the function runs eagerly
    FRAME_SKIP = "frame-skip"  # dynamo gives up on the whole function and runs it eagerly
    # Inside a list/set/dict comprehension: on Python 3.11 dynamo runs the comprehension eagerly or
    # not depending on what it iterates over; from 3.12 (inlined comprehensions) the whole function.
    MAY_SKIP = "may-skip"
    SILENT_SKIP = "silent-skip"  # the function is never compiled, and dynamo logs nothing


class RuleContext(Protocol):
    """What a rule may ask of the walker while it checks a node."""

    function_name: str
    function: ast.FunctionDef | ast.AsyncFunctionDef  # the function walked
    is_entry: bool

    @property
    def index(self) -> ModuleIndex: ...

    def kind(self, node: ast.AST) -> Kind: ...

    def qualname(self, node: ast.AST) -> str | None: ...

    def snippet(self, node: ast.AST) -> str: ...

    def torch_module_class(self, node: ast.AST) -> str | None:
        """`self.rnn` set up in `__init__` as `nn.LSTM(...)` -> "LSTM"; None when unknown."""
        ...

    def optimizer_class(self, node: ast.AST) -> str | None:
        """The `torch.optim` class `node` is known to hold (`self.opt` set to `Adam(...)` in
        `__init__`, a module-level optimizer, a parameter annotated or named as one), else None."""
        ...

    def subclass_torch_module_classes(self, node: ast.AST) -> list[tuple[str, str]]:
        """(subclass, "LSTM") for each in-file subclass that sets `self.rnn` to a torch layer."""
        ...

    def is_call_target(self, node: ast.AST) -> bool:
        """`node` is what a call of the walked function calls (`self.lstm` in `self.lstm(x)`)."""
        ...

    def named_mask(self, node: ast.AST) -> bool:
        """`node` reads a parameter whose name says it is a mask (`mask`, `padding_mask`) and which
        nothing declares otherwise (no annotation, no default but None) or rebinds."""
        ...

    def compared_names(self, node: ast.AST) -> frozenset[str] | None:
        """The names whose values `node` compares elementwise, where `node` is built of
        comparisons only (`labels == 0`, `(num != 0) & (den != 0)`, or a local assigned only
        such values); None otherwise (tensors.compared_names)."""
        ...

    def frame_input(self, node: ast.AST) -> bool:
        """`node` is a name whose value dynamo receives as an input of the frame it is tracing:
        a parameter of a function passed to torch.compile, a tensor attribute of the module
        (`self.padding_total`, a buffer), or any name bound before a graph break
        earlier in the function (the resume function takes the live locals as its inputs) and not
        rebound since. Dynamo turns a 0-d integer tensor input used as a size into a guarded int
        without breaking (`F.pad(x, (p, p))`, `torch.arange(p)`; measured on torch 2.13)."""
        ...

    def module_function(self, node: ast.AST) -> ast.FunctionDef | None:
        """The module's own undecorated top-level function `node` names (`ModuleIndex.plain_function`),
        where the walked function does not bind the name itself; None otherwise."""
        ...

    def report(
        self,
        rule: Rule,
        node: ast.AST,
        *,
        effect: Effect | None = None,
        related: tuple[Related, ...] = (),
        **details: str,
    ) -> None: ...


class Rule:
    code: ClassVar[str]
    # The words, from catalogue.toml by `code` when the class is defined:
    name: ClassVar[str]
    message: ClassVar[str]  # what: a template with {subject} (the source of the node) and details
    why: ClassVar[str]  # why dynamo breaks there
    fix: ClassVar[str]  # what to do about it (an imperative sentence)
    effect: ClassVar[Effect] = Effect.BREAK
    # A FRAME_SKIP that is known to stop this very function's frame (entering an untraceable
    # context manager), not a frame of its own that it makes (a module's `__init__` run mid-forward):
    # what follows it in the function is then latent.
    skips_own_frame: ClassVar[bool] = False
    # Hooks: node types (post-order, after kinds are known), qualified call targets, method names,
    # truth-test constructs ("if", "while", "ternary", "boolop", "not", "comprehension"), statements.
    # Prefer the narrowest hook: a rule on ast.Call runs for every call of every compiled function.
    node_types: ClassVar[tuple[type, ...]] = ()
    qualnames: ClassVar[frozenset[str]] = frozenset()
    methods: ClassVar[frozenset[str]] = frozenset()
    truth_constructs: ClassVar[frozenset[str]] = frozenset()
    statement_types: ClassVar[tuple[type, ...]] = ()
    # Node types also checked where they are assigned to (`x[a:b] = v`), with `check_store`: a
    # store traces differently from a read (`x[mask] = 0` does not break where `x[mask]` does).
    store_types: ClassVar[tuple[type, ...]] = ()
    # Calls whose callee has one of these kinds (a Logger method, a disabled function, ...), and
    # calls into these modules (`math` for `math.sqrt(t)`).
    callee_kinds: ClassVar[frozenset[Kind]] = frozenset()
    qualname_roots: ClassVar[frozenset[str]] = frozenset()
    # A torch._dynamo.config flag that, when the program sets it, makes dynamo trace this pattern
    # without a break (measured; see tests/corpus/trap_dynamo_config_flags.py).
    removed_by_flag: ClassVar[str | None] = None
    breaks: ClassVar[tuple[Example, ...]] = ()
    ok: ClassVar[tuple[Example, ...]] = ()

    def __init_subclass__(cls, **kwargs: object) -> None:
        super().__init_subclass__(**kwargs)
        if "code" in cls.__dict__:
            words = words_for(cls.code)
            cls.name, cls.message, cls.why, cls.fix = words.name, words.message, words.why, words.fix
            cls.breaks, cls.ok = examples_for(cls.code)

    def check(self, node: ast.AST, ctx: RuleContext) -> None:
        """Called for nodes of `node_types`, and for calls matching `qualnames`, `methods`,
        `callee_kinds` or `qualname_roots`."""

    def check_store(self, node: ast.AST, ctx: RuleContext) -> None:
        """Called for assignment targets of `store_types` (`x[a:b] = v`; not augmented ones, which
        read the target first and are checked as reads)."""

    def check_truth(self, node: ast.expr, kind: Kind, construct: str, ctx: RuleContext) -> None:
        """Called for expressions whose truth value is taken in one of `truth_constructs`."""

    def check_statement(self, node: ast.stmt, ctx: RuleContext) -> None:
        """Called for statements of `statement_types`."""

    @property
    def family(self) -> str:
        return self.code[:3]

    def all_examples(self) -> tuple[tuple[Example, ...], tuple[Example, ...]]:
        return self.breaks, self.ok


class TensorOpRule(Rule):
    """Flags `torch.<op>(...)` (the names in `qualnames`) and `<tensor>.<op>(...)` (the methods in
    `methods`, on a receiver known to be a tensor); subclasses may add argument conditions."""

    def check(self, node: ast.AST, ctx: RuleContext) -> None:
        assert isinstance(node, ast.Call)
        if ctx.qualname(node.func) in self.qualnames:
            if self.applies(node, node.args[1:] if node.args else [], ctx, function_form=True):
                ctx.report(self, node)
            return
        target = receiver(node)
        if target is not None and is_tensor(ctx.kind(target)) and self.applies(node, node.args, ctx, function_form=False):
            ctx.report(self, node)

    def applies(self, node: ast.Call, rest: list[ast.expr], ctx: RuleContext, function_form: bool) -> bool:
        return True


class CallTableRule(Rule):
    """A rule that flags calls to a fixed set of functions, each listed with an example call.

    The rule's `calls` in catalogue.toml become `table` (a qualified name -> an example expression
    that calls it) and `imports` (the modules the examples need). The generated examples are part
    of `breaks`.
    """

    table: ClassVar[Mapping[str, str]] = {}
    imports: ClassVar[tuple[str, ...]] = ()
    # qualified name -> the position of its `size` argument, for calls traced when given one
    sized: ClassVar[Mapping[str, int]] = {}

    def __init_subclass__(cls, **kwargs: object) -> None:
        super().__init_subclass__(**kwargs)
        if "code" in cls.__dict__:
            words = words_for(cls.code)
            cls.table, cls.imports = words.calls, words.example_imports
            cls.sized = words.traced_when_sized
            cls.qualnames = frozenset(cls.table)

    def check(self, node: ast.AST, ctx: RuleContext) -> None:
        assert isinstance(node, ast.Call)
        target = ctx.qualname(node.func) or ""
        if target in self.sized and _given_size(node, self.sized[target], ctx):
            return
        ctx.report(self, node, target=target)

    def all_examples(self) -> tuple[tuple[Example, ...], tuple[Example, ...]]:
        header = "".join(f"import {module}\n" for module in ("torch", *self.imports))
        generated = tuple(
            Example(
                f"{header}\n\n@torch.compile\ndef f(x):\n    y = x * 2\n    _ = {call}  # expect: {self.code}\n    return y + 1\n",
                note=f"table entry {name}",
            )
            for name, call in self.table.items()
        )
        return self.breaks + generated, self.ok


def _given_size(call: ast.Call, position: int, ctx: RuleContext) -> bool:
    """Whether `call` passes an output size: a `size=` keyword other than None, or a positional
    argument at `position` or after it (`rand(4)`, `rand(*shape)`, `uniform(0, 1, 4)`). A size
    known to be None where the call runs (timm's `rand_bbox(img_shape, lam, count=None)` passing
    `size=count`, called without a count) draws one number, as no size does."""
    size = next((k.value for k in call.keywords if k.arg == "size"), None)
    if size is None and len(call.args) > position and not isinstance(call.args[position], ast.Starred):
        size = call.args[position]
    if size is None:
        return any(isinstance(arg, ast.Starred) for arg in call.args[: position + 1])
    return not (isinstance(size, ast.Constant) and size.value is None) and ctx.kind(size) is not Kind.NONE


def receiver(node: ast.Call) -> ast.expr | None:
    """`x` in `x.method(...)`."""
    return node.func.value if isinstance(node.func, ast.Attribute) else None
