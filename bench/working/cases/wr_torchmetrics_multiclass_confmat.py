"""torchmetrics.functional.classification.multiclass_confusion_matrix (with its tensor validation,
ignore_index filtering, `_bincount` and the normalisation that zeroes NaNs with a warning).

Sources: https://github.com/Lightning-AI/torchmetrics/blob/master/src/torchmetrics/functional/classification/confusion_matrix.py
https://github.com/Lightning-AI/torchmetrics/blob/master/src/torchmetrics/utilities/data.py (`_bincount`)
(`rank_zero_warn` reduced to `warnings.warn` on a single process; the `_XLA_AVAILABLE` / MPS branch of
`_bincount` kept as the deterministic-algorithms test.)

Breaks: `len(torch.unique(target))` / `len(torch.unique(preds))` in the validation (dynamic shape),
`preds[idx]` / `target[idx]` with the ignore_index mask (dynamic shape), `torch.bincount`
(data-dependent output size), `confmat[torch.isnan(confmat)].nelement()` and `if nan_elements:`.

HAND: the unique-count checks and the NaN warning move into `torch.library.custom_op`s with an
ORDERED effect (same RuntimeError / UserWarning text at run time); ignored targets get weight 0 and
the counts are `zeros(C*C).scatter_add_(0, mapping, weight)`; NaNs are zeroed with `torch.where`.
"""
import warnings
from typing import Optional, Tuple

import torch
from torch import Tensor

KIND = "dynamic-shape+check"


def rank_zero_warn(message: str) -> None:
    warnings.warn(message)


def _bincount(x: Tensor, minlength: Optional[int] = None) -> Tensor:
    if minlength is None:
        minlength = len(torch.unique(x))
    if torch.are_deterministic_algorithms_enabled() or x.is_mps:
        mesh = torch.arange(minlength, device=x.device).repeat(len(x), 1)
        return torch.eq(x.reshape(-1, 1), mesh).sum(dim=0)
    return torch.bincount(x, minlength=minlength)


def _confusion_matrix_reduce(confmat: Tensor, normalize: Optional[str] = None) -> Tensor:
    allowed_normalize = ("true", "pred", "all", "none", None)
    if normalize not in allowed_normalize:
        raise ValueError(f"Argument `normalize` needs to one of the following: {allowed_normalize}")
    if normalize is not None and normalize != "none":
        confmat = confmat.float() if not confmat.is_floating_point() else confmat
        if normalize == "true":
            confmat = confmat / confmat.sum(axis=-1, keepdim=True)
        elif normalize == "pred":
            confmat = confmat / confmat.sum(axis=-2, keepdim=True)
        elif normalize == "all":
            confmat = confmat / confmat.sum(axis=[-2, -1], keepdim=True)

        nan_elements = confmat[torch.isnan(confmat)].nelement()
        if nan_elements:
            confmat[torch.isnan(confmat)] = 0
            rank_zero_warn(f"{nan_elements} NaN values found in confusion matrix have been replaced with zeros.")
    return confmat


def _multiclass_confusion_matrix_tensor_validation(
    preds: Tensor, target: Tensor, num_classes: int, ignore_index: Optional[int] = None
) -> None:
    if preds.ndim == target.ndim + 1:
        if not preds.is_floating_point():
            raise ValueError("If `preds` have one dimension more than `target`, `preds` should be a float tensor.")
        if preds.shape[1] != num_classes:
            raise ValueError(
                "If `preds` have one dimension more than `target`, `preds.shape[1]` should be"
                " equal to number of classes."
            )
        if preds.shape[2:] != target.shape[1:]:
            raise ValueError(
                "If `preds` have one dimension more than `target`, the shape of `preds` should be"
                " (N, C, ...), and the shape of `target` should be (N, ...)."
            )
    elif preds.ndim == target.ndim:
        if preds.shape != target.shape:
            raise ValueError(
                "The `preds` and `target` should have the same shape,",
                f" got `preds` with shape={preds.shape} and `target` with shape={target.shape}.",
            )
    else:
        raise ValueError(
            "Either `preds` and `target` both should have the (same) shape (N, ...), or `target` should be (N, ...)"
            " and `preds` should be (N, C, ...)."
        )

    num_unique_values = len(torch.unique(target))
    check = num_unique_values > num_classes if ignore_index is None else num_unique_values > num_classes + 1
    if check:
        raise RuntimeError(
            "Detected more unique values in `target` than `num_classes`. Expected only "
            f"{num_classes if ignore_index is None else num_classes + 1} but found "
            f"{num_unique_values} in `target`."
        )

    if not preds.is_floating_point():
        num_unique_values = len(torch.unique(preds))
        if num_unique_values > num_classes:
            raise RuntimeError(
                "Detected more unique values in `preds` than `num_classes`. Expected only "
                f"{num_classes} but found {num_unique_values} in `preds`."
            )


def _multiclass_confusion_matrix_format(
    preds: Tensor,
    target: Tensor,
    ignore_index: Optional[int] = None,
    convert_to_labels: bool = True,
) -> Tuple[Tensor, Tensor]:
    # Apply argmax if we have one more dimension
    if preds.ndim == target.ndim + 1 and convert_to_labels:
        preds = preds.argmax(dim=1)

    preds = preds.flatten() if convert_to_labels else torch.movedim(preds, 1, -1).reshape(-1, preds.shape[1])
    target = target.flatten()

    if ignore_index is not None:
        idx = target != ignore_index
        preds = preds[idx]
        target = target[idx]

    return preds, target


def _multiclass_confusion_matrix_update(preds: Tensor, target: Tensor, num_classes: int) -> Tensor:
    """Compute the bins to update the confusion matrix with."""
    unique_mapping = target.to(torch.long) * num_classes + preds.to(torch.long)
    bins = _bincount(unique_mapping, minlength=num_classes**2)
    return bins.reshape(num_classes, num_classes)


def multiclass_confusion_matrix(
    preds: Tensor,
    target: Tensor,
    num_classes: int,
    normalize: Optional[str] = None,
    ignore_index: Optional[int] = None,
    validate_args: bool = True,
) -> Tensor:
    if validate_args:
        _multiclass_confusion_matrix_tensor_validation(preds, target, num_classes, ignore_index)
    preds, target = _multiclass_confusion_matrix_format(preds, target, ignore_index)
    confmat = _multiclass_confusion_matrix_update(preds, target, num_classes)
    return _confusion_matrix_reduce(confmat, normalize)


def make():
    return multiclass_confusion_matrix


def inputs():
    torch.manual_seed(0)
    return [
        (torch.randn(12, 4), torch.randint(0, 4, (12,)), 4, "true", -1),                 # logits, ignore_index
        (torch.tensor([2, 1, 0, 1]), torch.tensor([2, 1, 0, 0]), 3),                     # labels
        (torch.randn(10, 3), torch.randint(0, 3, (10,)), 3, "pred"),
        (torch.randint(0, 3, (2, 5)), torch.tensor([[0, 0, 1, 1, 0], [1, 0, 0, 1, 1]]), 3, "true"),  # class 2 absent: NaN row
        (torch.randn(4, 3, 5), torch.randint(0, 3, (4, 5)), 3, "all", None, False),       # (N, C, ...) logits
        (torch.randint(0, 4, (9,)), torch.tensor([0, 1, 2, 3, 3, 2, 1, 0, 4]), 4, None, 4),  # ignore_index == C
        (torch.randint(0, 2, (6,)), torch.tensor([0, 1, 1, 0, 1, 0]), 2, "none"),
        (torch.randn(8, 5), torch.tensor([0, 0, 1, 1, -100, -100, 4, 4]), 5, "pred", -100),
        (torch.tensor([0, 0, 0]), torch.tensor([-1, -1, -1]), 2, "true", -1),            # everything ignored
    ]


def failing_inputs():
    torch.manual_seed(0)
    return [
        (torch.randn(6, 3), torch.tensor([0, 1, 2, 3, 4, 0]), 3),                         # too many target classes
        (torch.tensor([0, 1, 2, 3]), torch.tensor([0, 1, 1, 0]), 3),                      # too many pred classes
        (torch.randn(6, 3), torch.tensor([0, 1, 2, 5, -1, 0]), 3, None, -1),
    ]
