"""captum _select_targets / _verify_select_column: picking the attribution target column out of a
model's output (called by _run_forward in every captum attribution method).

Source: https://github.com/pytorch/captum/blob/master/captum/_utils/common.py
(_select_targets, _verify_select_column). The forward function is a tiny Linear model wrapped in a
module whose forward is `_select_targets(self.model(inputs), target)` (what _run_forward does).

Breaks: `torch.numel(target) == 1 and isinstance(target.item(), int)` and
`_verify_select_column(output, cast(int, target.item()))` -- `.item()` on a scalar target tensor
used as a Python int index.

HAND: `isinstance(target.item(), int)` is decided by the dtype (integer dtypes give a Python int;
bool also does and keeps the original `.item()` path since `output[:, True]` means something else
for a tensor index); the column is selected with `torch.index_select(output, 1, index).squeeze(1)`
(a negative index wrapped with `torch.where`), the same values/shape/gradients as the int index
(a 0-d tensor used directly as an index is turned back into an int by dynamo and still breaks).
The assert on the output rank is kept.
"""
from typing import Tuple, cast

import torch
from torch import Tensor, nn

KIND = ".item() as index"
GRAD = True


def _verify_select_column(output: Tensor, target) -> Tensor:
    target = cast(Tuple[int, ...], (target,) if isinstance(target, int) else target)
    assert (
        len(target) <= len(output.shape) - 1
    ), "Cannot choose target column with output shape %r." % (output.shape,)
    return output[(slice(None), *target)]


def _select_targets(output: Tensor, target) -> Tensor:
    if target is None:
        return output

    num_examples = output.shape[0]
    dims = len(output.shape)
    device = output.device
    if isinstance(target, (int, tuple)):
        return _verify_select_column(output, target)
    elif isinstance(target, torch.Tensor):
        if torch.numel(target) == 1 and isinstance(target.item(), int):
            return _verify_select_column(output, cast(int, target.item()))
        elif len(target.shape) == 1 and torch.numel(target) == num_examples:
            assert dims == 2, "Output must be 2D to select tensor of targets."
            return torch.gather(output, 1, target.reshape(len(output), 1))
        else:
            raise AssertionError(
                "Tensor target dimension %r is not valid. %r"
                % (target.shape, output.shape)
            )
    elif isinstance(target, list):
        assert len(target) == num_examples, "Target list length does not match output!"
        if isinstance(target[0], int):
            assert dims == 2, "Output must be 2D to select tensor of targets."
            return torch.gather(
                output, 1, torch.tensor(target, device=device).reshape(len(output), 1)
            )
        elif isinstance(target[0], tuple):
            return torch.stack(
                [
                    output[(i,) + cast(Tuple, targ_elem)]
                    for i, targ_elem in enumerate(target)
                ]
            )
        else:
            raise AssertionError("Target element type in list is not valid.")
    else:
        raise AssertionError("Target type %r is not valid." % target)


class ForwardWithTarget(nn.Module):
    def __init__(self, out_shape=(3,)):
        super().__init__()
        self.out_shape = out_shape
        n = 1
        for s in out_shape:
            n *= s
        self.model = nn.Linear(4, n)

    def forward(self, inputs, target=None):
        output = self.model(inputs).reshape(inputs.shape[0], *self.out_shape)
        return _select_targets(output, target)


class TwoHeads(nn.Module):
    def __init__(self):
        super().__init__()
        self.flat = ForwardWithTarget((3,))
        self.grid = ForwardWithTarget((3, 2))

    def forward(self, inputs, target=None, grid=False):
        return (self.grid if grid else self.flat)(inputs, target)


def make():
    torch.manual_seed(0)
    return TwoHeads()


def _x(n, seed):
    return torch.randn(n, 4, generator=torch.Generator().manual_seed(seed))


def inputs():
    return [
        (_x(3, 1), torch.tensor(2)),                      # scalar int tensor -> .item()
        (_x(2, 2), torch.tensor([1])),                    # one-element int tensor -> .item()
        (_x(1, 3), torch.tensor([0])),                    # one example, one target -> .item() wins
        (_x(4, 4), torch.tensor(-1), True),               # scalar tensor on a 3-d output
        (_x(3, 5), torch.tensor([0, 2, 1])),              # per-example targets -> gather
        (_x(3, 6), 1),
        (_x(2, 7), (2, 1), True),
        (_x(3, 8), [2, 0, 1]),
        (_x(2, 9), [(0, 1), (2, 0)], True),
        (_x(2, 10), None),
        (_x(2, 11), torch.tensor(1, dtype=torch.int32)),
    ]


def failing_inputs():
    return [
        (_x(3, 12), torch.tensor(1.0)),                   # float scalar target -> AssertionError
        (_x(3, 13), torch.tensor([0, 1])),                # wrong length
        (_x(3, 14), torch.tensor([0, 1, 2]), True),       # 3-d output with per-example tensor
    ]
