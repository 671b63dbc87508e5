"""Where the tensor a selection indexes may be bound to a name on the line before its statement:
only where Python evaluates it before anything else of the statement that could notice."""

import ast

import pytest
from graphmend.rewrite.mask_hoist import _evaluated_first


def _parts(source: str) -> tuple[ast.expr, ast.expr]:
    value = ast.parse(source, mode="eval").body
    selected = next(n for n in ast.walk(value) if isinstance(n, ast.Subscript) and ast.unparse(n.slice) == "mask").value
    return value, selected


@pytest.mark.parametrize(
    ("source", "first"),
    [
        ("probs[:, target].diagonal()[mask]", True),
        ("-probs[:, target].diagonal()[mask].log().sum()", True),
        ("scale * probs.sum(1)[mask]", True),
        ("2.0 + probs.sum(1)[mask]", True),
        ("bias.exp() + probs.sum(1)[mask]", False),
        ("f(probs.sum(1)[mask])", True),  # loading a name cannot notice the order
        ("torch.log(probs.sum(1)[mask])", True),
        ("F.l1_loss(x, probs.sum(1)[mask])", False),  # `x` is evaluated first, but only a name
        ("make()(probs.sum(1)[mask])", False),  # the callee is itself a call
        ("f(*probs.sum(1)[mask])", False),
        ("self.w[0] * probs.sum(1)[mask]", False),
    ],
)
def test_the_selected_tensor_is_evaluated_first(source: str, first: bool) -> None:
    value, selected = _parts(source)
    assert _evaluated_first(value, selected) is first
