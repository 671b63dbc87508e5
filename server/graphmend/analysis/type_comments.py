"""Signatures written as type comments, TorchScript's old style (`# type: (Tensor, int) -> Tensor`).

torchvision's detection code declares its tensors this way, so without them `paste_mask_in_image`'s
`box` is a parameter of unknown kind and `int(box[2] - box[0] + 1)`, which dynamo breaks on, goes
unseen. The file is parsed without type comments (a `# type:` comment in a place Python's parser
does not expect is a SyntaxError there, in a file Python itself runs), so the comment is read from
the lines between a `def` and its body and parsed on its own, as a function type; one that does
not parse is ignored.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass

from ..astwalk import walk

_MARK = "# type:"
# Names TorchScript's type comments use without importing them; a bare one in a comment is
# renamed to a private alias (IMPLICIT_IMPORTS) unless the module binds the name itself.
_IMPLICIT = {"Tensor": "torch.Tensor", "List": "typing.List", "Optional": "typing.Optional", "Tuple": "typing.Tuple", "Dict": "typing.Dict"}
_ALIAS = "_graphmend_torchscript_"
IMPLICIT_IMPORTS = {_ALIAS + name: qualified for name, qualified in _IMPLICIT.items()}


@dataclass(frozen=True)
class CommentSignature:
    params: dict[str, ast.expr]  # parameter name -> its type, as the comment gives it
    returns: ast.expr


def comment_signatures(tree: ast.Module, lines: list[str], bound: set[str] | frozenset[str] = frozenset()) -> dict[int, CommentSignature]:
    """id(FunctionDef) -> its type-comment signature, for the functions that have one and no
    annotations of their own. TorchScript's implicit names (`Tensor`, `List`) not among the
    module's `bound` names refer to IMPLICIT_IMPORTS' aliases, which the caller adds to the
    module's imports."""
    found: dict[int, CommentSignature] = {}
    for node in walk(tree):
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) or not node.body:
            continue
        args = node.args
        positional = args.posonlyargs + args.args
        if node.returns is not None or any(a.annotation is not None for a in positional):
            continue
        signature = _signature(node, positional, lines, bound)
        if signature is not None:
            found[id(node)] = signature
    return found


def _signature(node: ast.FunctionDef | ast.AsyncFunctionDef, positional: list[ast.arg], lines: list[str], bound: set[str] | frozenset[str]) -> CommentSignature | None:
    first_body_line = node.body[0].lineno
    for number in range(node.lineno, min(first_body_line, node.lineno + 40) + 1):
        line = lines[number - 1] if number - 1 < len(lines) else ""
        start = line.find(_MARK)
        if start < 0:
            continue
        text = line[start + len(_MARK) :].strip()
        if not text.startswith("("):
            continue  # `# type: ignore`, or a variable's type
        try:
            parsed = ast.parse(text, mode="func_type")
        except (SyntaxError, ValueError, RecursionError):
            return None
        for name in walk(parsed):
            if isinstance(name, ast.Name) and name.id in _IMPLICIT and name.id not in bound:
                name.id = _ALIAS + name.id
        types = parsed.argtypes
        names = [a.arg for a in positional]
        if len(types) == len(names) - 1:  # a method's comment leaves out `self`
            names = names[1:]
        if len(types) != len(names):
            return None
        return CommentSignature(dict(zip(names, types)), parsed.returns)
    return None
