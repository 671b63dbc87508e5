"""AllenNLP `FBetaMeasure` called from a model's forward (as AllenNLP models do with their metrics):
checks the gold labels, then accumulates per-class true-positive / predicted / gold counts with boolean
-mask gathers and `torch.bincount`.

Source: https://github.com/allenai/allennlp/blob/main/allennlp/training/metrics/fbeta_measure.py
(`FBetaMeasure.__call__`; `Metric.detach_tensors` from metric.py). The model around it is reduced to a
linear token classifier; its forward also returns the metric's running counters so that a comparison sees
them.

Breaks: `if (gold_labels >= num_classes).any(): raise ConfigurationError(...)` (data-dependent branch);
`gold_labels[true_positives]`, `argmax_predictions[mask & pred_mask]`, `gold_labels[mask]` (boolean-mask
gathers, data-dependent sizes) and the `torch.bincount` calls / `shape[0] == 0` branches on them.

HAND: the label check moves into a `torch.library.custom_op` with an ORDERED effect that raises the same
ConfigurationError at run time; each count becomes a `scatter_add_` of the mask (as float) into
`zeros(num_classes)` at the label / prediction index — the same counts, empty masks giving zeros — for
labels in `[0, num_classes)`, the domain the check enforces (the gold ids are class indices).
"""

from typing import Optional

import torch
from torch import nn
from torch._higher_order_ops.effects import _EffectType, _register_effectful_op


class ConfigurationError(Exception):
    """The exception raised by any AllenNLP object when it's misconfigured."""

    def __init__(self, message: str):
        super().__init__()
        self.message = message

    def __str__(self):
        return self.message


@torch.library.custom_op("blind_c_allennlp::check_gold_labels", mutates_args=())
def _check_gold_labels(gold_labels: torch.Tensor, num_classes: int) -> None:
    if (gold_labels >= num_classes).any():
        raise ConfigurationError(
            "A gold label passed to FBetaMeasure contains "
            f"an id >= {num_classes}, the number of classes."
        )


@_check_gold_labels.register_fake
def _(gold_labels, num_classes):
    return None


_register_effectful_op(torch.ops.blind_c_allennlp.check_gold_labels.default, _EffectType.ORDERED)


class Metric:
    @staticmethod
    def detach_tensors(*tensors: torch.Tensor):
        # Check if it's actually a tensor in case something else was passed.
        return (x.detach() if isinstance(x, torch.Tensor) else x for x in tensors)


class FBetaMeasure(Metric):
    def __init__(self, beta: float = 1.0, average: Optional[str] = None, labels=None) -> None:
        average_options = {None, "micro", "macro", "weighted"}
        if average not in average_options:
            raise ConfigurationError(f"`average` has to be one of {average_options}.")
        if beta <= 0:
            raise ConfigurationError("`beta` should be >0 in the F-beta score.")
        self._beta = beta
        self._average = average
        self._labels = labels

        # statistics
        # the total number of true positive instances under each class
        # Shape: (num_classes, )
        self._true_positive_sum = None
        # the total number of instances
        # Shape: (num_classes, )
        self._total_sum = None
        # the total number of instances under each _predicted_ class,
        # including true positives and false positives
        # Shape: (num_classes, )
        self._pred_sum = None
        # the total number of instances under each _true_ class,
        # including true positives and false negatives
        # Shape: (num_classes, )
        self._true_sum = None

    def __call__(
        self,
        predictions: torch.Tensor,
        gold_labels: torch.Tensor,
        mask: Optional[torch.BoolTensor] = None,
    ):
        predictions, gold_labels, mask = self.detach_tensors(predictions, gold_labels, mask)
        device = gold_labels.device

        # Calculate true_positive_sum, true_negative_sum, pred_sum, true_sum
        num_classes = predictions.size(-1)
        _check_gold_labels(gold_labels, num_classes)

        # It means we call this metric at the first time
        # when `self._true_positive_sum` is None.
        if self._true_positive_sum is None:
            self._true_positive_sum = torch.zeros(num_classes, device=predictions.device)
            self._true_sum = torch.zeros(num_classes, device=predictions.device)
            self._pred_sum = torch.zeros(num_classes, device=predictions.device)
            self._total_sum = torch.zeros(num_classes, device=predictions.device)

        if mask is None:
            mask = torch.ones_like(gold_labels).bool()
        gold_labels = gold_labels.float()

        # If the prediction tensor is all zeros, the record is not classified to any of the labels.
        pred_mask = predictions.sum(dim=-1) != 0
        argmax_predictions = predictions.max(dim=-1)[1].float()

        true_positives = (gold_labels == argmax_predictions) & mask & pred_mask

        # per-class counts of the masked entries (bincount of the masked gather, for ids in [0, num_classes))
        gold_index = gold_labels.long().reshape(-1)
        pred_index = argmax_predictions.long().reshape(-1)
        true_positive_sum = torch.zeros(num_classes, device=device).scatter_add_(
            0, gold_index, true_positives.reshape(-1).float()
        )
        pred_sum = torch.zeros(num_classes, device=device).scatter_add_(
            0, pred_index, (mask & pred_mask).reshape(-1).float()
        )
        true_sum = torch.zeros(num_classes, device=predictions.device).scatter_add_(
            0, gold_index, mask.reshape(-1).float()
        )

        self._true_positive_sum += true_positive_sum
        self._pred_sum += pred_sum
        self._true_sum += true_sum
        self._total_sum += mask.sum().to(torch.float)


class TokenClassifier(nn.Module):
    def __init__(self, input_dim=5, num_labels=4):
        super().__init__()
        self.tag_projection_layer = nn.Linear(input_dim, num_labels)
        self._f1 = FBetaMeasure(average=None)

    def forward(self, embedded_text, tags, mask=None):
        logits = self.tag_projection_layer(embedded_text)
        class_probabilities = torch.softmax(logits, dim=-1)
        output_dict = {"logits": logits, "class_probabilities": class_probabilities}
        self._f1(class_probabilities, tags, mask)
        output_dict["f1_counts"] = torch.stack(
            [self._f1._true_positive_sum, self._f1._pred_sum, self._f1._true_sum, self._f1._total_sum]
        )
        return output_dict


def make():
    torch.manual_seed(0)
    return TokenClassifier()


def inputs():
    g = torch.Generator().manual_seed(0)

    def batch(b, t, mask_kind):
        x = torch.randn(b, t, 5, generator=g) * 2
        tags = torch.randint(0, 4, (b, t), generator=g)
        if mask_kind is None:
            return (x, tags)
        if mask_kind == "none":
            return (x, tags, torch.zeros(b, t, dtype=torch.bool))
        lengths = torch.randint(1, t + 1, (b,), generator=g)
        return (x, tags, torch.arange(t)[None, :] < lengths[:, None])

    cases = [batch(2, 5, None), batch(3, 4, "pad"), batch(1, 6, "pad"), batch(2, 3, "none"),
             batch(4, 2, "pad"), batch(2, 7, None), batch(3, 3, "pad")]
    # predictions that never match the gold tags: no true positives at all
    x, tags = batch(2, 3, None)
    model = make()
    wrong = (model.tag_projection_layer(x).argmax(-1) + 1) % 4
    cases.append((x, wrong, torch.ones(2, 3, dtype=torch.bool)))
    return cases


def failing_inputs():
    g = torch.Generator().manual_seed(1)
    x = torch.randn(2, 3, 5, generator=g)
    return [(x, torch.tensor([[0, 1, 4], [2, 3, 1]])), (x, torch.tensor([[7, 1, 2], [2, 3, 1]]), torch.ones(2, 3, dtype=torch.bool))]


KIND = "raise+bool-mask+bincount"
