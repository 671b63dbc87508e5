"""mmpose's Associative Embedding loss (bottom-up pose: pull each person's keypoint tags together,
push different people's mean tags apart), as used by the AE / DEKR-style heads.

Source: https://github.com/open-mmlab/mmpose/blob/main/mmpose/models/losses/ae_loss.py
(`AssociativeEmbeddingLoss._ae_loss_per_image` and `.forward`; HigherHRNet's `AELoss.singleTagLoss` makes
the same per-keypoint visibility test on NumPy joints,
https://github.com/HRNet/HigherHRNet-Human-Pose-Estimation/blob/master/lib/core/loss.py).

Breaks: `if keypoint_indices_n[k, 1]:` (a branch on a tensor value, for every keypoint of every
instance) and `tags[:, k, keypoint_indices_n[k, 0]]` (indexing with a 0-d tensor read from the data, not
reached: dynamo skips the frame at the first break because it lies inside a `for` loop).

HAND: none — when no keypoint of the batch is visible the source returns fresh `requires_grad`
zeros that are not connected to `tags` (`tags.grad` stays None). A branch-free form (all tags
gathered with clamped indices, visibility as a mask, masked means and pull terms, `torch.where` on
the valid-instance count) gives `tags` a zero gradient instead, and keeping that one test as a
branch leaves a data-dependent break, so no rewrite both keeps the meaning and removes the site
(compare hf_wav2vec2_layerdrop in the held-out corpus).
"""

from typing import List, Union

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch import Tensor

KIND = "branch-index-loop"
GRAD = True


class AssociativeEmbeddingLoss(nn.Module):
    def __init__(self,
                 loss_weight: float = 1.0,
                 push_loss_factor: float = 0.5) -> None:
        super().__init__()
        self.loss_weight = loss_weight
        self.push_loss_factor = push_loss_factor

    def _ae_loss_per_image(self, tags: Tensor, keypoint_indices: Tensor):
        """Compute associative embedding loss for one image.

        Args:
            tags (Tensor): Tagging heatmaps in shape (K*L, H, W)
            keypoint_indices (Tensor): Ground-truth keypint position indices
                in shape (N, K, 2)
        """
        K = keypoint_indices.shape[1]
        C, H, W = tags.shape
        L = C // K

        tags = tags.view(L, K, H * W)
        instance_tags = []
        instance_kpt_tags = []

        for keypoint_indices_n in keypoint_indices:
            _kpt_tags = []
            for k in range(K):
                if keypoint_indices_n[k, 1]:
                    _kpt_tags.append(tags[:, k, keypoint_indices_n[k, 0]])

            if _kpt_tags:
                kpt_tags = torch.stack(_kpt_tags)
                instance_kpt_tags.append(kpt_tags)
                instance_tags.append(kpt_tags.mean(dim=0))

        N = len(instance_kpt_tags)  # number of instances with valid keypoints

        if N == 0:
            pull_loss = tags.new_zeros(size=(), requires_grad=True)
            push_loss = tags.new_zeros(size=(), requires_grad=True)
        else:
            pull_loss = sum(
                F.mse_loss(_kpt_tags, _tag.expand_as(_kpt_tags))
                for (_kpt_tags, _tag) in zip(instance_kpt_tags, instance_tags))

            if N == 1:
                push_loss = tags.new_zeros(size=(), requires_grad=True)
            else:
                tag_mat = torch.stack(instance_tags)  # (N, L)
                diff = tag_mat[None] - tag_mat[:, None]  # (N, N, L)
                push_loss = torch.sum(torch.exp(-diff.pow(2)))

            # normalization
            eps = 1e-6
            pull_loss = pull_loss / (N + eps)
            push_loss = push_loss / ((N - 1) * N + eps)

        return pull_loss, push_loss

    def forward(self, tags: Tensor, keypoint_indices: Union[List[Tensor],
                                                            Tensor]):
        """Compute associative embedding loss on a batch of data.

        Args:
            tags (Tensor): Tagging heatmaps in shape (B, L*K, H, W)
            keypoint_indices (Tensor|List[Tensor]): Ground-truth keypint
                position indices represented by a Tensor in shape
                (B, N, K, 2), or a list of B Tensors in shape (N_i, K, 2)
                Each keypoint's index is represented as [i, v], where i is the
                position index in the heatmap (:math:`i=y*w+x`) and v is the
                visibility
        """

        assert tags.shape[0] == len(keypoint_indices)

        pull_loss = 0.
        push_loss = 0.

        for i in range(tags.shape[0]):
            _pull, _push = self._ae_loss_per_image(tags[i],
                                                   keypoint_indices[i])
            pull_loss += _pull * self.loss_weight
            push_loss += _push * self.loss_weight * self.push_loss_factor

        return pull_loss, push_loss


def make():
    torch.manual_seed(0)
    return AssociativeEmbeddingLoss(loss_weight=0.001, push_loss_factor=0.5)


def _indices(g, n, k, h, w, p_vis=0.7):
    """Like mmpose's AssociativeEmbedding codec: [y * W + x, visible], the index of an invisible
    keypoint may lie outside the heatmap."""
    x = torch.randint(-2, w + 2, (n, k), generator=g)
    y = torch.randint(-2, h + 2, (n, k), generator=g)
    inside = (x >= 0) & (x < w) & (y >= 0) & (y < h)
    vis = inside & (torch.rand(n, k, generator=g) < p_vis)
    return torch.stack([y * w + x, vis.long()], dim=-1)


def inputs():
    g = torch.Generator().manual_seed(5)
    K, H, W = 4, 5, 6
    tags = lambda b, l=1: torch.randn(b, K * l, H, W, generator=g)

    none_visible = _indices(g, 3, K, H, W)
    none_visible[..., 1] = 0
    one_valid = _indices(g, 3, K, H, W, p_vis=1.0)
    one_valid[1:, :, 1] = 0                      # only the first person is visible
    all_visible = torch.stack([_indices(g, 3, K, H, W, p_vis=1.0) for _ in range(2)])
    all_visible[..., 0] = all_visible[..., 0].clamp(0, H * W - 1)
    all_visible[..., 1] = 1
    return [
        (tags(2), torch.stack([_indices(g, 3, K, H, W) for _ in range(2)])),
        (tags(2, 2), torch.stack([_indices(g, 4, K, H, W) for _ in range(2)])),   # 2-d tags
        (tags(3), [_indices(g, 2, K, H, W), _indices(g, 5, K, H, W), _indices(g, 1, K, H, W)]),
        (tags(2), [none_visible, _indices(g, 3, K, H, W)]),     # an image without visible keypoints
        (tags(2), [one_valid, _indices(g, 2, K, H, W)]),        # an image with one valid person
        (tags(2), [torch.zeros(0, K, 2, dtype=torch.long), _indices(g, 4, K, H, W)]),  # no people
        (tags(2), all_visible),
        (tags(1, 3), _indices(g, 6, K, H, W).unsqueeze(0)),
        (tags(1), [none_visible]),                              # nothing visible in the batch
    ]
