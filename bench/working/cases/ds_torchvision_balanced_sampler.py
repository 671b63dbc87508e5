"""torchvision detection: BalancedPositiveNegativeSampler (RPN / RoI heads) picks random positive and
negative anchors per image.

Source: https://github.com/pytorch/vision/blob/main/torchvision/models/detection/_utils.py
(`BalancedPositiveNegativeSampler.__call__`).

Breaks: `torch.where(matched_idxs_per_image >= 1)[0]` (single-argument where = nonzero: dynamic
output shape); the frame then runs eagerly, where the second `torch.where`, `min(positive.numel(), num_pos)`
and `torch.randperm(positive.numel())` also depend on data-dependent sizes.

HAND: none — the returned masks have a fixed shape, but which anchors are picked comes from
`torch.randperm` over the data-dependent number of candidates; any fixed-shape selection (random
keys + topk) draws a different random stream and picks different anchors for the same seed.
"""

from typing import List, Tuple

import torch
from torch import Tensor

KIND = "nonzero-random"


class BalancedPositiveNegativeSampler:
    """
    This class samples batches, ensuring that they contain a fixed proportion of positives
    """

    def __init__(self, batch_size_per_image: int, positive_fraction: float) -> None:
        """
        Args:
            batch_size_per_image (int): number of elements to be selected per image
            positive_fraction (float): percentage of positive elements per batch
        """
        self.batch_size_per_image = batch_size_per_image
        self.positive_fraction = positive_fraction

    def __call__(self, matched_idxs: List[Tensor]) -> Tuple[List[Tensor], List[Tensor]]:
        """
        Args:
            matched_idxs: list of tensors containing -1, 0 or positive values.
                Each tensor corresponds to a specific image.
                -1 values are ignored, 0 are considered as negatives and > 0 as
                positives.

        Returns:
            pos_idx (list[tensor])
            neg_idx (list[tensor])

        Returns two lists of binary masks for each image.
        The first list contains the positive elements that were selected,
        and the second list the negative example.
        """
        pos_idx = []
        neg_idx = []
        for matched_idxs_per_image in matched_idxs:
            positive = torch.where(matched_idxs_per_image >= 1)[0]
            negative = torch.where(matched_idxs_per_image == 0)[0]

            num_pos = int(self.batch_size_per_image * self.positive_fraction)
            # protect against not enough positive examples
            num_pos = min(positive.numel(), num_pos)
            num_neg = self.batch_size_per_image - num_pos
            # protect against not enough negative examples
            num_neg = min(negative.numel(), num_neg)

            # randomly select positive and negative examples
            perm1 = torch.randperm(positive.numel(), device=positive.device)[:num_pos]
            perm2 = torch.randperm(negative.numel(), device=negative.device)[:num_neg]

            pos_idx_per_image = positive[perm1]
            neg_idx_per_image = negative[perm2]

            # create binary mask from indices
            pos_idx_per_image_mask = torch.zeros_like(matched_idxs_per_image, dtype=torch.uint8)
            neg_idx_per_image_mask = torch.zeros_like(matched_idxs_per_image, dtype=torch.uint8)

            pos_idx_per_image_mask[pos_idx_per_image] = 1
            neg_idx_per_image_mask[neg_idx_per_image] = 1

            pos_idx.append(pos_idx_per_image_mask)
            neg_idx.append(neg_idx_per_image_mask)

        return pos_idx, neg_idx


def make():
    # RPN defaults scaled down: 8 anchors per image, half positive
    return BalancedPositiveNegativeSampler(8, 0.5)


def inputs():
    g = torch.Generator().manual_seed(15)
    m = lambda n, lo=-1, hi=3: torch.randint(lo, hi, (n,), generator=g)
    return [
        ([m(20)],),
        ([m(20), m(12)],),
        ([torch.zeros(10, dtype=torch.long)],),                  # no positive
        ([torch.full((9,), 2)],),                               # only positives (more than 4)
        ([torch.full((6,), -1)],),                              # everything ignored
        ([m(5, 0, 2), m(30)],),                                 # fewer candidates than the batch size
        ([m(16, -1, 2), m(16, 0, 5), m(3)],),
        ([torch.tensor([1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0])],),  # one positive, many negatives
    ]
