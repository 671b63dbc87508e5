"""Hand rewrite of cases/we_allennlp_categorical_accuracy_check.py: the gold-label range check is a
`torch.library.custom_op` with an ORDERED effect that raises the same ValueError at run time."""
from typing import Iterable, Optional

import torch
from torch._library.effects import EffectType

KIND = "any-raise"


_NS, _NAME = "we_allennlp", "check_gold_labels"
if not hasattr(getattr(torch.ops, _NS), _NAME):

    @torch.library.custom_op(f"{_NS}::{_NAME}", mutates_args=())
    def _check_gold_labels(gold_labels: torch.Tensor, num_classes: int) -> None:
        if (gold_labels >= num_classes).any():
            raise ValueError(
                "A gold label passed to Categorical Accuracy contains an id >= {}, "
                "the number of classes.".format(num_classes)
            )

    @_check_gold_labels.register_fake
    def _(gold_labels, num_classes):
        return None

    _check_gold_labels.register_effect(EffectType.ORDERED)


class CategoricalAccuracy:
    """
    Categorical Top-K accuracy. Assumes integer labels, with
    each item to be classified having a single correct class.
    Tie break enables equal distribution of scores among the
    classes with same maximum predicted scores.
    """

    def __init__(self, top_k: int = 1, tie_break: bool = False) -> None:
        if top_k > 1 and tie_break:
            raise ValueError(
                "Tie break in Categorical Accuracy can be done only for maximum (top_k = 1)"
            )
        if top_k <= 0:
            raise ValueError("top_k passed to Categorical Accuracy must be > 0")
        self._top_k = top_k
        self._tie_break = tie_break
        self.correct_count = 0.0
        self.total_count = 0.0

    def __call__(
        self,
        predictions: torch.Tensor,
        gold_labels: torch.Tensor,
        mask: Optional[torch.BoolTensor] = None,
    ):
        predictions, gold_labels, mask = self.detach_tensors(predictions, gold_labels, mask)

        # Some sanity checks.
        num_classes = predictions.size(-1)
        if gold_labels.dim() != predictions.dim() - 1:
            raise ValueError(
                "gold_labels must have dimension == predictions.size() - 1 but "
                "found tensor of shape: {}".format(predictions.size())
            )
        # the label-range check runs at run time, inside the graph
        getattr(getattr(torch.ops, _NS), _NAME)(gold_labels, num_classes)

        predictions = predictions.view((-1, num_classes))
        gold_labels = gold_labels.view(-1).long()
        if not self._tie_break:
            # Top K indexes of the predictions (or fewer, if there aren't K of them).
            # Special case topk == 1, because it's common and .max() is much faster than .topk().
            if self._top_k == 1:
                top_k = predictions.max(-1)[1].unsqueeze(-1)
            else:
                top_k = predictions.topk(min(self._top_k, predictions.shape[-1]), -1)[1]

            # This is of shape (batch_size, ..., top_k).
            correct = top_k.eq(gold_labels.unsqueeze(-1)).float()
        else:
            # prediction is correct if gold label falls on any of the max scores. distribute score by tie_counts
            max_predictions = predictions.max(-1)[0]
            max_predictions_mask = predictions.eq(max_predictions.unsqueeze(-1))
            # max_predictions_mask is (rows X num_classes) and gold_labels is (batch_size)
            # ith entry in gold_labels points to index (0-num_classes) for ith row in max_predictions
            # For each row check if index pointed by gold_label is was 1 or not (among max scored classes)
            correct = max_predictions_mask[
                torch.arange(gold_labels.numel(), device=gold_labels.device).long(), gold_labels
            ].float()
            tie_counts = max_predictions_mask.sum(-1)
            correct /= tie_counts.float()
            correct.unsqueeze_(-1)

        if mask is not None:
            correct *= mask.view(-1, 1)
            self.total_count += mask.sum()
        else:
            self.total_count += gold_labels.numel()
        self.correct_count += correct.sum()

    @staticmethod
    def detach_tensors(*tensors: torch.Tensor) -> Iterable[torch.Tensor]:
        """
        If you actually passed gradient-tracking Tensors to a Metric, there will be
        a huge memory leak, because it will prevent garbage collection for the computation
        graph. This method ensures the tensors are detached.
        """
        # Check if it's actually a tensor in case something else was passed.
        return (x.detach() if isinstance(x, torch.Tensor) else x for x in tensors)


def make():
    metrics = {1: CategoricalAccuracy(), 2: CategoricalAccuracy(top_k=2), "tie": CategoricalAccuracy(tie_break=True)}

    def accuracy_step(predictions, gold_labels, mask, which):
        metric = metrics[which]
        metric(predictions, gold_labels, mask)
        return metric.correct_count, metric.total_count

    return accuracy_step


def inputs():
    g = torch.Generator().manual_seed(2)
    ties = torch.tensor([[[1.0, 1.0, 0.0], [2.0, 2.0, 2.0], [0.0, 3.0, 1.0]]])
    return [
        (torch.randn(2, 4, 5, generator=g), torch.randint(0, 5, (2, 4), generator=g), None, 1),
        (torch.randn(3, 5, generator=g), torch.randint(0, 5, (3,), generator=g), None, 2),
        (torch.randn(2, 3, 4, generator=g), torch.randint(0, 4, (2, 3), generator=g),
         torch.tensor([[True, True, False], [True, False, False]]), 1),
        (ties, torch.tensor([[0, 2, 1]]), None, "tie"),
        (torch.randn(4, 6, generator=g), torch.tensor([5, 0, 3, 5]), None, 1),
        (torch.randn(1, 5, 3, generator=g), torch.randint(0, 3, (1, 5), generator=g),
         torch.tensor([[True, True, True, False, False]]), 2),
        (ties, torch.tensor([[1, 0, 1]]), torch.tensor([[True, False, True]]), "tie"),
        (torch.randn(2, 2, 7, generator=g), torch.randint(0, 7, (2, 2), generator=g), None, 1),
    ]


def failing_inputs():
    g = torch.Generator().manual_seed(3)
    return [
        (torch.randn(2, 3, 4, generator=g), torch.tensor([[0, 4, 1], [2, 3, 3]]), None, 1),   # id 4 >= 4 classes
        (torch.randn(3, 5, generator=g), torch.tensor([9, 0, 1]), None, 2),
    ]
