"""One analysis of one module: entries first, then every same-file function they call.

Functions are walked breadth-first from the entries, each once. A callee receives the kinds of
the arguments at the first call site that reaches it (so `rotate_half(q)` knows `q` is a tensor)
and the amplifier of that call site (a helper called inside a loop makes the *caller* run
eagerly when the helper breaks).
"""

from __future__ import annotations

import ast
import dataclasses
from collections import deque
from dataclasses import dataclass, field
from pathlib import PurePath

from ..astwalk import child_nodes, walk
from ..config import Config
from ..findings import Finding, Severity
from .amplifiers import Amplifier
from .backedges import Backedges
from .decorators import Wrapping
from .guards import Given
from .kinds import Kind, join
from .latent import mark_latent
from .param_evidence import tensor_evidence
from .regions import Entry, find_entries
from .rules import INTERNAL_ERROR_CODE, Effect, RuleSet
from .rules.untraceable import RECURRENT_READ_TYPES, RecurrentModuleCall
from .source import SourceFile
from .symbols import ClassInfo, ModuleIndex
from .tensors import own_nodes, passed_arguments
from .uncompiled import imported_tensor_call, uncompiled_candidates
from .walker import FunctionWalker

WorkKey = int | tuple[int, str]  # see ModuleAnalysis._work_key


@dataclass
class _Work:
    function: ast.FunctionDef
    cls: ClassInfo | None
    param_kinds: dict[str, Kind]
    amplifier: Amplifier | None
    is_entry: bool
    reason: str
    explicit: bool = False  # decorated with or passed to torch.compile (not just a forward)
    # Parameters some caller passes a tuple or list display of tensors (`(self.padding_total, extra)`):
    # evidence that outranks an annotation saying numbers (see FunctionWalker._bind_parameters).
    given_tensor_displays: set[str] = field(default_factory=set)
    # parameters every caller passes a module attribute of a torch layer class -> that class (the
    # walker's given_recurrent): a caller that passes something else drops the parameter
    given_recurrent: dict[str, str] = field(default_factory=dict)
    wrapping: Wrapping | None = None  # a decorator's wrapper: what it wraps (analysis/decorators.py)
    # for a wrapper of this file's functions: those functions (its call of them is followed)
    wrapped: tuple[tuple[ast.FunctionDef, ClassInfo | None], ...] = ()
    root: int = 0  # id() of the entry function whose calls led here
    # parameters known to hold an instance of a class of the file (a self-registered hook's `module`)
    instance_params: dict[str, ClassInfo] = field(default_factory=dict)
    # what every caller's argument fixes of a parameter (FunctionWalker.given_values)
    given_values: dict[str, Given] = field(default_factory=dict)


class ModuleAnalysis:
    def __init__(
        self,
        source: SourceFile,
        tree: ast.Module,
        index: ModuleIndex,
        rules: RuleSet,
        config: Config,
        strict: bool = False,
        keep_kinds: bool = False,
    ) -> None:
        self.source = source
        self.tree = tree
        self.backedges = Backedges(tree, source.path)
        self.index = index
        self.rules = rules
        self.hooked_types = frozenset(rules.by_type) | (frozenset({ast.Call}) if rules.has_call_rules else frozenset())
        # Names and attributes are the commonest nodes, and only GM518 looks at them, for reads
        # of a recurrent layer: functions that can hold none are walked without those hooks
        # (FunctionWalker), which keeps `graphmend check` within its budget against ruff.
        only_recurrent = all(isinstance(rule, RecurrentModuleCall) for t in RECURRENT_READ_TYPES for rule in rules.by_type.get(t, ()))
        self.hooked_types_without_reads = self.hooked_types - RECURRENT_READ_TYPES if only_recurrent else self.hooked_types
        self.config = config
        self.strict = strict
        self.keep_kinds = keep_kinds
        self.kinds: dict[int, Kind] = {}  # filled only with keep_kinds (the rewrites need them)
        # id(call) -> the in-file functions it may run, as the walk resolved them (keep_kinds only:
        # purity.py follows `spec.project(x)` into `Bounded.project` with them)
        self.resolved_calls: dict[int, list[ast.FunctionDef]] = {}
        self.findings: list[Finding] = []
        self.reasons: dict[str, str] = {}  # qualified function name -> why it is compiled
        self._seen: set[tuple[str, int, int, int, int]] = set()
        self._queue: deque[_Work] = deque()
        # id() of each function queued, or (id(), class) for a method queued as a subclass whose
        # overrides change what it calls (see _work_key)
        self._pending: dict[WorkKey, _Work] = {}
        self._dispatch: dict[tuple[int, str], bool] = {}  # (id(method), class) -> walked apart? (_work_key)
        self._asserted_params: dict[int, frozenset[str]] = {}  # id(FunctionDef) -> see asserted_tensor_params
        self._helper_tensor_params: dict[int, frozenset[str]] = {}  # id(FunctionDef) -> see helper_tensor_params
        self._done: set[WorkKey] = set()
        self._walked_values: dict[int, dict[str, Given]] = {}  # id() of each function walked -> its given_values
        self._root = 0  # the entry whose calls the function being walked was reached through
        self._broken_roots: set[int] = set()  # entries from which something breaks
        self._entry_names: dict[str, int] = {}  # qualified name of each entry walked -> its id()
        # qualified name of each function walked from an entry -> that entry's (as Config.focus
        # names entries): what a fixer re-analysing a variant of one function needs walked
        self.roots: dict[str, str] = {}
        self._root_names: dict[int, str] = {}  # id() of each entry walked -> its qualified name
        # Calls, inside a loop, `try` or `with` of the caller, that make the caller run eagerly if
        # the callee breaks: id(call) -> (caller's walker, the `if` arms around the call)
        self._eager_sites: dict[int, tuple[FunctionWalker, tuple[tuple[int, int, int, int], ...]]] = {}
        self._eager_calls: dict[int, ast.AST] = {}  # those whose callee broke: id(call) -> call
        # calls of a function of this module made in the arguments of a C tensor method call
        # (`x.masked_fill(make_pad_mask(...), 0)`): (method call, helper call, its walker, helper)
        self._method_argument_calls: list[tuple[ast.Call, ast.Call, FunctionWalker, int]] = []
        self._built_object_calls: list[tuple[ast.Call, FunctionWalker, list[int], Effect | None]] = []
        self._breaks_memo: dict[int, bool] = {}
        self._callees: dict[int, set[int]] = {}  # id() of a walked function -> those it calls here
        self._breaking: set[int] = set()  # id() of the walked functions with a break of their own
        self._walking: int | None = None  # id() of the function being walked
        # functions walked after the compiled ones, as if compiled (analysis/uncompiled.py):
        # qualified name -> the uncompiled function whose calls reached it
        self.uncompiled: dict[str, str] = {}
        self._uncompiled_roots: dict[int, str] = {}  # id() of each candidate walked -> its name
        self.uncompiled_phase = False

    def run(self) -> list[Finding]:
        entries = find_entries(
            self.tree, self.index, self.source.text, self.config.compile_forward, self.config.extra_entries, self.config.named_entries
        )
        if self.config.focus:
            focused = [e for e in entries if _qualified(e) in self.config.focus]
            entries = focused or entries
        for deferred in (False, True):  # another file's callees last (Entry.deferred)
            for entry in entries:
                if entry.deferred is deferred:
                    self._push(self._entry_work(entry))
            self._drain()
        if self.config.check_uncompiled and not self.config.focus:
            # then what nothing known compiles, as if compiled: findings marked `if_compiled`
            self.uncompiled_phase = True
            # compiled code reaches what it walked only as it was walked: a call found now is no
            # compiled caller, and walking such a function again would report its other arms as compiled
            self._walked_values.clear()
            for function, cls in uncompiled_candidates(self.index, self.source.path, self.source.text_of, self._done, self.config.root):
                name = _qualified_name(function, cls)
                self._uncompiled_roots[id(function)] = name
                reason = f"`{name}`, which works on tensors; nothing known compiles it"
                self._push(_Work(function, cls, {}, None, True, reason, root=id(function)))
                self._drain()
        callers: dict[int, FunctionWalker] = {}
        for key, call in self._eager_calls.items():
            caller, arms = self._eager_sites[key]
            caller.add_callee_cause(call, arms)
            callers[id(caller)] = caller
        for caller in callers.values():  # each caller's comprehensions checked once, with all its causes
            caller.eager_comprehension_breaks()
        self._walking = None
        self._resumed_method_breaks()
        self._built_object_breaks()
        self.findings = mark_latent(self.findings)
        return self.findings

    def _drain(self) -> None:
        while self._queue:
            work = self._queue.popleft()
            key = self._work_key(work.function, work.cls)
            self._pending.pop(key, None)
            self._done.add(key)
            self._done.add(id(work.function))  # a walk as a subclass stands for the base's own
            self._walked_values[id(work.function)] = work.given_values
            self._root = work.root
            self._walk(work)

    @property
    def entries(self) -> frozenset[str]:
        """Qualified names of the functions compiled in their own right (not only as callees)."""
        return frozenset(self._entry_names)

    @property
    def broken_entries(self) -> set[str]:
        """Qualified names of the entries from which something breaks (a decorator's caller in
        another file needs them: crossmodule.call_sites)."""
        return {name for name, root in self._entry_names.items() if root in self._broken_roots}

    def _entry_work(self, entry: Entry) -> _Work:
        kinds: dict[str, Kind] = {}
        positional = entry.function.args.posonlyargs + entry.function.args.args
        if entry.wrapping is not None and entry.wrapping.module_method and positional:
            kinds[positional[0].arg] = Kind.MODULE  # `wrapper(self, *args, **kwargs)` of a module's method
        instances: dict[str, ClassInfo] = {}
        if entry.hooked_module is not None:
            # `hook(module, args[, output])`: after `self` for a method the instance binds
            bound = entry.cls is not None and not any(isinstance(d, ast.Name) and d.id == "staticmethod" for d in entry.function.decorator_list)
            if len(positional) > int(bound):
                instances[positional[int(bound)].arg] = entry.hooked_module
        return _Work(
            entry.function,
            entry.cls,
            kinds,
            None,
            True,
            entry.reason,
            entry.explicit,
            wrapping=entry.wrapping,
            wrapped=entry.decorated,
            root=id(entry.function),
            instance_params=instances,
        )

    def note_built_object_call(
        self, call: ast.Call, caller: FunctionWalker, functions: list[ast.FunctionDef], effect: Effect | None = None
    ) -> None:
        """`call` runs a method of an object the caller constructed (see _built_object_breaks);
        `effect` where the receiver alone does not tell it."""
        self._built_object_calls.append((call, caller, [id(f) for f in functions], effect))

    def _built_object_breaks(self) -> None:
        """A method that breaks, called on an object the compiled code itself constructed
        (torchdiffeq's `solver = SOLVERS[method](...)` then `solver.integrate(t)`): to resume after
        the break dynamo must rebuild the bound method, and it has no source for an object made
        while tracing ("Reconstruction failure"), so it gives up on the calling function as well
        (measured on torch 2.13: the method's own break is reported too; an object passed in, or
        one `__init__` stored on `self`, has a source and the caller resumes as usual)."""
        rule = self.rules.by_code.get("GM528")
        if rule is None or not self._built_object_calls:
            return
        for call, caller, functions, given in self._built_object_calls:
            if any(self._breaks_under(function) for function in functions):
                assert isinstance(call.func, ast.Attribute)
                # held in a name or on `self`, dynamo says it cannot resume, and compiles the caller
                # up to the call (measured: GPyTorch's cached distance module, a local `stepper`);
                # constructed in place, it skips the caller outright (the rule's own effect)
                effect = given or (None if isinstance(call.func.value, ast.Call) else Effect.RESUME_FAILS)
                caller.report(rule, call, effect=effect, method=call.func.attr, receiver=caller.snippet(call.func.value))

    def _breaks_under(self, function: int) -> bool:
        """Whether something in `function`, or in what it calls, breaks (memoised)."""
        memo = self._breaks_memo
        if function not in memo:
            memo[function] = False  # a recursive helper asks again while this runs
            memo[function] = function in self._breaking or any(self._breaks_under(c) for c in self._callees.get(function, ()))
        return memo[function]

    def note_method_argument_call(self, method_call: ast.Call, call: ast.Call, caller: FunctionWalker, function: ast.FunctionDef) -> None:
        """`call` of `function` is made in the arguments of the C tensor method `method_call`
        (see _resumed_method_breaks)."""
        self._method_argument_calls.append((method_call, call, caller, id(function)))

    def _resumed_method_breaks(self) -> None:
        """A helper that breaks, called in the arguments of a C tensor method
        (`xs_pad.masked_fill(make_pad_mask(ilens, xs_pad, 1), 0.0)`, ESPnet), breaks its caller a
        second time: dynamo resumes after the helper's call with the bound method already on its
        stack, and cannot call a method it has no source for ("Attempted to call function marked
        as skipped"; measured on torch 2.13: `torch.masked_fill(x, h(x), 0)`, a module's call, or
        the helper's result bound to a name first do not break again)."""
        rule = self.rules.by_code.get("GM524")
        if rule is None or not self._method_argument_calls:
            return
        for method_call, call, caller, function in self._method_argument_calls:
            if self._breaks_under(function) and _evaluated_with(call, method_call):
                assert isinstance(method_call.func, ast.Attribute)
                helper = caller.snippet(call.func)
                caller.report(rule, method_call, method=method_call.func.attr, helper=helper)

    def note_eager_site(self, call: ast.AST, caller: FunctionWalker, arms: tuple[tuple[int, int, int, int], ...]) -> None:
        """A call that makes `caller` run eagerly should its callee break (see eager_call_broke)."""
        self._eager_sites.setdefault(id(call), (caller, arms))

    def eager_call_broke(self, call: ast.AST) -> None:
        """A break under `call` (a site note_eager_site was told of) makes its caller run eagerly:
        once every walk is done, the caller learns it (FunctionWalker.add_callee_cause)."""
        if id(call) in self._eager_sites:
            self._eager_calls.setdefault(id(call), call)

    def asserted_tensor_params(self, function: ast.FunctionDef) -> frozenset[str]:
        """The parameters `function` has checked are tensors by the time it returns: a statement of
        its body (not one nested in an `if`, a loop or a `try`) that asserts
        `isinstance(timelike, torch.Tensor)`, or calls a helper that does so for what it is handed
        (torchdiffeq's `_check_inputs` calls `_check_timelike('t', t, True)` after normalising its
        options). Every return of the function passes such a statement, so a call that returns was
        handed a tensor there; only while no statement before it may return (a `return` there
        skips the check) or rebinds the parameter (the check then tests another value)."""
        key = id(function)
        found = self._asserted_params.get(key)
        if found is not None:
            return found
        self._asserted_params[key] = frozenset()  # a recursive helper asks again while this runs
        # Only a statement that may check can add a name: none (most functions) needs no walk at all,
        # and statements after the last one can only stop the loop or rebind, which then matters to none.
        last = max((i for i, statement in enumerate(function.body) if self._may_check(statement)), default=None)
        if last is None:
            return frozenset()
        if any(isinstance(node, (ast.Yield, ast.YieldFrom)) for node in own_nodes(function)):
            return frozenset()  # calling a generator runs none of its body
        names = {a.arg for a in [*function.args.posonlyargs, *function.args.args, *function.args.kwonlyargs]}
        checked: set[str] = set()
        rebound: set[str] = set()  # parameters a statement before the one looked at binds again
        for statement in function.body[: last + 1]:
            unchanged = names - rebound
            checked |= self._checked_by_statement(statement, unchanged)
            nodes: list[ast.AST] = [statement] if isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) else [statement, *own_nodes(statement)]
            if any(isinstance(node, ast.Return) for node in nodes):
                break
            rebound |= _bound_names(statement, nodes)
        found = frozenset(checked)
        self._asserted_params[key] = found
        return found

    def _may_check(self, statement: ast.stmt) -> bool:
        """Whether `statement` has the shape `_checked_by_statement` reads (before its names are known)."""
        if isinstance(statement, ast.Expr) and isinstance(call := statement.value, ast.Call) and isinstance(call.func, ast.Name):
            return call.func.id in self.index.functions
        return isinstance(statement, ast.Assert) and isinstance(statement.test, ast.Call) and isinstance(statement.test.func, ast.Name) and statement.test.func.id == "isinstance"

    def _checked_by_statement(self, statement: ast.stmt, names: set[str]) -> set[str]:
        """The names of `names` that `statement` checks are tensors: `assert isinstance(x,
        torch.Tensor)`, or a call of a helper of this file that checks what it is handed."""
        if not self._may_check(statement):
            return set()
        if isinstance(statement, ast.Expr) and isinstance(call := statement.value, ast.Call) and isinstance(call.func, ast.Name):
            helper = self.index.functions[call.func.id]
            passed = passed_arguments(helper.args.posonlyargs + helper.args.args, call)
            return {given.id for name in self.asserted_tensor_params(helper) if isinstance(given := passed.get(name), ast.Name) and given.id in names}
        if (
            isinstance(statement, ast.Assert)
            and isinstance(test := statement.test, ast.Call)
            and len(test.args) == 2
            and isinstance(test.args[0], ast.Name)
            and test.args[0].id in names
            and self.index.qualname(test.args[1]) in ("torch.Tensor", "torch.nn.Parameter")
        ):
            return {test.args[0].id}
        return set()

    def helper_tensor_params(self, function: ast.FunctionDef) -> frozenset[str]:
        """The positional parameters a module-level helper uses as tensors: by its text
        (param_evidence.tensor_evidence), or by handing them by name to another helper that does
        (k-diffusion's `to_d(x, sigma, denoised)` hands `sigma` to `append_dims(x, target_dims)`,
        which reads `x.ndim`). A caller that hands one its own parameter learns that it is a tensor
        (FunctionWalker._handed_to_tensor_taking_functions). A helper that tests types
        (`isinstance`, `torch.is_tensor`) is meant to take other values too, and a parameter it
        rebinds may be converted first: neither counts."""
        key = id(function)
        found = self._helper_tensor_params.get(key)
        if found is not None:
            return found
        self._helper_tensor_params[key] = frozenset()  # a recursive helper asks again while this runs
        text = self.source.text_of(function)
        if "isinstance(" in text or "is_tensor(" in text:
            return frozenset()
        nodes = own_nodes(function)
        stored = {node.id for node in nodes if isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Load)}
        params = [arg.arg for arg in function.args.posonlyargs + function.args.args]
        names = [name for name in params if name not in stored]
        used = set(tensor_evidence(text, names, lambda callee: imported_tensor_call(self.index, callee)))
        for node in nodes:
            if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)) or node.func.id in stored or node.func.id in params:
                continue
            helper = self.index.functions.get(node.func.id)
            if helper is not None:
                passed = passed_arguments(helper.args.posonlyargs + helper.args.args, node)
                used |= {given.id for param in self.helper_tensor_params(helper) if isinstance(given := passed.get(param), ast.Name) and given.id in names}
        found = frozenset(used)
        self._helper_tensor_params[key] = found
        return found

    def enqueue(
        self,
        function: ast.FunctionDef,
        cls: ClassInfo | None,
        param_kinds: dict[str, Kind],
        amplifier: Amplifier | None,
        *,
        caller: str,
        line: int,
        given_tensor_displays: frozenset[str] = frozenset(),
        given_recurrent: dict[str, str] | None = None,
        given_values: dict[str, Given] | None = None,
    ) -> None:
        """Called by walkers for each call into a function of this module."""
        key = id(function)
        if self._walking is not None:
            self._callees.setdefault(self._walking, set()).add(key)
        if key in self.index.disabled or key in self.index.opaque:
            return
        if self.uncompiled_phase and not function.name.startswith("_"):
            given_values = None  # a public function nothing known compiles: its other callers are not in view
        work_key = self._work_key(function, cls)
        if work_key in self._done:
            kept = self._facts_kept(key, given_values or {})
            if kept is None:
                return
            self._done.discard(work_key)  # walked again for this caller, without the facts it denies
            given_values = kept
        pending = self._pending.get(work_key)
        if pending is not None:
            for name, kind in param_kinds.items():
                pending.param_kinds[name] = join(pending.param_kinds[name], kind) if name in pending.param_kinds else kind
            pending.given_tensor_displays |= given_tensor_displays
            pending.given_recurrent = {k: v for k, v in pending.given_recurrent.items() if (given_recurrent or {}).get(k) == v}
            pending.given_values = _met(pending.given_values, given_values or {})
            if pending.amplifier is None:
                pending.amplifier = amplifier
            return
        reason = f"called from `{caller}` on line {line}"
        self._push(
            _Work(
                function, cls, dict(param_kinds), amplifier, False, reason,
                given_tensor_displays=set(given_tensor_displays), given_recurrent=dict(given_recurrent or {}), root=self._root,
                given_values=dict(given_values or {}),
            )
        )

    def _facts_kept(self, key: int, given_values: dict[str, Given]) -> dict[str, Given] | None:
        """For a function already walked taking some parameter for what its callers fixed
        (`mode="fast"`): what is left of that once a caller found later is counted, where that is
        less (None where the walk holds for this caller too). The arm the walk skipped runs for
        this caller, so the function is walked again without the facts it denies; each walk
        knows fewer, so this ends."""
        walked = self._walked_values.get(key)
        if not walked:
            return None
        kept = _met(walked, given_values)
        return None if kept == walked else kept

    def _work_key(self, function: ast.FunctionDef, cls: ClassInfo | None) -> WorkKey:
        """A function is walked once, except a method reached as an instance of a subclass whose
        overrides change which methods its `self.<name>` calls run: kornia's base `forward`
        calls `self.apply_func`, which only the subclass defines."""
        owner = self.index.owner.get(id(function))
        if cls is None or owner is None or cls is owner:
            return id(function)
        memo = (id(function), cls.name)
        if memo not in self._dispatch:
            receiver = function.args.args[0].arg if function.args.args else "self"
            names = {
                node.attr for node in walk(function)
                if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == receiver
            }
            self._dispatch[memo] = any(self.index.method(owner, name) is not self.index.method(cls, name) for name in names)
        return memo if self._dispatch[memo] else id(function)

    def _push(self, work: _Work) -> None:
        key = self._work_key(work.function, work.cls)
        if key in self._pending:
            return
        if key in self._done:
            kept = self._facts_kept(id(work.function), work.given_values)
            if kept is None:
                return
            self._done.discard(key)  # an entry (another file's caller) walked before as a callee
            work.given_values = kept
        self._pending[key] = work
        self._queue.append(work)

    def _walk(self, work: _Work) -> None:
        if work.wrapping is not None and work.wrapping.qualified:
            name = work.wrapping.qualified
        else:
            name = f"{work.cls.name}.{work.function.name}" if work.cls is not None else work.function.name
        self._walking = id(work.function)
        if self.uncompiled_phase:
            self.uncompiled[name] = self._uncompiled_roots.get(work.root, name)
        else:
            self.reasons[name] = work.reason
            if work.is_entry:
                self._entry_names[name] = work.root
                self._root_names.setdefault(work.root, _qualified_name(work.function, work.cls))
            self.roots.setdefault(name, self._root_names.get(work.root, name))
        walker = FunctionWalker(
            self,
            work.function,
            name,
            work.cls,
            is_entry=work.is_entry,
            explicitly_compiled=work.explicit,
            param_kinds=work.param_kinds,
            given_tensor_displays=frozenset(work.given_tensor_displays),
            given_recurrent=work.given_recurrent,
            caller_amplifier=work.amplifier,
            wrapping=work.wrapping,
            wrapped=work.wrapped,
            instance_params=work.instance_params,
            given_values=work.given_values,
        )
        if self.strict:
            walker.run()
            return
        try:
            walker.run()
        except (Exception, RecursionError) as exc:  # a bug in a rule must not cost the other findings
            self.add(
                Finding(
                    code=INTERNAL_ERROR_CODE,
                    span=self.source.header_span(work.function),
                    message=(
                        f"GraphMend could not finish analysing `{name}` ({type(exc).__name__}: {exc}); "
                        "findings for it may be incomplete. Please report this with the file."
                    ),
                    severity=Severity.INFO,
                    function=name,
                )
            )

    def add(self, finding: Finding) -> None:
        span = finding.span
        key = (finding.code, span.start_line, span.start_col, span.end_line, span.end_col)
        if key in self._seen:
            return
        self._seen.add(key)
        walked = finding.function.split(".<locals>.", 1)[0]  # a nested function is its outer one's code
        root = self.uncompiled.get(walked)
        if root is not None and walked not in self.reasons:
            self.findings.append(_if_compiled(finding, root, self.source.path))
            return
        self.findings.append(finding)
        if finding.severity is not Severity.INFO:
            self._broken_roots.add(self._root)
            if self._walking is not None:
                self._breaking.add(self._walking)


def _met(known: dict[str, Given], given: dict[str, Given]) -> dict[str, Given]:
    """What both the callers so far and one more caller fix of each parameter."""
    met = {name: fact.meet(given[name]) if name in given else None for name, fact in known.items()}
    return {name: fact for name, fact in met.items() if fact is not None}


def _bound_names(statement: ast.stmt, nodes: list[ast.AST]) -> set[str]:
    """The names a statement of a function binds in the function's scope (`nodes` are its own)."""
    if isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return {statement.name}
    return {node.id for node in nodes if isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Load)}


def _evaluated_with(call: ast.Call, method_call: ast.Call) -> bool:
    """Whether `call` runs whenever the arguments of `method_call` are evaluated, in its frame: not
    under a lambda, a comprehension (a frame of its own) or a conditional expression or operand."""
    pending: list[ast.AST] = [*method_call.args, *(k.value for k in method_call.keywords)]
    while pending:
        node = pending.pop()
        if node is call:
            return True
        if isinstance(node, (ast.Lambda, ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp, ast.IfExp, ast.BoolOp)):
            continue
        pending.extend(child_nodes(node))
    return False


def _qualified(entry: Entry) -> str:
    """An entry's qualified name as findings give it (`Class.method`, `function`)."""
    return _qualified_name(entry.function, entry.cls)


def _qualified_name(function: ast.FunctionDef, cls: ClassInfo | None) -> str:
    return f"{cls.name}.{function.name}" if cls is not None else function.name


def _if_compiled(finding: Finding, root: str, path: str) -> Finding:
    """`finding`, in code nothing known compiles, marked as a break only if `root` is compiled."""
    file = PurePath(path).name if path and not path.startswith("<") else "file.py"
    note = (
        f" Nothing GraphMend sees compiles `{root}` (no torch.compile of it, no compiled caller): "
        f"this breaks the graph if it is compiled. If it is, name it in `[tool.graphmend] compiled` "
        f'("{file}:{root}") for the full check and its fix.'
    )
    return dataclasses.replace(finding, if_compiled=True, uncompiled_root=root, severity=Severity.INFO, message=finding.message + note)
