"""Whether dynamo gives up on a function at a break in a loop: its backedge test, on the bytecode.

At a graph break, torch 2.13 reads the frame's instructions on from the break (`maybe_has_backedge`):
a jump to an earlier instruction met before a `return` means "in a loop", and dynamo then runs the
whole frame eagerly; a `return` met first means it resumes after the break as anywhere else. Where
the compiler puts those jumps (`if ...: return` at the end of a loop body returns before the loop's
jump back; an `if/else` whose else returns jumps back first) is not visible in the syntax, so this
module compiles the module's syntax tree (compiling runs nothing) and reads the jumps as dynamo does.
The answer is for the Python running the analysis, which is the one the tests measure against.
"""

from __future__ import annotations

import ast
import dis
from types import CodeType

_JUMPS = frozenset(dis.hasjrel) | frozenset(dis.hasjabs)
_RETURNS = frozenset({"RETURN_VALUE", "RETURN_CONST"})


class Backedges:
    """The module's bytecode, compiled the first time a break in a loop asks (rarely needed)."""

    def __init__(self, tree: ast.Module, filename: str) -> None:
        self._tree = tree
        self._filename = filename
        self._codes: list[CodeType] | None = None

    def loops_back_after(self, function: str, line: int, end_line: int) -> bool | None:
        """Whether, from the break on `line` (a statement ending on `end_line`) in the function
        named `function`, dynamo's scan meets a jump back before a return. None when unknown (the
        module does not compile, or no instruction of that function is on that line)."""
        for code in self._functions_named(function):
            instructions = list(dis.get_instructions(code))
            at = _break_instruction(instructions, line, end_line)
            if at is None:
                continue
            offset = instructions[at].offset
            for instruction in instructions[at + 1 :]:
                if instruction.opname in _RETURNS:
                    return False
                if instruction.opcode in _JUMPS and isinstance(instruction.argval, int) and instruction.argval < offset:
                    return True
            return False
        return None

    def _functions_named(self, name: str) -> list[CodeType]:
        if self._codes is None:
            try:
                module = compile(self._tree, self._filename, "exec", dont_inherit=True)
            except (SyntaxError, ValueError, TypeError, RecursionError, MemoryError):
                module = None
            self._codes = _all_codes(module) if module is not None else []
        short = name.rsplit(".", 1)[-1]
        return [code for code in self._codes if code.co_name == short]


def _all_codes(code: CodeType) -> list[CodeType]:
    found = []
    stack = [code]
    while stack:
        current = stack.pop()
        found.append(current)
        stack.extend(const for const in current.co_consts if isinstance(const, CodeType))
    return found


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
