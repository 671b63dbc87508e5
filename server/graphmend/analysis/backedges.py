"""Whether dynamo gives up on a function at a break in a loop: its backedge test, on the bytecode.

At a graph break, torch 2.13 reads the frame's instructions on from the break (`maybe_has_backedge`):
a jump to an earlier instruction met before a `return` means "in a loop", and dynamo then runs the
whole frame eagerly; a `return` met first means it resumes after the break as anywhere else. Where
the compiler puts those jumps (`if ...: return` at the end of a loop body returns before the loop's
jump back; an `if/else` whose else returns jumps back first) is not visible in the syntax, so this
module compiles the function's syntax tree (compiling runs nothing) and reads the jumps as dynamo
does. Only the function is compiled, on its own, and only when a break in a loop asks: a module's
whole compile would cost more than the rest of the analysis of a large file. The answer is for the
Python running the analysis, which is the one the tests measure against.
"""

from __future__ import annotations

import ast
import dis
from types import CodeType

from ..astwalk import child_nodes

_JUMPS = frozenset(dis.hasjrel) | frozenset(dis.hasjabs)
_RETURNS = frozenset({"RETURN_VALUE", "RETURN_CONST"})
_FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef)


class Backedges:
    """Per module: the functions' bytecode, compiled one function at a time when first asked."""

    def __init__(self, tree: ast.Module, filename: str) -> None:
        self._tree = tree
        self._filename = filename
        self._instructions: dict[int, list[dis.Instruction] | None] = {}  # id(def) -> its instructions
        self._answers: dict[tuple[str, int, int], bool | None] = {}

    def loops_back_after(self, function: str, line: int, end_line: int) -> bool | None:
        """Whether, from the break on `line` (a statement ending on `end_line`) in the function
        named `function`, dynamo's scan meets a jump back before a return. None when unknown (the
        function does not compile on its own, or none of its instructions is on that line)."""
        key = (function, line, end_line)
        if key not in self._answers:
            self._answers[key] = self._scan(function, line, end_line)
        return self._answers[key]

    def _scan(self, function: str, line: int, end_line: int) -> bool | None:
        definition = self._definition(function.rsplit(".", 1)[-1], line)
        instructions = self._instructions_of(definition) if definition is not None else None
        if not instructions:
            return None
        at = _break_instruction(instructions, line, end_line)
        if at is None:
            return None
        offset = instructions[at].offset
        for instruction in instructions[at + 1 :]:
            if instruction.opname in _RETURNS:
                return False
            if instruction.opcode in _JUMPS and isinstance(instruction.argval, int) and instruction.argval < offset:
                return True
        return False

    def _definition(self, name: str, line: int) -> ast.FunctionDef | ast.AsyncFunctionDef | None:
        """The innermost `def name` whose lines hold `line`: found by descending only into nodes
        that hold the line (walking the whole tree of a large file costs tens of milliseconds)."""
        best: ast.FunctionDef | ast.AsyncFunctionDef | None = None
        stack: list[ast.AST] = list(self._tree.body)
        while stack:
            node = stack.pop()
            start, end = getattr(node, "lineno", None), getattr(node, "end_lineno", None)
            if start is None or end is None or not start <= line <= end:
                continue
            if isinstance(node, _FUNCTIONS) and node.name == name:
                if best is None or end - start < (best.end_lineno or best.lineno) - best.lineno:
                    best = node
            stack.extend(child_nodes(node))
        return best

    def _instructions_of(self, definition: ast.FunctionDef | ast.AsyncFunctionDef) -> list[dis.Instruction] | None:
        key = id(definition)
        if key not in self._instructions:
            self._instructions[key] = _compile_alone(definition, self._filename)
        return self._instructions[key]


def _compile_alone(definition: ast.FunctionDef | ast.AsyncFunctionDef, filename: str) -> list[dis.Instruction] | None:
    """The instructions of `definition` compiled as a module's only statement: the same jumps as
    in place (a name from an enclosing function becomes a global, which moves no jump). None when
    it does not compile alone (`nonlocal` of an enclosing function's name)."""
    try:
        module = compile(ast.Module(body=[definition], type_ignores=[]), filename, "exec", dont_inherit=True)
    except (SyntaxError, ValueError, TypeError, RecursionError, MemoryError):
        return None
    code = next((c for c in module.co_consts if isinstance(c, CodeType) and c.co_name == definition.name), None)
    return list(dis.get_instructions(code)) if code is not None else None


def _break_instruction(instructions: list[dis.Instruction], line: int, end_line: int) -> int | None:
    """The last instruction on `line` before the statement's lines are left: where the break is
    (a call, or the jump of an `if` test, comes last among the instructions that compute it). The
    loop's own jump back, which the compiler may put on the body's last line, is not it."""
    found = None
    for index, instruction in enumerate(instructions):
        number = instruction.positions.lineno if instruction.positions is not None else None
        if number is None:
            continue
        if number == line:
            if not instruction.opname.startswith("JUMP_BACKWARD"):
                found = index
        elif found is not None and (number > end_line or number < line):
            break
    return found
