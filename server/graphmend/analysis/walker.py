"""Walks one compiled function, statement by statement, and runs the rules on it.

The walker owns an evaluator (tensor inference, tensors.py) and hears from it as it computes
kinds (EvaluationObserver); it adds what only statements know:
- the flow of kinds through assignments, branches (joined) and loops (iterated to a fixpoint once);
- code dynamo never traces: branches dead under `is_compiling()` guards, code after `return`;
- amplifiers (amplifiers.py): a break inside a loop, `try`, `except` or an unsafe `with` makes
  dynamo skip the *whole function*;
- calls into other functions of the file (resolved by callees.py), which the module analysis walks
  next, passing the kinds of the arguments and the amplifier of the call site along;
- parameters used as tensors, from their names and the function's text (param_evidence.py).
"""

from __future__ import annotations

import ast
import contextlib
import dis
import re
import sys
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

from ..astwalk import child_nodes, walk
from ..findings import EagerPoint, Finding, Related, Severity
from .amplifiers import SAFE_CONTEXT_MANAGERS, Amplifier, amplifier_sentence, related_text
from .callees import CalleeResolver
from .decorators import Wrapping
from .guards import CONSTANT_TYPES, Given
from .kinds import BOOL_KINDS, NON_TENSOR_KINDS, TENSOR_KINDS, Kind, is_tensor, join
from .numpy_values import NumpyValues
from .param_evidence import GENERATOR_NAME, MASK_NAME, NOT_A_TENSOR_NAME, tensor_evidence
from .rules import INTERNAL_ERROR_CODE, Effect, Rule
from .rules.untraceable import RECURRENT_LAYERS
from .symbols import DISABLE_FUNCTIONS, OPTIM_PREFIX, ClassInfo, annotation_kind, mapping_item_annotations, names_container
from .tensors import (
    Evaluator,
    binop_kind,
    compared_names,
    element_kind,
    moves_only,
    own_nodes,
    passed_arguments,
    plain_assignments,
    takes_tensor_argument,
    unpack_kind,
)

if TYPE_CHECKING:
    from .module import ModuleAnalysis
    from .symbols import ModuleIndex

# A parameter whose name alone says it holds an optimizer (GM533): `optimizer`, `q_optimizer`.
OPTIMIZER_NAME = re.compile(r"(?:\w+_)?optimi[sz]er")


def merge_envs(a: dict[str, Kind], b: dict[str, Kind]) -> dict[str, Kind]:
    merged = dict(a)
    for name, kind in b.items():
        merged[name] = join(merged[name], kind) if name in merged else kind
    return merged


class FunctionWalker:
    """Analyses one function of a compiled region and reports what breaks the graph."""

    def __init__(
        self,
        module: ModuleAnalysis,
        function: ast.FunctionDef | ast.AsyncFunctionDef,
        qualified_name: str,
        cls: ClassInfo | None,
        *,
        is_entry: bool,
        explicitly_compiled: bool = False,
        param_kinds: dict[str, Kind] | None = None,
        given_tensor_displays: frozenset[str] = frozenset(),
        given_recurrent: dict[str, str] | None = None,
        caller_amplifier: Amplifier | None = None,
        closure: dict[str, Kind] | None = None,
        self_name: str | None = None,
        wrapping: Wrapping | None = None,
        wrapped: tuple[tuple[ast.FunctionDef, ClassInfo | None], ...] = (),
        instance_params: dict[str, ClassInfo] | None = None,
        given_values: dict[str, Given] | None = None,
    ) -> None:
        # The walker owns the evaluator that computes kinds and hears from it (EvaluationObserver).
        # Reads of names and attributes matter only where a recurrent layer may be read (GM518).
        reads = bool(given_recurrent) or (cls is not None and module.index.holds_torch_class(cls, RECURRENT_LAYERS))
        hooked = module.hooked_types if reads else module.hooked_types_without_reads
        self.evaluator = Evaluator(module.index, dict(closure or {}), cls, self_name, observer=self, hooked_types=hooked)
        self.module = module
        self.function = function
        self.function_name = qualified_name
        self.is_entry = is_entry
        self.explicitly_compiled = explicitly_compiled
        self.param_kinds = param_kinds or {}
        self._call_targets: set[int] | None = None  # ids of the calls' `func` nodes (is_call_target)
        self.given_tensor_displays = given_tensor_displays
        # parameters every caller seen so far passes an nn.LSTM/GRU/RNN attribute -> its class
        # (sb3-contrib's `_process_sequence(features, states, starts, self.lstm_actor)`)
        self.given_recurrent = given_recurrent or {}
        self.given_instances = instance_params or {}  # parameters holding an instance of a class of the file
        self.given_values = given_values or {}  # what every caller's argument fixes of a parameter
        self._comprehensions: list[ast.ListComp | ast.SetComp | ast.DictComp] | None = None  # see _own_comprehensions
        self._numpy_values: NumpyValues | None = None  # see _iterates_natively
        self._call_causes: set[int] = set()  # causes that are calls of something that breaks
        self.wrapping = wrapping  # a decorator's wrapper: its call of the wrapped function (analysis/decorators.py)
        self.wrapped = wrapped  # the functions of this file it wraps
        # name -> the line from which dynamo receives it as a frame input (see frame_input)
        self._frame_inputs: dict[str, int] = {}
        self._stores: dict[str, list[int]] | None = None
        self._conditional: set[int] | None = None
        self._optional: set[int] | None = None  # see _optional_nodes
        # breaks that make dynamo run all of this function eagerly, with the `if` arms (line ranges) they are in
        self._eager_causes: list[tuple[ast.AST, tuple[tuple[int, int, int, int], ...]]] = []
        # per arm in `arms`: where its `if`/`match` starts, and the line after which the code that
        # follows it runs on this arm's path (never, for an arm that returns or raises)
        self._arm_exits: list[tuple[int, int]] = []
        self.mask_params: set[str] = set()  # parameters named as masks (see named_mask)
        # parameters annotated as mappings to values of a kind in _ANNOTATED_MAPPING_VALUES -> the
        # kinds of their (key, value) items (vLLM's `generators: dict[int, torch.Generator]`)
        self.mapping_params: dict[str, tuple[Kind, Kind]] = {}
        self._rebound_mask_params: set[str] | None = None
        self._plain_assignments: dict[str, list[ast.expr] | None] | None = None  # see compared_names
        self.caller_amplifier = caller_amplifier
        self.amplifiers: list[Amplifier] = []
        self.arms: list[tuple[int, int]] = []  # lines of the `if`/`match` arms of undecided tests the walk is inside
        self.rules = module.rules
        self._once: set[str] = set()
        self._nested: dict[str, tuple[ast.FunctionDef, dict[str, Kind]]] = {}
        self._reported = 0  # findings this walker produced (for GM517)
        self._skipping_tests: set[int] = set()  # `while` operands whose break skips the frame (see _while)
        self.callees = CalleeResolver(self.evaluator, function, lambda: module.source.text_of(function))
        self._current_statement: ast.stmt | None = None  # the statement walk_body is at
        self._super_init: ast.Call | None = None  # `super().__init__(...)` in a module's __init__

    # -- entry point ---------------------------------------------------------------------------
    def run(self) -> None:
        self._bind_parameters()
        self._enclosing_functions()
        self.walk_body(self.function.body)
        self._module_constructor_breaks()
        self.eager_comprehension_breaks()
        if self.module.keep_kinds and not self.module.uncompiled_phase:
            # the rewrites see only compiled code's kinds: code nothing known compiles is never
            # rewritten, and what it is walked as must not shape how compiled code is
            self.module.kinds.update(self.evaluator.kinds)

    def _enclosing_functions(self) -> None:
        """A decorator's wrapper calls the functions its decorator defines beside it
        (transformers' `dynamic_rope_update`: `wrapper` calls `longrope_frequency_update(self,
        position_ids, ...)`); dynamo traces those calls too, so they are walked where the wrapper
        calls them, as nested functions are. Decorated or async ones are left alone."""
        if self.wrapping is None or "." not in self.wrapping.qualified:
            return
        *path, _ = self.wrapping.qualified.split(".")
        scope: ast.FunctionDef | None = self.module.index.functions.get(path[0])
        for name in path[1:]:
            scope = next((s for s in scope.body if isinstance(s, ast.FunctionDef) and s.name == name), None) if scope is not None else None
        if scope is None:
            return
        # names the wrapper binds itself (`update = noop`, `global update`) are not the siblings
        rebound: set[str] = set()
        for node in walk(self.function):
            if isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Load):
                rebound.add(node.id)
            elif isinstance(node, (ast.Global, ast.Nonlocal)):
                rebound.update(node.names)
        defined: dict[str, list[ast.stmt]] = {}
        for statement in scope.body:  # every binding of a name in the decorator: one def, or none is walked
            if isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                names = {statement.name}
            else:
                names = {n.id for n in walk(statement) if isinstance(n, ast.Name) and not isinstance(n.ctx, ast.Load)}
            for name in names:
                defined.setdefault(name, []).append(statement)
        for name, statements in defined.items():
            statement = statements[0]
            if len(statements) != 1 or not isinstance(statement, ast.FunctionDef) or statement is self.function:
                continue
            if statement.decorator_list or name in rebound or name in self.evaluator.env:
                continue
            self._nested[name] = (statement, {})

    def _module_constructor_breaks(self) -> None:
        """A module's `__init__` run from compiled code: once anything in it breaks, dynamo cannot
        resume in the half-built module and reports "Uninitialized nn.Module" at `super().__init__()`."""
        rule = self.rules.by_code.get("GM517")
        if rule is None or self.function.name != "__init__" or self.evaluator.cls is None or not self.evaluator.cls.is_module:
            return
        if self.is_entry or not self._reported or self._super_init is None:
            return
        self.report(rule, self._super_init, name=self.evaluator.cls.name)

    def _arms_here(self) -> tuple[tuple[int, int, int, int], ...]:
        """The `if` arms the walk is in, with where each `if` starts and where its arm rejoins."""
        return tuple((a, b, *exits) for (a, b), exits in zip(self.arms, self._arm_exits))

    def _eager_site(self, call: ast.Call) -> bool:
        """Whether a break inside what `call` runs would make dynamo run this whole function
        eagerly: the call stands, unconditionally within its statement, in a loop (that dynamo
        cannot resume after), `try` or `with` of this function."""
        amplifier = self.current_amplifier()
        return (
            amplifier is not None
            and amplifier.kind != "caller"
            and amplifier.certain
            and not self._resumes_after(call, amplifier)
            and id(call) not in self._conditional_nodes()
        )

    def _may_break_comprehensions(self) -> bool:
        """Whether running this function eagerly could make GM519 findings."""
        return "GM519" in self.rules.by_code and sys.version_info < (3, 12) and bool(self._own_comprehensions())

    def _own_comprehensions(self) -> list[ast.ListComp | ast.SetComp | ast.DictComp]:
        """The function's own comprehensions (found once: every call in a loop asks)."""
        if self._comprehensions is None:
            self._comprehensions = _own_comprehensions(self.function)
        return self._comprehensions

    def add_callee_cause(self, call: ast.AST, arms: tuple[tuple[int, int, int, int], ...]) -> None:
        """A function `call` runs breaks (found after this walk ended, as callees are walked after
        their callers): this function runs eagerly when the call runs, so its comprehensions may
        break (torchvision-style helpers called inside a `try`; transformers' output-capturing
        wrapper around a forward that breaks). ModuleAnalysis then asks eager_comprehension_breaks."""
        self._eager_causes.append((call, arms))
        self._call_causes.add(id(call))

    def eager_comprehension_breaks(self) -> None:
        """While dynamo runs this whole function eagerly (`_eager_causes`), Python 3.11 runs each
        list, set or dict comprehension in it as a frame of its own, which dynamo then compiles
        alone if the frame holds anything of torch's, and breaks on at once: the frame's input is
        the loop's iterator, which it cannot iterate ("Missing tp_iternext"; measured on torch
        2.13: lists, sets, `enumerate`, `zip` and `dict.items()` do; `range` and a tensor do not).
        torchvision's RPN `filter_proposals` (a loop with a data-dependent `where`) shows it at its
        `[torch.full(...) for idx, n in enumerate(num_anchors_per_level)]`."""
        rule = self.rules.by_code.get("GM519")
        if rule is None or not self._eager_causes or sys.version_info >= (3, 12):
            return
        for node in self._own_comprehensions():
            if self._iterates_natively(node.generators[0].iter, node.lineno) or not self._holds_torch(node):
                continue
            # a cause counts where the comprehension can run on the same call (dynamo then runs
            # the whole frame eagerly, from its start): in the cause's `if` arm, before that `if`,
            # or after it when the arm falls through; not in another arm of the same `if`
            # (qwen3-vl's `if image and video: <loop break> elif image: [comprehension]`)
            line = node.lineno
            cause = next(
                (
                    c
                    for c, arms in self._eager_causes
                    if all(start <= line <= end or line < begins or line > after for start, end, begins, after in arms)
                ),
                None,
            )
            if cause is None:
                continue
            outer = self.function_name
            self.function_name = f"{outer}.<{type(node).__name__.lower()}>"  # the comprehension's own frame
            try:
                line_of_cause = getattr(cause, "lineno", 0)
                if id(cause) in self._call_causes:
                    reason = f"the call on line {line_of_cause}, under which something breaks"
                else:
                    reason = f"the break on line {line_of_cause}"
                self.report(rule, node, eager=outer, cause=reason)
            finally:
                self.function_name = outer

    def _iterates_natively(self, iterable: ast.expr, line: int) -> bool:
        """`range(...)` and tensors: iterators dynamo takes as a frame's input. Not a NumPy array,
        which the kinds call a tensor: run eagerly it is NumPy's own, and its iterator breaks
        (recbole's `[np.where(node == i)[0][0] for i in u_input]`; measured on torch 2.13)."""
        if isinstance(iterable, ast.Call) and self.evaluator.qualname(iterable.func) == "builtins.range":
            return True
        if isinstance(iterable, ast.GeneratorExp):
            return True  # a generator: measured, no break
        if not is_tensor(self.evaluator.kind(iterable)):
            return False
        return not self._numpy().holds_array(iterable, line)

    def _numpy(self) -> NumpyValues:
        """Which of the function's names hold NumPy arrays (found once, where a comprehension asks)."""
        if self._numpy_values is None:
            self._numpy_values = NumpyValues(self.function, self.evaluator.qualname)
        return self._numpy_values

    def _holds_torch(self, node: ast.ListComp | ast.SetComp | ast.DictComp) -> bool:
        """Whether dynamo would find something of torch's in the comprehension's frame (and so
        compile it): the `torch` module named in it, or a name of the enclosing function holding a
        tensor, tensors, a NumPy array or a module (`self` of a module; `**kwargs`, which carry the
        model's inputs)."""
        kwargs = self.function.args.kwarg.arg if self.function.args.kwarg is not None else None
        module_self = self.evaluator.cls is not None and self.evaluator.cls.is_module
        # the first iterable is evaluated outside (the frame gets only its iterator), and the
        # comprehension's own loop names are not in the frame when dynamo looks at it
        outside = {id(n) for n in walk(node.generators[0].iter)}
        own = {n.id for generator in node.generators for n in walk(generator.target) if isinstance(n, ast.Name)}
        for inner in walk(node):
            if not isinstance(inner, ast.Name) or id(inner) in outside or inner.id in own:
                continue
            if inner.id == kwargs or (module_self and inner.id == self.evaluator.self_name):
                return True
            if (self.evaluator.qualname(inner) or "").split(".")[0] == "torch":
                return True
            kind = self.evaluator.env.get(inner.id, Kind.UNKNOWN)
            if is_tensor(kind) or kind in (Kind.TENSORS, Kind.MODULE, Kind.MODULES):
                return True
            if self._numpy().holds_array(inner, node.lineno):
                return True  # dynamo traces NumPy arrays, and compiles a frame holding one (`np.unique(row)`)
        return False

    def _bind_parameters(self) -> None:
        args = self.function.args
        positional = args.posonlyargs + args.args
        if self.evaluator.cls is not None and positional and not self._is_static():
            if self.evaluator.self_name is None:
                self.evaluator.self_name = positional[0].arg
            positional = positional[1:]
        defaults: dict[str, ast.expr | None] = {}  # None: no default
        padded: list[ast.expr | None] = [None] * (len(positional) - len(args.defaults)) + list(args.defaults)
        for arg, default in zip(positional, padded):
            defaults[arg.arg] = default
        for arg, default in zip(args.kwonlyargs, args.kw_defaults):
            defaults[arg.arg] = default
        needs_evidence: list[str] = []
        for arg in positional + args.kwonlyargs:
            kind = annotation_kind(self.index.param_annotation(self.function, arg), self.index)
            default = defaults.get(arg.arg)
            if kind in TENSOR_KINDS and isinstance(default, ast.Constant) and isinstance(default.value, (bool, int, float, str)):
                # `output_attentions: Optional[torch.Tensor] = False`: the default contradicts the
                # annotation (a copy-paste slip in real code); trust neither.
                kind = Kind.UNKNOWN
            if kind is Kind.UNKNOWN:
                kind = self.param_kinds.get(arg.arg, Kind.UNKNOWN)
            elif kind is Kind.TENSOR and self.param_kinds.get(arg.arg) in BOOL_KINDS:
                # `edge_mask: Tensor` handed `edge_type == i` (PyG's `masked_edge_index`): the
                # annotation says a tensor but not its dtype, and indexing with a mask has a
                # data-dependent shape
                kind = self.param_kinds[arg.arg]
            elif kind is Kind.PY_SEQ and arg.arg in self.given_tensor_displays:
                # A caller writes out a tuple of tensors for it: dynamo traces values, and
                # `paddings: tuple[int, int]` is handed `(self.padding_total, extra)` buffers in
                # real code (mimi, encodec). Only a display counts: a kind that arrives through
                # names may itself come from a wrong annotation (swin's `-> tuple[torch.Tensor]`).
                kind = Kind.TENSORS
            if kind is Kind.UNKNOWN and isinstance(default, ast.Constant) and default.value is not None:
                kind = Kind.PY
            if arg.annotation is None and (default is None or (isinstance(default, ast.Constant) and default.value is None)) and MASK_NAME.match(arg.arg):
                self.mask_params.add(arg.arg)
            if kind is Kind.UNKNOWN and arg.annotation is None and default is None and self._passed_as_generator(arg.arg):
                kind = Kind.GENERATOR
            if kind is Kind.UNKNOWN and arg.annotation is None:
                if self.explicitly_compiled and default is None and arg in positional and not NOT_A_TENSOR_NAME.search(arg.arg):
                    # The inputs of a function passed to torch.compile are tensors unless they say
                    # otherwise (a default value, an annotation, or a name like `use_cache`).
                    kind = Kind.TENSOR
                else:
                    needs_evidence.append(arg.arg)
            self.evaluator.env[arg.arg] = kind
            self._bind_mapping_items(arg)
            held = self.index.annotated_class(self.index.param_annotation(self.function, arg)) or self.given_instances.get(arg.arg)
            if held is not None:
                self.evaluator.instance_params[arg.arg] = held
            if self.is_entry and self.explicitly_compiled:
                self._frame_inputs[arg.arg] = 0
        for special in (args.vararg, args.kwarg):
            if special is not None:
                self.evaluator.env[special.arg] = Kind.UNKNOWN
        self.mask_params |= self._inverted_mask_indices({a.arg for a in positional + args.kwonlyargs})
        if needs_evidence:
            text = self.module.source.text_of(self.function)
            for name in tensor_evidence(text, needs_evidence, self._evidence_call):
                self.evaluator.env[name] = Kind.TENSOR
            unproven = [name for name in needs_evidence if self.evaluator.env[name] is Kind.UNKNOWN]
            if unproven:
                self.evaluator.env.update(self._handed_to_tensor_taking_functions(text, unproven))
        if self.given_values:  # most walks have none: the function's stores are then not needed
            until = self._first_rebinding_lines()
            self.evaluator.fixed_values = {name: (given, until.get(name, sys.maxsize)) for name, given in self.given_values.items()}

    def _bind_mapping_items(self, arg: ast.arg) -> None:
        """Record a parameter annotated as a mapping whose values are of a kind no caller passes
        by mistake (see _ANNOTATED_MAPPING_VALUES), for `for i, g in generators.items():`."""
        items = mapping_item_annotations(self.index.param_annotation(self.function, arg), self.index)
        if items is None:
            return
        value = annotation_kind(items[1], self.index)
        if value in _ANNOTATED_MAPPING_VALUES:
            self.mapping_params[arg.arg] = (annotation_kind(items[0], self.index), value)

    def _iterated_mapping(self, iterable: ast.expr) -> Kind | tuple[Kind, Kind] | None:
        """What `for` receives from `params.items()` / `.values()` of a parameter in
        mapping_params, never rebound: vLLM's `for i, generator in generators.items():` then
        `q[i].exponential_(generator=generator)` draws from a `torch.Generator` (GM522)."""
        if not (isinstance(iterable, ast.Call) and isinstance(iterable.func, ast.Attribute) and not iterable.args and not iterable.keywords):
            return None
        receiver = iterable.func.value
        if not isinstance(receiver, ast.Name) or receiver.id not in self.mapping_params or receiver.id in self._store_lines():
            return None
        key, value = self.mapping_params[receiver.id]
        if iterable.func.attr == "items":
            return (key, value)
        return value if iterable.func.attr == "values" else None

    def _handed_to_tensor_taking_functions(self, text: str, candidates: list[str]) -> dict[str, Kind]:
        """Parameters handed to a lambda or function defined in this one, or to a helper of the
        module (ModuleAnalysis.helper_tensor_params), that uses its own parameter as a tensor
        (k-diffusion's samplers: `t_fn = lambda sigma: sigma.log().neg()`, then
        `t_fn(sigmas[i])`): a float or a list has no `.log`, so only tensors get past that call.
        An element handed over (`sigmas[i]`) says the parameter holds tensors (TENSORS: a tensor's
        elements are 0-d tensors, and so are a list of tensors'); the parameter itself, or a slice
        of it (a list's slice is a list), says it is a tensor. A parameter the function rebinds is
        left alone: the value handed over may be the new one."""
        local = self._local_tensor_params() if "lambda" in text or text.count("def ") > 1 else {}  # str.find first: most define none
        helpers = [name for name in self.index.functions if f"{name}(" in text]
        if not local and not helpers:
            return {}
        found: dict[str, Kind] = {}
        nodes = own_nodes(self.function)
        rebound = {node.id for node in nodes if isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Load)}
        for node in nodes:
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and (callee := self._tensor_taking_callee(node.func.id, local, rebound)) is not None:
                params, tensor_params = callee
                for param, given in passed_arguments(params, node).items():
                    handed = _handed_over(given) if param in tensor_params else None
                    if handed is not None and handed[0] in candidates and found.get(handed[0]) is not Kind.TENSOR:
                        found[handed[0]] = handed[1]
        return {name: kind for name, kind in found.items() if name not in rebound}

    def _tensor_taking_callee(
        self, name: str, local: dict[str, tuple[list[ast.arg], set[str]]], bound_here: set[str]
    ) -> tuple[list[ast.arg], set[str]] | None:
        """The positional parameters of the function a call by `name` runs, with those it uses as
        tensors: a local function, or else a module helper the name is not a parameter, a closure
        variable or a local of this function for."""
        if name in local:
            return local[name]
        helper = self.index.functions.get(name) if name not in bound_here and name not in self.evaluator.env else None
        if helper is None:
            return None
        used = self.module.helper_tensor_params(helper)
        return (helper.args.posonlyargs + helper.args.args, set(used)) if used else None

    def _local_tensor_params(self) -> dict[str, tuple[list[ast.arg], set[str]]]:
        """The lambdas (`t_fn = lambda sigma: ...`) and plain functions this function defines, by the
        name each is bound to once and only to it, with their positional parameters and the ones
        their text uses as tensors (param_evidence.tensor_evidence). A decorated function may be
        replaced by its decorator; a nested function's parameter that it rebinds is left out."""
        bindings: dict[str, list[ast.AST]] = {}  # every binding of each name: a definition, or the stored Name
        lambda_targets: set[int] = set()
        for node in own_nodes(self.function):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                bindings.setdefault(node.name, []).append(node)
            elif isinstance(node, ast.Assign) and isinstance(node.value, ast.Lambda) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
                bindings.setdefault(node.targets[0].id, []).append(node.value)
                lambda_targets.add(id(node.targets[0]))
            elif isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Load) and id(node) not in lambda_targets:
                bindings.setdefault(node.id, []).append(node)
        local: dict[str, tuple[list[ast.arg], set[str]]] = {}
        for name, bound in bindings.items():
            definition = bound[0]
            if len(bound) != 1 or not isinstance(definition, (ast.Lambda, ast.FunctionDef)):
                continue
            if isinstance(definition, ast.FunctionDef) and definition.decorator_list:
                continue
            params = definition.args.posonlyargs + definition.args.args
            tensor_params = tensor_evidence(self._local_function_text(definition), self._kept_params(definition, params), self._evidence_call)
            if tensor_params:
                local[name] = (params, tensor_params)
        return local

    def _local_function_text(self, definition: ast.Lambda | ast.FunctionDef) -> str:
        """The text to look for tensor uses in: a lambda's body only, as the rest of its line may
        use the same name for something else; a function's whole text, as for any function."""
        if isinstance(definition, ast.Lambda):
            return self.module.source.segment(definition.body)
        return self.module.source.text_of(definition)

    @staticmethod
    def _kept_params(definition: ast.Lambda | ast.FunctionDef, params: list[ast.arg]) -> list[str]:
        """The parameters `definition` never rebinds (`sigma = torch.as_tensor(sigma)` would make
        the tensor its own, whatever was handed over)."""
        stored = {node.id for node in own_nodes(definition) if isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Load)}
        return [arg.arg for arg in params if arg.arg not in stored]

    def _passed_as_generator(self, name: str) -> bool:
        """Whether a parameter without a default is named as a random generator and handed to a
        random op as one (diffusers' scheduler `step(..., generator)` then
        `torch.randn(shape, generator=generator)`): callers pass a `torch.Generator` there, and
        only `generator=None` traces. A parameter with a default (`generator=None`) stays unknown."""
        if not GENERATOR_NAME.match(name):
            return False
        text = self.module.source.text_of(self.function)
        return re.search(rf"\bgenerator\s*=\s*{re.escape(name)}\b", text) is not None

    def _inverted_mask_indices(self, params: set[str]) -> set[str]:
        """Mask-named parameters, annotated or not, that the function inverts inside an index
        (`x[~audio_token_mask]`): `~` of an integer tensor would index with negative numbers, so the
        parameter is a boolean mask (higgs-audio's decoder layer, `audio_token_mask: Optional[Tensor]`).
        An annotation alone says nothing of the dtype: transformers' attention masks are 0/1 integers."""
        params = {name for name in params if MASK_NAME.match(name)}
        found: set[str] = set()
        if not params:  # most functions: no walk (this runs for every function, on every keystroke)
            return found
        if "~" not in self.module.source.text_of(self.function):
            return found  # no inversion anywhere in it (a substring test instead of a walk)
        for node in walk(self.function):
            if isinstance(node, ast.Subscript):
                for part in walk(node.slice):
                    if (isinstance(part, ast.UnaryOp) and isinstance(part.op, ast.Invert) and isinstance(part.operand, ast.Name)
                            and part.operand.id in params):
                        found.add(part.operand.id)
        return found

    def _evidence_call(self, callee: str) -> bool:
        """Whether passing a value to `callee` (dotted source text) shows the value is a tensor:
        a submodule set up in __init__ (`self.proj`) or a torch function taking a tensor."""
        root, _, rest = callee.partition(".")
        if root == self.evaluator.self_name:
            return self.evaluator.cls is not None and "." not in rest and self.index.attr_kind(self.evaluator.cls, rest) in (Kind.MODULE, Kind.JIT)
        target = self.evaluator.local_imports.get(root) or self.index.imports.get(root)
        if target is None:
            return False
        return takes_tensor_argument(f"{target}.{rest}" if rest else target)

    def _is_static(self) -> bool:
        return any(isinstance(d, ast.Name) and d.id == "staticmethod" for d in self.function.decorator_list)

    # -- what rules may ask ----------------------------------------------------------------------
    # -- what rules ask of the walker (RuleContext) -------------------------------------------
    @property
    def index(self) -> ModuleIndex:
        return self.evaluator.index

    def kind(self, node: ast.AST) -> Kind:
        return self.evaluator.kind(node)

    def qualname(self, node: ast.AST) -> str | None:
        return self.evaluator.qualname(node)

    def snippet(self, node: ast.AST) -> str:
        return self.module.source.snippet(node)

    def named_mask(self, node: ast.AST) -> bool:
        if not (isinstance(node, ast.Name) and node.id in self.mask_params and self.kind(node) in (Kind.TENSOR, Kind.UNKNOWN)):
            return False
        if self._rebound_mask_params is None:  # once per function, and only where a mask name is used
            moved = {  # `m = m.to(x.device)`: the same mask on another device
                id(stmt.targets[0]) for stmt in walk(self.function)
                if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name)
                and isinstance(stmt.value, ast.Call) and isinstance(stmt.value.func, ast.Attribute) and stmt.value.func.attr == "to"
                and isinstance(stmt.value.func.value, ast.Name) and stmt.value.func.value.id == stmt.targets[0].id and moves_only(stmt.value)
            }
            self._rebound_mask_params = {
                n.id for n in walk(self.function)
                if isinstance(n, ast.Name) and n.id in self.mask_params and not isinstance(n.ctx, ast.Load) and id(n) not in moved
            }
        return node.id not in self._rebound_mask_params

    def compared_names(self, node: ast.AST) -> frozenset[str] | None:
        if self._plain_assignments is None:  # once per function, and only where an index needs it
            self._plain_assignments = plain_assignments(self.function)
        return compared_names(node, self._plain_assignments)

    def torch_module_class(self, node: ast.AST) -> str | None:
        if isinstance(node, ast.Name) and node.id in self.given_recurrent and node.id not in self._store_lines():
            return self.given_recurrent[node.id]
        if self.evaluator.cls is None or not (isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == self.evaluator.self_name):
            return None
        return self.index.attr_torch_class(self.evaluator.cls, node.attr)

    def optimizer_class(self, node: ast.AST) -> str | None:
        held = self.torch_module_class(node)
        if held is not None:
            return held if held.startswith(OPTIM_PREFIX) else None
        if not isinstance(node, ast.Name) or node.id in self._store_lines():
            return None
        arguments = self.function.args
        params = {a.arg: a for a in (*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs)}
        if node.id not in params:
            return self.index.global_optim_objects.get(node.id)
        if isinstance(self.function, ast.Lambda):
            return None
        annotation = self.index.param_annotation(self.function, params[node.id])
        if annotation is None:
            return f"{OPTIM_PREFIX}Optimizer" if OPTIMIZER_NAME.fullmatch(node.id) else None
        declared = self.qualname(annotation)
        return declared if declared is not None and declared.startswith(OPTIM_PREFIX) else None

    def is_call_target(self, node: ast.AST) -> bool:
        if self._call_targets is None:
            self._call_targets = {id(n.func) for n in walk(self.function) if isinstance(n, ast.Call)}
        return id(node) in self._call_targets

    def subclass_torch_module_classes(self, node: ast.AST) -> list[tuple[str, str]]:
        if self.evaluator.cls is None or not (isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == self.evaluator.self_name):
            return []
        return self.index.subclass_torch_classes(self.evaluator.cls, node.attr)

    def module_function(self, node: ast.AST) -> ast.FunctionDef | None:
        if not isinstance(node, ast.Name) or node.id in self.evaluator.env or node.id in self.evaluator.local_imports:
            return None
        if node.id in self._store_lines():  # a local of that name anywhere in the function (parameters are in `env`)
            return None
        return self.index.plain_function(node.id)

    def frame_input(self, node: ast.AST) -> bool:
        if (
            isinstance(node, ast.Attribute)
            and isinstance(node.value, ast.Name)
            and node.value.id == self.evaluator.self_name
            and node.attr not in self.evaluator.self_attrs
        ):
            return True  # a buffer or tensor attribute of the module: lifted as an input
        if not isinstance(node, ast.Name):
            return False
        since = self._frame_inputs.get(node.id)
        if since is None:
            return False
        line = getattr(node, "lineno", 0)
        return not any(since < bound < line for bound in self._store_lines().get(node.id, ()))

    def _first_rebinding_lines(self) -> dict[str, int]:
        """The first line from which each name bound in the function may hold what the function
        bound, not its argument: its first store, or the start of a loop around a later store (the
        next iteration reads it). `zero_division == "warn"` before `zero_division = 0.0 if ...`
        still tests the argument. A name a nested function or lambda reads is never taken for the
        argument where the function rebinds it: the closure may run after the store."""
        first = {name: min(lines) for name, lines in self._store_lines().items()}
        for node in walk(self.function):
            if isinstance(node, (ast.For, ast.AsyncFor, ast.While)):
                for inner in walk(node):
                    if isinstance(inner, ast.Name) and not isinstance(inner.ctx, ast.Load):
                        first[inner.id] = min(first[inner.id], node.lineno)
            elif node is not self.function and isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
                for inner in walk(node):
                    if isinstance(inner, ast.Name) and inner.id in first:
                        first[inner.id] = 0
        return first

    def _store_lines(self) -> dict[str, list[int]]:
        """Lines on which each name of the function is bound (computed once, on first need)."""
        if self._stores is None:
            self._stores = {}
            for inner in walk(self.function):
                if isinstance(inner, ast.Name) and not isinstance(inner.ctx, ast.Load):
                    self._stores.setdefault(inner.id, []).append(inner.lineno)
        return self._stores

    def _conditional_nodes(self) -> set[int]:
        """Expressions that may not run when their statement does: the later operands of `and`/`or`,
        the arms of `a if c else b`, comprehension bodies (phimoe's `if cfg.rope_scaling and seq_len:`
        breaks on `seq_len` only under some configurations)."""
        if self._conditional is None:
            self._conditional = set()
            for inner in walk(self.function):
                if isinstance(inner, ast.BoolOp):
                    parts: list[ast.AST] = list(inner.values[1:])
                elif isinstance(inner, ast.IfExp):
                    parts = [inner.body, inner.orelse]
                elif isinstance(inner, (ast.ListComp, ast.SetComp, ast.GeneratorExp, ast.DictComp, ast.Lambda)):
                    parts = [inner]
                else:
                    continue
                for part in parts:
                    self._conditional.update(id(n) for n in walk(part))
        return self._conditional

    def _optional_nodes(self) -> set[int]:
        """Nodes in blocks that may not run even when the function does: loop bodies and their
        `else`, exception handlers, a `try`'s `else`, `match` cases. An `if` on an undecided
        condition is tracked apart (`arms`)."""
        if self._optional is None:
            self._optional = set()
            for inner in walk(self.function):
                blocks: list[list[ast.stmt]] = []
                if isinstance(inner, (ast.For, ast.AsyncFor, ast.While)):
                    blocks = [inner.body, inner.orelse]
                elif isinstance(inner, (ast.Try, ast.TryStar)):
                    blocks = [*(handler.body for handler in inner.handlers), inner.orelse]
                elif isinstance(inner, ast.Match):
                    blocks = [case.body for case in inner.cases]
                for block in blocks:
                    for statement in block:
                        self._optional.update(id(n) for n in walk(statement))
        return self._optional

    def _note_resume_point(self, node: ast.AST, effect: Effect, amplifier: Amplifier | None) -> None:
        """After a resumable break at the top level of the function, every bound name reaches the
        resume function as a frame input (see frame_input)."""
        if effect is Effect.BREAK and amplifier is None and not self.arms and id(node) not in self._conditional_nodes():
            line = getattr(node, "lineno", 0)
            for name in self.evaluator.env:
                self._frame_inputs[name] = line

    def once(self, key: str) -> bool:
        if key in self._once:
            return False
        self._once.add(key)
        return True

    def lambda_result(self, node: ast.Lambda, items: Kind) -> Kind:
        """The kind a key function returns for elements of `items` (evaluated silently)."""
        saved_env, was_dead = dict(self.evaluator.env), self.evaluator.dead
        self.evaluator.dead = True
        try:
            params = node.args.posonlyargs + node.args.args
            for position, param in enumerate(params):
                self.evaluator.env[param.arg] = unpack_kind(items) if position == 0 else Kind.UNKNOWN
            return self.evaluator.visit(node.body)
        finally:
            self.evaluator.env, self.evaluator.dead = saved_env, was_dead

    def current_amplifier(self) -> Amplifier | None:
        """The innermost reason dynamo would run a whole function eagerly; a certain reason (a loop,
        `try`, `with`, a caller's loop) wins over an uncertain one (a comprehension)."""
        for amplifier in reversed(self.amplifiers):
            if amplifier.certain:
                return amplifier
        if self.caller_amplifier is not None and self.caller_amplifier.certain:
            return self.caller_amplifier
        return self.amplifiers[-1] if self.amplifiers else self.caller_amplifier

    def report(self, rule: Rule, node: ast.AST, *, effect: Effect | None = None, related: tuple[Related, ...] = (), **details: str) -> None:
        if self.evaluator.dead or (rule.removed_by_flag is not None and rule.removed_by_flag in self.index.dynamo_flags):
            return
        effect = effect or rule.effect
        if id(node) in self._skipping_tests:
            effect = Effect.FRAME_SKIP
        amplifier = self.current_amplifier()
        if amplifier is not None and amplifier.certain and self._resumes_after(node, amplifier):
            amplifier = None
        if amplifier is not None and effect is Effect.FRAME_SKIP and _enters(amplifier, node):
            # GM514's context manager itself: its own block is not why it costs the function (an
            # `open(...)` entered there is different: its break costs the function *because* of that block)
            amplifier = None
        if amplifier is not None and effect in (Effect.BREAK, Effect.RESUME_FAILS):
            effect = Effect.FRAME_SKIP if amplifier.certain else Effect.MAY_SKIP
        elif amplifier is not None and not (effect is Effect.FRAME_SKIP and amplifier.certain):
            amplifier = None
        source = self.module.source
        values = {"subject": self.snippet(node), "function": self.function_name}
        values.update(details)
        headline = rule.message.format(**values)
        sentences = [f"{headline}: {rule.why}."]
        if amplifier is not None:
            sentences.append(amplifier_sentence(amplifier))
            related = related + (Related(source.header_span(amplifier.node), related_text(amplifier)),)
        elif effect is Effect.FRAME_SKIP:
            sentences.append(f"Dynamo cannot resume after it, so it runs the whole function `{self.function_name}` eagerly.")
        elif effect is Effect.RESUME_FAILS:
            sentences.append(
                f"Dynamo cannot resume after it: it compiles up to here and runs the rest of `{self.function_name}` eagerly."
            )
        sentences.append(rule.fix)
        eager_from = self._eager_from(node, effect, amplifier, rule.skips_own_frame)
        self._note_resume_point(node, effect, amplifier)
        if (
            effect is Effect.FRAME_SKIP
            and (amplifier is None or (amplifier.kind != "caller" and amplifier.certain))
            and id(node) not in self._conditional_nodes()
        ):
            # this whole function runs eagerly whenever the `if` arms it is in are taken (see
            # eager_comprehension_breaks)
            self._eager_causes.append((node, self._arms_here()))
        elif amplifier is not None and amplifier.kind == "caller" and amplifier.certain and amplifier.site is not None:
            self.module.eager_call_broke(amplifier.site)  # the caller runs eagerly: see add_callee_cause
        # A break that costs more than a split ranks higher; a comprehension is a loop.
        severity = Severity.WARNING if effect is Effect.BREAK else Severity.ERROR
        self._reported += 1
        self.module.add(
            Finding(
                code=rule.code,
                span=source.span(node),
                message=" ".join(sentences),
                severity=severity,
                fix_hint=rule.fix,
                effect=effect.value,
                function=self.function_name,
                related=related,
                anchor=type(node).__name__,
                eager_from=eager_from,
                script_call=self._script_call(),
                break_line=self.evaluator.truth_lines.get(id(node), 0),
            )
        )

    def _script_call(self) -> tuple[str, int] | None:
        """The call, in a caller's loop, `try` or `with`, that runs this code as TorchScript (see
        Amplifier.site_runs_script)."""
        caller = self.caller_amplifier
        if caller is None or not caller.site_runs_script or caller.site is None:
            return None
        return caller.function, getattr(caller.site, "lineno", 0)

    def _eager_from(self, node: ast.AST, effect: Effect, amplifier: Amplifier | None, own_frame: bool = False) -> tuple[EagerPoint, ...]:
        """Where this break makes dynamo stop compiling a function, when that is certain: the break
        itself (a skip in this function) or the call, in a loop of a caller, that leads to it. The
        caller's comes first: dynamo inlines this function into the caller's frame, so the break
        stops the caller's frame at the call. A break in a loop of this function stops this one's
        too: dynamo then runs it as a frame of its own, meets the break in the loop again and runs
        the whole function eagerly (measured, torch 2.13: nothing after the loop is reported). A
        loop body counts as run; inside an arm of an undecided `if` the break dominates only the
        rest of that arm (the other path may be traced on, and the code after the `if` with it)."""
        if effect not in (Effect.FRAME_SKIP, Effect.RESUME_FAILS):
            return ()
        caller = self.caller_amplifier
        if caller is not None and caller.certain and caller.site is not None:
            points: tuple[EagerPoint, ...] = ()
            if not (caller.conditional or self._resumes_after(node, caller)):
                points = (EagerPoint(caller.function, self.module.source.span(caller.site)),)
            if amplifier is not None and amplifier.kind == "loop" and amplifier.certain:
                if not self._resumes_after(node, amplifier):
                    points += (self._here(node),)
            return points
        # Only a loop, `try` or `with` here is known to stop this very frame: a rule's own
        # frame-skip may stop the caller's (a module built in forward: its __init__ then runs as a
        # frame of its own, and dynamo traces on in it). A break dynamo cannot resume after (`x in
        # t`, a slice by a tensor) runs the rest of this function eagerly, in its own frame or as
        # part of the caller's eager rest.
        if amplifier is None:
            skips_here = effect is Effect.FRAME_SKIP and own_frame and id(node) not in self._optional_nodes()
            this_frame = (effect is Effect.RESUME_FAILS or skips_here) and caller is None
        else:
            # an arm inside the loop bounds the point (`_here`): the rest of that arm runs only
            # after the break in the same iteration, code after the arm may run on iterations
            # (or configurations) that do not take it
            this_frame = amplifier.kind != "caller" and amplifier.certain
        return (self._here(node),) if this_frame else ()

    def _here(self, node: ast.AST) -> EagerPoint:
        """The point at `node` in this function (within the innermost undecided arm, if any)."""
        return EagerPoint(self.function_name, self.module.source.span(node), self.arms[-1] if self.arms else None)

    def _resumes_after(self, node: ast.AST, amplifier: Amplifier) -> bool:
        """A break in a loop from which dynamo's bytecode scan meets a `return` before the loop's
        jump back: dynamo resumes after it instead of running the function eagerly."""
        if amplifier.kind == "loop":
            function, site = self.function_name, node
        elif amplifier.kind == "caller" and amplifier.site is not None and isinstance(amplifier.node, (ast.For, ast.AsyncFor, ast.While)):
            function, site = amplifier.function, amplifier.site
        else:
            return False
        if self._iterator_not_rebuilt(amplifier.node):
            return False
        line, end_line = getattr(site, "lineno", 0), getattr(site, "end_lineno", 0) or 0
        return self.module.backedges.loops_back_after(function, line, end_line) is False

    def _iterator_not_rebuilt(self, loop: ast.AST) -> bool:
        """A `for` over an iterator object dynamo must rebuild to resume mid-loop (`enumerate`,
        `zip`, `map`, `filter`, `reversed`, `iter`, a generator): it cannot, and skips the frame
        whatever the bytecode says (measured: 'Failed to handle graph break gracefully' for
        enumerate and zip of lists, 'Generator reconstruction with mutations' for enumerate of an
        array; a `for` over a list, a range or a tensor resumes)."""
        if not isinstance(loop, (ast.For, ast.AsyncFor)):
            return False
        iterator = loop.iter
        if isinstance(iterator, ast.GeneratorExp):
            return True
        return isinstance(iterator, ast.Call) and self.evaluator.qualname(iterator.func) in _ITERATOR_BUILDERS

    # -- hooks from the evaluator ------------------------------------------------------------------
    def on_expr(self, node: ast.expr, kind: Kind) -> None:
        rules = self.rules
        node_type = type(node)
        for rule in rules.by_type.get(node_type, ()):
            rule.check(node, self)
        if node_type is ast.Call:
            func = node.func  # type: ignore[attr-defined]
            name = self.qualname(func)
            if name is not None:
                for rule in rules.by_qualname.get(name, ()):
                    rule.check(node, self)
                if rules.by_root:
                    for rule in rules.by_root.get(name.partition(".")[0], ()):
                        rule.check(node, self)
            if type(func) is ast.Attribute:
                for rule in rules.by_method.get(func.attr, ()):
                    rule.check(node, self)
            callee_kind = self.evaluator.kinds.get(id(func))
            if callee_kind is not None:
                for rule in rules.by_callee_kind.get(callee_kind, ()):
                    rule.check(node, self)

    def on_truth(self, node: ast.expr, kind: Kind, construct: str) -> None:
        for rule in self.rules.by_truth.get(construct, ()):
            rule.check_truth(node, kind, construct, self)

    def on_call_target(self, call: ast.Call, arg_kinds: list[Kind], kw_kinds: dict[str, Kind]) -> None:
        func = call.func
        if (
            type(func) is ast.Attribute
            and func.attr == "__init__"
            and isinstance(func.value, ast.Call)
            and isinstance(func.value.func, ast.Name)
            and func.value.func.id == "super"
            and self._super_init is None
        ):
            self._super_init = call
        if self._nested and self.qualname(func) not in DISABLE_FUNCTIONS:  # `disable(helper)(x)` runs it eagerly
            for used in (call.func, *call.args, *(k.value for k in call.keywords)):
                if isinstance(used, ast.Name) and used.id in self._nested:
                    # called here: its parameters get this call's argument kinds (`pick(x, x > 0)`
                    # hands it a mask); passed on (to checkpoint, cond, map): kinds unknown
                    called = used is call.func
                    self._walk_nested(used.id, call if called else None, arg_kinds, kw_kinds)
        wrapping = self.wrapping
        if wrapping is not None and isinstance(func, ast.Name) and func.id == wrapping.wrapped_param:
            # the decorated function: in this file, walked from here; in another, its caller said whether it breaks
            for function, cls in self.wrapped:
                self._enqueue_callee(call, function, cls, False, arg_kinds, kw_kinds)
            if wrapping.wrapped_breaks and self._eager_site(call) and not self.evaluator.dead:
                self._eager_causes.append((call, self._arms_here()))
                self._call_causes.add(id(call))
            return
        callees = self.callees.callees(call)
        if callees and self.module.keep_kinds and not self.module.uncompiled_phase:
            self.module.resolved_calls[id(call)] = [function for function, _cls, _bound in callees]
        for function, cls, bound in callees:
            self._enqueue_callee(call, function, cls, bound, arg_kinds, kw_kinds)
        for method, owner in self.callees.library_dispatched(call):
            self.module.enqueue(method, owner, {}, None, caller=self.function_name, line=call.lineno)
        if not callees and not self.evaluator.dead and isinstance(func, ast.Attribute):
            dispatched = self.callees.dispatched_methods(call)  # a dict lookup; empty in most files
            if dispatched and self.kind(func.value) is Kind.UNKNOWN and not self.frame_input(func.value):
                self.module.note_built_object_call(call, self, [method for method, _owner in dispatched], Effect.RESUME_FAILS)
        if callees and not self.evaluator.dead and isinstance(func, ast.Attribute) and self.callees.built_here(call) and not self.frame_input(func.value):
            # an object built before a break of this function reaches the resumed code as one of
            # its inputs, which dynamo can rebuild (kdiffusion's `pid`, built before a `while` on a
            # tensor): only one built in the same graph is without a source
            self.module.note_built_object_call(call, self, [function for function, _cls, _bound in callees])
        self._narrow_checked_arguments(call, callees)

    def _narrow_checked_arguments(self, call: ast.Call, callees: list[tuple[ast.FunctionDef, ClassInfo | None, bool]]) -> None:
        """After `_check_timelike("t", t, True)`, whose body opens by asserting
        `isinstance(timelike, torch.Tensor)` (torchdiffeq's input checks), the local `t` holds a
        tensor: the call returns only if it does. Only a call that is a statement of its own, or
        the value of one (`func, y0, t = _check_inputs(func, y0, t)`), narrows (not one an `and`
        may skip), only a name every function the call may run asserts on, and only names whose
        kind is not known yet."""
        current = self._current_statement
        if not callees or not (isinstance(current, (ast.Expr, ast.Assign)) and current.value is call):
            return
        narrowed: set[str] | None = None
        for function, _cls, bound in callees:
            asserted = self.module.asserted_tensor_params(function)
            params = function.args.posonlyargs + function.args.args
            passed = passed_arguments(params[1:] if bound else params, call)
            names = {given.id for name in asserted if isinstance(given := passed.get(name), ast.Name)}
            narrowed = names if narrowed is None else narrowed & names
        for name in narrowed or ():
            if self.evaluator.env.get(name, Kind.UNKNOWN) is Kind.UNKNOWN:
                self.evaluator.env[name] = Kind.TENSOR

    def _enqueue_callee(
        self,
        call: ast.Call,
        function: ast.FunctionDef,
        cls: ClassInfo | None,
        bound: bool,
        arg_kinds: list[Kind],
        kw_kinds: dict[str, Kind],
    ) -> None:
        params = function.args.posonlyargs + function.args.args
        if bound:
            params = params[1:]
        kinds = _argument_kinds(params, call, arg_kinds, kw_kinds)
        kinds.update({name: Kind.NONE for name in _defaulted_to_none(function, params, call)})
        displays: set[str] = set()
        recurrent: dict[str, str] = {}
        for param, arg, kind in zip(params, call.args, arg_kinds):
            if isinstance(arg, ast.Starred):
                break
            layer = self.torch_module_class(arg)
            if layer is not None:
                recurrent[param.arg] = layer
            if kind is Kind.TENSORS and isinstance(arg, (ast.Tuple, ast.List)) and not all(map(self.frame_input, arg.elts)):
                displays.add(param.arg)  # some element is computed in the graph (see frame_input)
        if not self.evaluator.dead and self._eager_site(call) and self._may_break_comprehensions():
            self.module.note_eager_site(call, self, self._arms_here())
        if self.evaluator.tensor_method_calls and not self.evaluator.dead:
            amplifier = self.current_amplifier()
            if amplifier is None or amplifier.kind == "caller":  # in a loop, `try` or `with` the caller runs eagerly
                self.module.note_method_argument_call(self.evaluator.tensor_method_calls[-1], call, self, function)
        amplifier = self.current_amplifier()
        if amplifier is not None:
            # The function that runs eagerly is the one holding the loop/try/with, however deep
            # the call chain below it goes.
            callee = f"{cls.name}.{function.name}" if cls is not None else function.name
            if amplifier.kind == "caller":  # the eager function's call site stays the one in that function
                site, conditional, runs_script = amplifier.site, amplifier.conditional, amplifier.site_runs_script
            else:
                site, conditional, runs_script = call, bool(self.arms), self.index.is_script_function(function)
            amplifier = Amplifier(
                "caller", amplifier.node, amplifier.label, amplifier.function, callee, amplifier.certain, site, conditional, runs_script
            )
        for keyword in call.keywords:
            layer = self.torch_module_class(keyword.value) if keyword.arg is not None else None
            if layer is not None:
                recurrent[keyword.arg or ""] = layer
        self.module.enqueue(
            function, cls, kinds, amplifier, caller=self.function_name, line=call.lineno,
            given_tensor_displays=frozenset(displays), given_recurrent=recurrent,
            given_values=_given_arguments(function, params, call),
        )

    def on_property_read(self, call: ast.Call) -> None:
        # measured, torch 2.13: dynamo cannot resume inside an attribute read, so a break in the
        # getter makes it run the reading function eagerly (tests/corpus/property_getter_reads.py)
        assert isinstance(call.func, ast.Attribute)
        self.amplifiers.append(Amplifier("property", call, f"read of the property `{call.func.attr}`", self.function_name))
        try:
            self.on_call_target(call, [], {})
        finally:
            self.amplifiers.pop()

    def on_nested_scope(self, node: ast.Lambda | ast.FunctionDef) -> None:
        if isinstance(node, ast.Lambda):
            saved = dict(self.evaluator.env)
            for param in node.args.posonlyargs + node.args.args + node.args.kwonlyargs:
                self.evaluator.env[param.arg] = Kind.UNKNOWN
            self.evaluator.visit(node.body)
            self.evaluator.env = saved

    def enter_comprehension(self, node: ast.expr) -> None:
        if isinstance(node, ast.GeneratorExp):
            self.amplifiers.append(Amplifier("generator", node, "generator expression", self.function_name))
        else:
            self.amplifiers.append(Amplifier("comprehension", node, "comprehension", self.function_name, certain=False))

    def exit_comprehension(self, node: ast.expr) -> None:
        self.amplifiers.pop()

    # -- statements ------------------------------------------------------------------------------
    def walk_body(self, body: list[ast.stmt]) -> bool:
        """Walk a block; True when it always ends in return/raise/break/continue."""
        for stmt in body:
            self._current_statement = stmt
            handler = _STATEMENTS.get(type(stmt))
            dead, amplifiers = self.evaluator.dead, len(self.amplifiers)
            try:
                if handler is None:
                    self._generic_statement(stmt)
                    continue
                if handler(self, stmt):
                    return True
            except RecursionError:
                # One statement nested past the interpreter's recursion limit (a sum of 600 terms, a
                # chain of 900 calls) costs only itself: the function's other findings stand.
                self.evaluator.dead = dead
                del self.amplifiers[amplifiers:]
                self._too_deep(stmt)
        return False

    def _too_deep(self, stmt: ast.stmt) -> None:
        self.module.add(
            Finding(
                code=INTERNAL_ERROR_CODE,
                span=self.module.source.header_span(stmt),
                message=(
                    f"This statement of `{self.function_name}` is nested too deeply for GraphMend to analyse; "
                    "the rest of the function was analysed."
                ),
                severity=Severity.INFO,
                function=self.function_name,
            )
        )

    def _statement_rules(self, stmt: ast.stmt) -> None:
        if not self.evaluator.dead:
            for rule in self.rules.by_statement.get(type(stmt), ()):
                rule.check_statement(stmt, self)

    def _generic_statement(self, stmt: ast.stmt) -> bool:
        for child in child_nodes(stmt):
            if isinstance(child, ast.expr):
                self.evaluator.visit(child)
        return False

    def _expr_stmt(self, stmt: ast.Expr) -> bool:
        self.evaluator.visit(stmt.value)
        return False

    def _assign(self, stmt: ast.Assign) -> bool:
        kind = self.evaluator.visit(stmt.value)
        for target in stmt.targets:
            self._visit_target(target)
            self.evaluator.bind(target, kind, stmt.value)
            self.callees.bind_instances(target, stmt.value, iterating=False)
        self._statement_rules(stmt)
        return False

    def _ann_assign(self, stmt: ast.AnnAssign) -> bool:
        kind = annotation_kind(stmt.annotation, self.index)
        if stmt.value is not None:
            value_kind = self.evaluator.visit(stmt.value)
            if kind is Kind.UNKNOWN and not (value_kind in TENSOR_KINDS and names_container(stmt.annotation, self.index)):
                kind = value_kind
        self._visit_target(stmt.target)
        if stmt.value is not None or kind is not Kind.UNKNOWN:
            self.evaluator.bind(stmt.target, kind, stmt.value)
        return False

    def _aug_assign(self, stmt: ast.AugAssign) -> bool:
        target = stmt.target
        if isinstance(target, ast.Name):
            left = self.evaluator.env.get(target.id, Kind.UNKNOWN)
            self.evaluator.kinds[id(target)] = left  # what `n += 1` reads, for the statement's rules
        else:
            left = self.evaluator.visit(target)  # x[mask] += 1 reads x[mask] first
        right = self.evaluator.visit(stmt.value)
        self._statement_rules(stmt)
        result = binop_kind(left, right, stmt.op)
        if isinstance(target, ast.Name):
            self.evaluator.env[target.id] = result
        elif isinstance(target, ast.Attribute):
            self.evaluator.bind(target, result, None)
        return False

    def _visit_target(self, target: ast.expr) -> None:
        """Evaluate the parts of an assignment target that are read (`x[i.item()] = v` reads `i`)."""
        if isinstance(target, ast.Subscript):
            self.evaluator.visit(target.value)
            self.evaluator.visit(target.slice)
            for rule in self.rules.by_store_type.get(ast.Subscript, ()):
                rule.check_store(target, self)
        elif isinstance(target, ast.Attribute):
            self.evaluator.visit(target.value)
            for rule in self.rules.by_store_type.get(ast.Attribute, ()):
                rule.check_store(target, self)
        elif isinstance(target, (ast.Tuple, ast.List)):
            for element in target.elts:
                self._visit_target(element)
        elif isinstance(target, ast.Starred):
            self._visit_target(target.value)

    def _return(self, stmt: ast.Return) -> bool:
        if stmt.value is not None:
            self.evaluator.visit(stmt.value)
        return True

    def _raise(self, stmt: ast.Raise) -> bool:
        if stmt.exc is not None:
            self.evaluator.visit(stmt.exc)
        return True

    def _jump(self, stmt: ast.stmt) -> bool:
        return True

    def _nothing(self, stmt: ast.stmt) -> bool:
        return False

    def _assert(self, stmt: ast.Assert) -> bool:
        # A data-dependent assert with no message or a constant one does not break: dynamo sees
        # the jump straight into `raise AssertionError(<constant>)` and emits a runtime check. So
        # the test is evaluated for what it contains; its last tested value breaks only where
        # that pattern is not there, i.e. the message is computed (GM107; `not` is GM104's).
        self.evaluator.visit(stmt.test)
        if stmt.msg is not None:
            self.evaluator.visit(stmt.msg)
            tested = _last_tested(stmt.test, self.evaluator.static_truth)
            if tested is not None and not is_constant_message(stmt.msg) and not self.evaluator.dead:
                self.evaluator.note_truth_line(tested, stmt.lineno)
                self.on_truth(tested, self.evaluator.kind(tested), "assert")
        return False

    def _import(self, stmt: ast.Import | ast.ImportFrom) -> bool:
        self.evaluator.add_import(stmt)
        return False

    def _global(self, stmt: ast.Global | ast.Nonlocal) -> bool:
        for name in stmt.names:
            self.evaluator.env.pop(name, None)
        return False

    @contextlib.contextmanager
    def _arm(self, body: list[ast.stmt], statement: ast.stmt) -> Iterator[None]:
        """Inside one arm of an undecided `if`/`match`: its lines bound what a break there dominates."""
        first = body[0].lineno if body else 0
        last = max((s.end_lineno or s.lineno for s in body), default=0)
        self.arms.append((first, last))
        # where code after the whole statement starts, if this arm falls through to it
        leaves = bool(body) and isinstance(body[-1], (ast.Return, ast.Raise, ast.Continue, ast.Break))
        self._arm_exits.append((statement.lineno, sys.maxsize if leaves else (statement.end_lineno or statement.lineno)))
        try:
            yield
        finally:
            self.arms.pop()
            self._arm_exits.pop()

    def _if(self, stmt: ast.If) -> bool:
        truth = self.evaluator.static_truth(stmt.test)
        saved = self.amplifiers
        if stmt.body and isinstance(stmt.body[-1], ast.Return):
            # `if <tensor test>: ... return` in a loop: torch 2.13 resumes after a break in such a
            # test instead of running the function eagerly (measured: tests/corpus/amp_if_return_*)
            self.amplifiers = [a for a in saved if a.kind != "loop"]
        try:
            self.evaluator.visit_truth(stmt.test, "if", stmt.lineno)
        finally:
            self.amplifiers = saved
        if truth is True:
            return self.walk_body(stmt.body)
        if truth is False:
            return self.walk_body(stmt.orelse)
        before = dict(self.evaluator.env)
        narrowed = self.evaluator.type_test(stmt.test)  # (name, kind where the test holds, kind where not)
        if narrowed is not None:
            self.evaluator.env = {**before, narrowed[0]: narrowed[1]}
        with self._arm(stmt.body, stmt):
            body_ends = self.walk_body(stmt.body)
        after_body = self.evaluator.env
        self.evaluator.env = dict(before) if narrowed is None else {**before, narrowed[0]: narrowed[2]}
        with self._arm(stmt.orelse, stmt):
            else_ends = self.walk_body(stmt.orelse)
        if body_ends and not else_ends:
            pass  # only the else path continues: keep its environment
        elif else_ends and not body_ends:
            self.evaluator.env = after_body
        else:
            merged = merge_envs(after_body, self.evaluator.env)
            if narrowed is not None and self._normalised_to_method(narrowed, before, after_body, self.evaluator.env):
                merged[narrowed[0]] = Kind.TENSOR_METHOD
            self.evaluator.env = merged
        return body_ends and else_ends

    @staticmethod
    def _normalised_to_method(
        narrowed: tuple[str, Kind, Kind], before: dict[str, Kind], after_body: dict[str, Kind], after_else: dict[str, Kind]
    ) -> bool:
        """`if torch.is_tensor(op): op = op.matmul` (an argument taken as a tensor or as a callable,
        linear_operator's `linear_cg`) where `op` is known to be a tensor: the arm where the test
        fails, which leaves `op` as it was, contradicts what is known, so `op` holds the method."""
        name, _, outside = narrowed
        return (
            before.get(name) in TENSOR_KINDS
            and after_body.get(name) is Kind.TENSOR_METHOD
            and after_else.get(name) is outside
            and outside not in TENSOR_KINDS
        )

    def _loop_body(
        self, stmt: ast.For | ast.While | ast.AsyncFor, bind: Callable[[], None], label: str, retest: Callable[[], None] | None = None
    ) -> None:
        """Walk a loop body as the first iteration sees it, and once more only if the body changes
        the kind of a variable (what later iterations see); findings of both passes are real.
        `retest` (a `while` test) is evaluated again as the second iteration sees it, where the body
        changed the kind of a name it reads (`err = 1` then `err = torch.norm(...)` in the body)."""
        before = dict(self.evaluator.env)
        self.amplifiers.append(Amplifier("loop", stmt, label, self.function_name))
        try:
            bind()
            self.walk_body(stmt.body)
            if retest is not None:
                retest()
            merged = merge_envs(before, self.evaluator.env)
            if merged != before:
                self.evaluator.env = merged
                bind()
                self.walk_body(stmt.body)
        finally:
            self.amplifiers.pop()
        after = self.evaluator.env
        self.evaluator.env = merge_envs(before, after)
        # a number the loop turns into a tensor (`total = total + p.norm()`): a tensor after the
        # loop wherever it ran (dynamo unrolls it), which is where branching on it breaks
        for name, kind in after.items():
            if before.get(name) is Kind.PY and kind in TENSOR_KINDS and kind is not Kind.RANDOM_NUMBER:
                self.evaluator.env[name] = Kind.TENSOR_OR_NUMBER

    def _assigned_tensors(self, body: list[ast.stmt]) -> set[str]:
        """Names a statement of `body` binds to a value the walk found to be a tensor, on any path:
        a `while` test reading such a name tests a tensor once that path has run (POT's sinkhorn
        refreshes `err = torch.norm(...)` under `if cpt % 10 == 0:`)."""
        kinds = self.evaluator.kinds
        found: set[str] = set()
        for stmt in body:
            for node in walk(stmt):
                if isinstance(node, ast.Assign) and kinds.get(id(node.value)) in TENSOR_KINDS - {Kind.RANDOM_NUMBER}:
                    found.update(t.id for t in node.targets if isinstance(t, ast.Name))
                elif isinstance(node, (ast.AugAssign, ast.AnnAssign)) and node.value is not None:
                    if isinstance(node.target, ast.Name) and kinds.get(id(node.value)) in TENSOR_KINDS - {Kind.RANDOM_NUMBER}:
                        found.add(node.target.id)
        return found

    def _for(self, stmt: ast.For | ast.AsyncFor) -> bool:
        iter_kind = self.evaluator.visit(stmt.iter)
        element = self._iterated_mapping(stmt.iter) or element_kind(iter_kind, stmt.iter, self.evaluator)
        self.callees.bind_instances(stmt.target, stmt.iter, iterating=True)
        self._loop_body(stmt, lambda: self.evaluator.bind(stmt.target, element, None), "`for` loop")
        self.walk_body(stmt.orelse)
        return False

    def _while(self, stmt: ast.While) -> bool:
        truth = self.evaluator.static_truth(stmt.test)
        if truth is False:
            self.walk_body(stmt.orelse)
            return False
        self.evaluator.visit_truth(stmt.test, "while", stmt.lineno)
        first = {n.id: self.evaluator.env.get(n.id) for n in walk(stmt.test) if isinstance(n, ast.Name)}

        def retest() -> None:
            if self.evaluator.dead:
                return
            env = self.evaluator.env
            changed = [n for n, kind in first.items() if kind in NON_TENSOR_KINDS and env.get(n) in TENSOR_KINDS | {Kind.UNKNOWN}]
            if not changed:
                return  # the usual loop: no name of the test changed kind (no walk of the body)
            tensors = self._assigned_tensors(stmt.body) if any(env.get(n) is Kind.UNKNOWN for n in changed) else set()
            flipped: dict[str, Kind] = {
                n: env.get(n, Kind.UNKNOWN) if env.get(n) in TENSOR_KINDS else Kind.TENSOR_OR_NUMBER
                for n in changed
                if env.get(n) is not Kind.RANDOM_NUMBER and (env.get(n) in TENSOR_KINDS or n in tensors)
            }
            if flipped:
                self.evaluator.env = {**env, **flipped}
                # measured on torch 2.13: a tensor that first appears in a later iteration, as an
                # operand of `and`/`or` other than the last (`while err > thr and cpt < n:`), makes
                # dynamo skip the whole frame; alone or last, it breaks there as usual
                test = stmt.test
                self._skipping_tests = {id(v) for v in test.values[:-1]} if isinstance(test, ast.BoolOp) else set()
                try:
                    self.evaluator.visit_truth(stmt.test, "while", stmt.lineno)
                finally:
                    self.evaluator.env = env
                    self._skipping_tests = set()

        self._loop_body(stmt, lambda: None, "`while` loop", retest)
        self.walk_body(stmt.orelse)
        return False

    def _with(self, stmt: ast.With | ast.AsyncWith) -> bool:
        pushed = 0
        try:
            for item in stmt.items:
                expr = item.context_expr
                if not self._is_safe_context_manager(expr):
                    label = f"`with {self.snippet(expr)}` block"
                    self.amplifiers.append(Amplifier("with", stmt, label, self.function_name))
                    pushed += 1
                self.evaluator.visit(expr)
                self._follow_context_manager(expr)
                if item.optional_vars is not None:
                    self._visit_target(item.optional_vars)
                    self.evaluator.bind(item.optional_vars, Kind.UNKNOWN, None)
            self._statement_rules(stmt)
            return self.walk_body(stmt.body)
        finally:
            for _ in range(pushed):
                self.amplifiers.pop()

    def _follow_context_manager(self, expr: ast.expr) -> None:
        """`with Timer():` runs `Timer.__enter__`/`__exit__`: analyse them as called from here."""
        if self.evaluator.dead or not (isinstance(expr, ast.Call) and isinstance(expr.func, ast.Name)):
            return
        info = self.index.classes.get(expr.func.id)
        if info is None or expr.func.id in self.evaluator.env:
            return
        amplifier = self.current_amplifier()
        for name in ("__enter__", "__exit__"):
            method = self.index.method(info, name)
            if method is None:
                continue
            callee_amplifier = (
                Amplifier(
                    "caller", amplifier.node, amplifier.label, amplifier.function, f"{info.name}.{name}", amplifier.certain
                )
                if amplifier is not None
                else None
            )
            self.module.enqueue(method, self.index.owner.get(id(method)), {}, callee_amplifier, caller=self.function_name, line=expr.lineno)

    def _is_safe_context_manager(self, expr: ast.expr) -> bool:
        target = expr.func if isinstance(expr, ast.Call) else expr
        return self.qualname(target) in SAFE_CONTEXT_MANAGERS

    def _try(self, stmt: ast.Try) -> bool:
        self._statement_rules(stmt)  # GM530: imports the `try` probes (not a break *in* the `try`: see there)
        self.amplifiers.append(Amplifier("try", stmt, "`try` block", self.function_name))
        try:
            self.walk_body(stmt.body)
        finally:
            self.amplifiers.pop()
        for handler in stmt.handlers:
            self.amplifiers.append(Amplifier("except", handler, "`except` handler", self.function_name))
            try:
                if handler.type is not None:
                    self.evaluator.visit(handler.type)
                if handler.name:
                    self.evaluator.env[handler.name] = Kind.UNKNOWN
                self.walk_body(handler.body)
            finally:
                self.amplifiers.pop()
        self.walk_body(stmt.orelse)
        return self.walk_body(stmt.finalbody)

    def _function_def(self, stmt: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
        for decorator in stmt.decorator_list:
            self.evaluator.visit(decorator)
        disabled = any(
            self.qualname(d.func if isinstance(d, ast.Call) else d) in DISABLE_FUNCTIONS for d in stmt.decorator_list
        )
        self.evaluator.env[stmt.name] = Kind.DISABLED if disabled else Kind.UNKNOWN
        if disabled or self.evaluator.dead or isinstance(stmt, ast.AsyncFunctionDef):
            return False
        # Analysed when the enclosing code calls it or passes it to a call (checkpoint, cond, map);
        # a function that is only returned or stored runs wherever its caller runs it.
        self._nested[stmt.name] = (stmt, dict(self.evaluator.env))
        return False

    def _walk_nested(self, name: str, call: ast.Call | None = None, arg_kinds: list[Kind] | None = None, kw_kinds: dict[str, Kind] | None = None) -> None:
        stmt, closure = self._nested.pop(name)
        params = stmt.args.posonlyargs + stmt.args.args
        param_kinds = _argument_kinds(params, call, arg_kinds or [], kw_kinds or {}) if call is not None else {}
        nested = FunctionWalker(
            self.module,
            stmt,
            f"{self.function_name}.<locals>.{stmt.name}",
            self.evaluator.cls,
            is_entry=False,
            param_kinds=param_kinds,
            closure=closure,
            self_name=self.evaluator.self_name,
        )
        nested.evaluator.local_imports = dict(self.evaluator.local_imports)
        nested.run()

    def _class_def(self, stmt: ast.ClassDef) -> bool:
        self._statement_rules(stmt)
        self.evaluator.env[stmt.name] = Kind.UNKNOWN
        return False

    def _match(self, stmt: ast.Match) -> bool:
        self.evaluator.visit(stmt.subject)
        before = dict(self.evaluator.env)
        merged: dict[str, Kind] | None = None
        for case in stmt.cases:
            self.evaluator.env = dict(before)
            if case.guard is not None:
                self.evaluator.visit_truth(case.guard, "if")
            with self._arm(case.body, stmt):
                self.walk_body(case.body)
            merged = self.evaluator.env if merged is None else merge_envs(merged, self.evaluator.env)
        self.evaluator.env = merged if merged is not None else before
        return False


# Values a mapping annotation is trusted for: a `torch.Generator` is passed only on purpose
# (annotated tensors and numbers are often loose: an annotation of a dict's values is not taken).
_ANNOTATED_MAPPING_VALUES = frozenset({Kind.GENERATOR})
_ITERATOR_BUILDERS = frozenset(f"builtins.{name}" for name in ("enumerate", "zip", "map", "filter", "reversed", "iter"))

_STATEMENTS: dict[type, Callable[[FunctionWalker, Any], bool]] = {  # each handler takes its statement type
    ast.Expr: FunctionWalker._expr_stmt,
    ast.Assign: FunctionWalker._assign,
    ast.AnnAssign: FunctionWalker._ann_assign,
    ast.AugAssign: FunctionWalker._aug_assign,
    ast.Return: FunctionWalker._return,
    ast.Raise: FunctionWalker._raise,
    ast.Break: FunctionWalker._jump,
    ast.Continue: FunctionWalker._jump,
    ast.Pass: FunctionWalker._nothing,
    ast.Delete: FunctionWalker._nothing,
    ast.Assert: FunctionWalker._assert,
    ast.Import: FunctionWalker._import,
    ast.ImportFrom: FunctionWalker._import,
    ast.Global: FunctionWalker._global,
    ast.Nonlocal: FunctionWalker._global,
    ast.If: FunctionWalker._if,
    ast.For: FunctionWalker._for,
    ast.AsyncFor: FunctionWalker._for,
    ast.While: FunctionWalker._while,
    ast.With: FunctionWalker._with,
    ast.AsyncWith: FunctionWalker._with,
    ast.Try: FunctionWalker._try,
    ast.FunctionDef: FunctionWalker._function_def,
    ast.AsyncFunctionDef: FunctionWalker._function_def,
    ast.ClassDef: FunctionWalker._class_def,
    ast.Match: FunctionWalker._match,
}
if hasattr(ast, "TryStar"):
    _STATEMENTS[ast.TryStar] = FunctionWalker._try  # type: ignore[attr-defined]


def _enters(amplifier: Amplifier, node: ast.AST) -> bool:
    """Whether `node` is a context manager that the `with` statement behind `amplifier` enters."""
    return amplifier.kind == "with" and isinstance(amplifier.node, ast.With) and any(
        item.context_expr is node for item in amplifier.node.items
    )


def _handed_over(given: ast.expr) -> tuple[str, Kind] | None:
    """The name a call's argument hands over, with what a tensor there says of it: `sigmas` or
    `sigmas[1:]` is a tensor, `sigmas[i]` an element of something that holds tensors. A string key
    (`batch["x"]`) indexes a dict, whose other keys say nothing."""
    if isinstance(given, ast.Name):
        return given.id, Kind.TENSOR
    if not (isinstance(given, ast.Subscript) and isinstance(given.value, ast.Name)):
        return None
    if isinstance(given.slice, ast.Slice):
        return given.value.id, Kind.TENSOR
    if isinstance(given.slice, ast.Constant) and isinstance(given.slice.value, str):
        return None
    return given.value.id, Kind.TENSORS


def _argument_kinds(params: list[ast.arg], call: ast.Call, arg_kinds: list[Kind], kw_kinds: dict[str, Kind]) -> dict[str, Kind]:
    """The kinds a call hands the parameters `params` (a bound method's without `self`), where
    known: positional arguments up to the first `*args`, then keywords."""
    kinds: dict[str, Kind] = {}
    for param, arg, kind in zip(params, call.args, arg_kinds):
        if isinstance(arg, ast.Starred):
            break
        if kind is not Kind.UNKNOWN:
            kinds[param.arg] = kind
    kinds.update({name: kind for name, kind in kw_kinds.items() if kind is not Kind.UNKNOWN and name != "**"})
    return kinds


def _given_arguments(function: ast.FunctionDef, params: list[ast.arg], call: ast.Call) -> dict[str, Given]:
    """What `call` fixes of each parameter: a constant passed as a literal (`square_dist=True`,
    `None`, `0`) or left at a literal default where the call unpacks no `*args`/`**kwargs` and no
    decorator may supply it, or a value that is never None (`minlength=4 * len_t`). Dynamo traces
    a Python constant argument as that constant, so a test of the parameter takes one branch
    (GPyTorch's `covar_dist(..., square_dist=True)` never reaches its `_dist` arm)."""
    passed = passed_arguments(params, call)
    truths = {name: given for name, value in passed.items() if (given := _given_by(value)) is not None}
    unpacks = any(isinstance(a, ast.Starred) for a in call.args) or any(k.arg is None for k in call.keywords)
    if unpacks or any(not (isinstance(d, ast.Name) and d.id in ("staticmethod", "classmethod")) for d in function.decorator_list):
        return truths
    arguments = function.args
    positional = arguments.posonlyargs + arguments.args
    defaults = list(zip(positional[len(positional) - len(arguments.defaults) :], arguments.defaults))
    defaults += [(a, d) for a, d in zip(arguments.kwonlyargs, arguments.kw_defaults) if d is not None]
    for param, default in defaults:
        if param.arg not in passed and (param in params or param in arguments.kwonlyargs) and isinstance(default, ast.Constant):
            if isinstance(default.value, CONSTANT_TYPES):
                truths[param.arg] = Given.constant(default.value)
    return truths


# Expressions whose value is never None (a number, a string, a display, a comparison): Python
# builds each without calling anything that may return None, save an operator a class overloads.
_NEVER_NONE = (ast.BinOp, ast.UnaryOp, ast.Compare, ast.JoinedStr, ast.List, ast.Tuple, ast.Dict, ast.Set, ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp, ast.Lambda)


def _given_by(argument: ast.expr) -> Given | None:
    """What an argument expression fixes of its parameter (see _given_arguments)."""
    if isinstance(argument, ast.Constant):
        return Given.constant(argument.value) if isinstance(argument.value, CONSTANT_TYPES) else None
    return Given(not_none=True) if isinstance(argument, _NEVER_NONE) else None


def _defaulted_to_none(function: ast.FunctionDef, params: list[ast.arg], call: ast.Call) -> list[str]:
    """The parameters `call` leaves at a default of None (timm's `rand_bbox(img_shape, lam,
    count=None)` called without a count): None where it runs. Nothing when the call unpacks
    `*args` or `**kwargs`, which may pass any of them, or the function is decorated (a decorator
    may supply the argument, `kwargs.setdefault("count", 2)`); not a parameter a nested function
    rebinds through `nonlocal`."""
    if any(isinstance(a, ast.Starred) for a in call.args) or any(k.arg is None for k in call.keywords):
        return []
    if any(not (isinstance(d, ast.Name) and d.id in ("staticmethod", "classmethod")) for d in function.decorator_list):
        return []
    arguments = function.args
    positional = arguments.posonlyargs + arguments.args
    defaults = list(zip(positional[len(positional) - len(arguments.defaults) :], arguments.defaults))
    defaults += [(a, d) for a, d in zip(arguments.kwonlyargs, arguments.kw_defaults) if d is not None]
    passed = passed_arguments(params, call)
    left = [
        param.arg for param, default in defaults
        if param.arg not in passed and isinstance(default, ast.Constant) and default.value is None and (param in params or param in arguments.kwonlyargs)
    ]
    if not left:  # most calls: no walk of the callee (this runs for every call the walk follows)
        return []
    rebound = {name for node in walk(function) if isinstance(node, ast.Nonlocal) for name in node.names}
    return [name for name in left if name not in rebound]


def _own_comprehensions(function: ast.FunctionDef | ast.AsyncFunctionDef) -> list[ast.ListComp | ast.SetComp | ast.DictComp]:
    """The list, set and dict comprehensions written in `function` itself, outermost first (not
    those of nested functions or lambdas, nor comprehensions inside comprehensions)."""
    found: list[ast.ListComp | ast.SetComp | ast.DictComp] = []

    def visit(node: ast.AST) -> None:
        for child in child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef, ast.GeneratorExp)):
                continue
            if isinstance(child, (ast.ListComp, ast.SetComp, ast.DictComp)):
                found.append(child)
                continue
            visit(child)

    visit(function)
    return sorted(found, key=lambda n: (n.lineno, n.col_offset))


def is_constant_message(message: ast.expr) -> bool:
    """Whether Python compiles `message` to one constant, asked of the compiler itself: dynamo
    recognises an assert only by its `LOAD_CONST` message, and what folds is the compiler's call
    (`"a" "b"`, `"a" + "b"`, `f"text"` and `("a", "b")[0]` fold; `"n=%d" % 3` and strings over
    4096 characters do not, on 3.11)."""
    if isinstance(message, ast.Constant):
        return True
    if any(isinstance(n, (ast.Call, ast.Attribute, ast.FormattedValue)) or (isinstance(n, ast.Name) and n.id != "__debug__") for n in walk(message)):
        return False  # reads a value at run time (most computed messages): no need to compile
    try:
        code = compile(ast.fix_missing_locations(ast.Expression(body=message)), "<message>", "eval")
    except (SyntaxError, ValueError, TypeError, RecursionError):
        return False
    ops = [i.opname for i in dis.get_instructions(code) if i.opname not in ("RESUME", "NOP", "CACHE")]
    return ops == ["LOAD_CONST", "RETURN_VALUE"]


def _last_tested(test: ast.expr, static_truth: Callable[[ast.expr], bool | None]) -> ast.expr | None:
    """The value whose truth the assert's final jump tests, where that jump is the one into the
    raise (`b` of `a and b`, of `a or b`); None where it is not (`not t`: GM104 reports it) or an
    earlier operand Python knows decides the assert (`False and t`, `True or t`)."""
    while isinstance(test, ast.BoolOp):
        deciding = isinstance(test.op, ast.Or)
        if any(static_truth(v) is deciding for v in test.values[:-1]):
            return None
        test = test.values[-1]
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        return None
    return test

