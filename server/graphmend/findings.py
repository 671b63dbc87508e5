"""The shared vocabulary of GraphMend: where something is, what is wrong there, and how to change it.

Every layer speaks in these types: the analyser produces `Finding`s, the rewrites produce `Edit`s,
the CLI prints them and the language server turns them into LSP diagnostics and text edits. They
are plain frozen dataclasses so that they pickle across worker processes and compare by value in
tests.

Positions: lines are 1-based, columns are 0-based offsets in *characters* (code points) of the
line. `ast` reports UTF-8 byte columns; the analyser converts them once, so nothing downstream has
to know about bytes. The language server converts characters to the negotiated LSP encoding.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field


class Severity(str, enum.Enum):
    """How loudly to report a finding.

    ERROR is reserved for breaks that make dynamo give up on a whole function (a break inside a
    loop, a `try` or an unsupported `with` block) and for files that do not parse.
    """

    ERROR = "error"
    WARNING = "warning"
    INFO = "info"


@dataclass(frozen=True, slots=True)
class Span:
    """A half-open range of source text: from (start_line, start_col) up to (end_line, end_col)."""

    start_line: int
    start_col: int
    end_line: int
    end_col: int

    def contains_line(self, line: int) -> bool:
        return self.start_line <= line <= self.end_line

    def contains(self, other: Span) -> bool:
        return (self.start_line, self.start_col) <= (other.start_line, other.start_col) and (other.end_line, other.end_col) <= (
            self.end_line,
            self.end_col,
        )


@dataclass(frozen=True, slots=True)
class Related:
    """A second location that explains a finding, e.g. the loop that turns a break into a skip."""

    span: Span
    message: str


@dataclass(frozen=True, slots=True)
class EagerPoint:
    """Where a break makes dynamo run `function` eagerly from then on (`span`), and the lines that
    come after it on every path through it: the rest of the function, or, for a break inside an arm
    of an `if` the analysis cannot decide, the rest of that arm (`scope`, first and last line):
    the other arm may be traced on, and code after the `if` with it."""

    function: str
    span: Span
    scope: tuple[int, int] | None = None  # None: the rest of the function

    def dominates(self, finding: Finding) -> bool:
        """Whether `finding` runs only after this point, in the same frame, or in a TorchScript
        function called after it (`script_call`: run eagerly, it has no frame dynamo traces)."""
        if finding.script_call is not None and self.dominates_line(*finding.script_call):
            return True
        return self.dominates_line(finding.function, finding.span.start_line)

    def dominates_line(self, function: str, line: int) -> bool:
        """Whether `line` of `function` runs only after this point, in the same frame."""
        if function != self.function or line <= self.span.end_line:
            return False
        return self.scope is None or self.scope[0] <= line <= self.scope[1]


@dataclass(frozen=True, slots=True)
class Finding:
    """One predicted graph break (or a file GraphMend could not read).

    `message` is complete on its own (what breaks, why dynamo breaks there, what to do); `fix_hint`
    repeats the "what to do" part for clients that show it separately. `effect` says what the
    break costs: "break" (the graph is split), "rest-eager" (dynamo cannot resume, the rest of the
    function runs eagerly), "frame-skip" (the whole function runs eagerly) or "silent-skip" (the
    function is never compiled and dynamo logs nothing).
    """

    code: str
    span: Span
    message: str
    severity: Severity = Severity.WARNING
    fix_hint: str = ""
    effect: str = "break"
    function: str = ""
    related: tuple[Related, ...] = field(default=())
    # The ast node type the rule matched at `span` ("Call", "Compare"): an expression statement and
    # its call share a span, and a fixer wants the node the rule saw (FixContext.node_for).
    anchor: str = ""
    # Set on a break certain to run once its surroundings run, that makes dynamo run a function
    # eagerly from some point on. Findings it dominates are `latent` (analysis/latent.py).
    eager_from: tuple[EagerPoint, ...] = ()  # where this break makes dynamo run code eagerly (a caller's rest, this function's)
    # In a TorchScript function: the caller and line of the call (in a loop, `try` or `with` there) that runs it.
    # Where that caller already runs eagerly, the call runs TorchScript and dynamo never sees this.
    script_call: tuple[str, int] | None = None
    # Dynamo does not reach this break today: an earlier one makes it run the function eagerly. It
    # is real code dynamo cannot trace, and breaks once the earlier one is fixed; it is not counted
    # as a break dynamo reports (break_count) and shows at information severity.
    latent: bool = False
    # In a function nothing known compiles (nor calls from compiled code): a break if it is
    # compiled. Shown at information severity, with no fix until the function is named compiled
    # (analysis/uncompiled.py), and not counted as a break dynamo reports.
    if_compiled: bool = False
    uncompiled_root: str = ""  # with if_compiled: the function to name compiled (`Sampler.step`)
    # The line dynamo's log names for this break where that is outside `span` (0: inside it). A
    # truth test spread over lines breaks on the line of its `if`, `while`, `assert`, ternary or
    # comprehension unless the tested value is a comparison: that is the line CPython 3.11 gives
    # the jump (analysis/tensors.py, Evaluator.visit_truth). `span` stays on the tested value.
    break_line: int = 0

    @property
    def frame_skip(self) -> bool:
        """True when dynamo will not merely split the graph but run the whole function eagerly."""
        return self.effect in ("frame-skip", "silent-skip")

    @property
    def line(self) -> int:
        return self.span.start_line

    def covers_line(self, line: int) -> bool:
        """Whether dynamo reporting a break at `line` is this finding's break."""
        return self.span.contains_line(line) or line == self.break_line

    def sort_key(self) -> tuple[int, int, str]:
        return (self.span.start_line, self.span.start_col, self.code)


@dataclass(frozen=True, slots=True)
class Edit:
    """Replace the text in `span` with `new_text`."""

    span: Span
    new_text: str
