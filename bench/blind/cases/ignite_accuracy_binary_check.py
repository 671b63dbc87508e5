"""PyTorch-Ignite `Accuracy` for binary outputs, updated and read every batch (what a running accuracy
display does): `update` checks shapes and that `y` and `y_pred` only hold 0s and 1s, counts the correct
predictions; `compute` returns the running accuracy.

Source: https://github.com/pytorch/ignite/blob/master/ignite/metrics/accuracy.py
(`_BaseClassification._check_shape`, `_check_binary_multilabel_cases`, `_check_type`, `Accuracy.reset`,
`update`, `compute`) and https://github.com/pytorch/ignite/blob/master/ignite/metrics/metric.py
(`reinit__is_reduced`, `sync_all_reduce`, here on a single process).

Breaks: `if not torch.equal(y, y**2): raise ValueError(...)` and the same check on `y_pred` (a Python bool
from tensor values). `compute`'s `self._num_correct.item() / self._num_examples` is not reported on
torch 2.13 while the checks break earlier in the frame; it is once they are gone.

HAND: the two checks move into a `torch.library.custom_op` with an ORDERED effect that raises the same
ValueErrors (same order, same text) at run time. `compute` still returns a Python float, so its `.item()`
remains (and is then reported: net 1 site removed).
"""

from functools import wraps
from typing import Callable, Sequence

import torch


class NotComputableError(RuntimeError):
    """Exception class to raise if Metric cannot be computed."""


def reinit__is_reduced(func: Callable) -> Callable:
    """Helper decorator for distributed configuration.

    See :doc:`metrics` on how to use it.
    """

    @wraps(func)
    def wrapper(self, *args, **kwargs):
        func(self, *args, **kwargs)
        if "_result" in self.__dict__:
            self._result = None  # type: ignore[attr-defined]
        self._is_reduced = False

    setattr(wrapper, "_decorated", True)
    return wrapper


def _get_world_size() -> int:
    return 1


def sync_all_reduce(*attrs) -> Callable:
    """Helper decorator for distributed configuration to collect instance attribute value
    across all participating processes and apply the specified reduction operation."""

    def wrapper(func: Callable) -> Callable:
        @wraps(func)
        def another_wrapper(self, *args, **kwargs):
            if not isinstance(self, Metric):
                raise RuntimeError(
                    "Decorator sync_all_reduce should be used on ignite.metric.Metric class methods only"
                )
            ws = _get_world_size()
            if len(attrs) > 0 and not self._is_reduced:
                if ws > 1:
                    raise NotImplementedError("all_reduce across processes is not part of this case")
                self._is_reduced = True

            result = func(self, *args, **kwargs)
            return result

        return another_wrapper

    setattr(wrapper, "_decorated", True)
    return wrapper


class Metric:
    def __init__(self, output_transform: Callable = lambda x: x, device=torch.device("cpu")):
        self._output_transform = output_transform
        self._device = torch.device(device)
        self._is_reduced = False
        self.reset()


class _BaseClassification(Metric):
    def __init__(self, output_transform: Callable = lambda x: x, is_multilabel: bool = False,
                 device=torch.device("cpu")):
        self._is_multilabel = is_multilabel
        self._type = None
        self._num_classes = None
        super(_BaseClassification, self).__init__(output_transform=output_transform, device=device)

    def reset(self) -> None:
        self._type = None
        self._num_classes = None

    def _check_shape(self, output: Sequence[torch.Tensor]) -> None:
        y_pred, y = output

        if not (y.ndimension() == y_pred.ndimension() or y.ndimension() + 1 == y_pred.ndimension()):
            raise ValueError(
                "y must have shape of (batch_size, ...) and y_pred must have "
                "shape of (batch_size, num_categories, ...) or (batch_size, ...), "
                f"but given {y.shape} vs {y_pred.shape}."
            )

        y_shape = y.shape
        y_pred_shape = y_pred.shape

        if y.ndimension() + 1 == y_pred.ndimension():
            y_pred_shape = (y_pred_shape[0],) + y_pred_shape[2:]

        if not (y_shape == y_pred_shape):
            raise ValueError("y and y_pred must have compatible shapes.")

        if self._is_multilabel and not (y.shape == y_pred.shape and y.ndimension() > 1 and y.shape[1] > 1):
            raise ValueError(
                "y and y_pred must have same shape of (batch_size, num_categories, ...) and num_categories > 1."
            )

    def _check_binary_multilabel_cases(self, output: Sequence[torch.Tensor]) -> None:
        y_pred, y = output

        if not torch.equal(y, y**2):
            raise ValueError("For binary cases, y must be comprised of 0's and 1's.")

        if not torch.equal(y_pred, y_pred**2):
            raise ValueError("For binary cases, y_pred must be comprised of 0's and 1's.")

    def _check_type(self, output: Sequence[torch.Tensor]) -> None:
        y_pred, y = output

        if y.ndimension() + 1 == y_pred.ndimension():
            num_classes = y_pred.shape[1]
            if num_classes == 1:
                update_type = "binary"
                self._check_binary_multilabel_cases((y_pred, y))
            else:
                update_type = "multiclass"
        elif y.ndimension() == y_pred.ndimension():
            self._check_binary_multilabel_cases((y_pred, y))

            if self._is_multilabel:
                update_type = "multilabel"
                num_classes = y_pred.shape[1]
            else:
                update_type = "binary"
                num_classes = 1
        else:
            raise RuntimeError(
                f"Invalid shapes of y (shape={y.shape}) and y_pred (shape={y_pred.shape}), check documentation."
                " for expected shapes of y and y_pred."
            )
        if self._type is None:
            self._type = update_type
            self._num_classes = num_classes
        else:
            if self._type != update_type:
                raise RuntimeError(f"Input data type has changed from {self._type} to {update_type}.")
            if self._num_classes != num_classes:
                raise ValueError(f"Input data number of classes has changed from {self._num_classes} to {num_classes}")


class Accuracy(_BaseClassification):
    def __init__(self, output_transform: Callable = lambda x: x, is_multilabel: bool = False,
                 device=torch.device("cpu")):
        super(Accuracy, self).__init__(output_transform=output_transform, is_multilabel=is_multilabel, device=device)

    @reinit__is_reduced
    def reset(self) -> None:
        self._num_correct = torch.tensor(0, device=self._device)
        self._num_examples = 0
        super(Accuracy, self).reset()

    @reinit__is_reduced
    def update(self, output: Sequence[torch.Tensor]) -> None:
        self._check_shape(output)
        self._check_type(output)
        y_pred, y = output[0].detach(), output[1].detach()

        if self._type == "binary":
            correct = torch.eq(y_pred.view(-1).to(y), y.view(-1))
        elif self._type == "multiclass":
            indices = torch.argmax(y_pred, dim=1)
            correct = torch.eq(indices, y).view(-1)
        elif self._type == "multilabel":
            # if y, y_pred shape is (N, C, ...) -> (N x ..., C)
            num_classes = y_pred.size(1)
            last_dim = y_pred.ndimension()
            y_pred = torch.transpose(y_pred, 1, last_dim - 1).reshape(-1, num_classes)
            y = torch.transpose(y, 1, last_dim - 1).reshape(-1, num_classes)
            correct = torch.all(y == y_pred.type_as(y), dim=-1)

        self._num_correct += torch.sum(correct).to(self._device)
        self._num_examples += correct.shape[0]

    @sync_all_reduce("_num_examples", "_num_correct")
    def compute(self) -> float:
        if self._num_examples == 0:
            raise NotComputableError("Accuracy must have at least one example before it can be computed.")
        return self._num_correct.item() / self._num_examples


def make():
    acc = Accuracy()

    def update_and_compute(y_pred, y):
        acc.update((y_pred, y))
        return acc.compute()

    return update_and_compute


def inputs():
    g = torch.Generator().manual_seed(0)
    cases = []
    for n, column in [(6, False), (4, True), (8, False), (5, True), (3, False), (7, False), (2, True), (9, False)]:
        y = torch.randint(0, 2, (n,), generator=g)
        y_pred = torch.randint(0, 2, (n, 1) if column else (n,), generator=g)
        cases.append((y_pred, y))
    return cases


def failing_inputs():
    return [
        (torch.tensor([0, 1, 1, 0]), torch.tensor([0, 2, 1, 0])),          # y not binary
        (torch.tensor([[0.3], [1.0], [0.0]]), torch.tensor([0, 1, 0])),    # y_pred are probabilities
    ]


KIND = "torch-equal-raise+item"
