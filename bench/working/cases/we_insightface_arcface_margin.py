"""InsightFace arcface_torch ArcFace / CosFace margin heads: the margin is applied only to the rows
whose label belongs to this rank's class shard (`label != -1` under Partial FC), selected with
`torch.where(labels != -1)[0]` and written back with advanced-index assignment, before the scaled
logits go to the cross entropy.

Source: https://github.com/deepinsight/insightface/blob/2e2e8c97c7bc3e79a4d5403ae12cd5dd2bd69658/recognition/arcface_torch/losses.py
(`ArcFace.forward`, `CosFace.forward`), used as `margin_softmax` by
https://github.com/deepinsight/insightface/blob/master/recognition/arcface_torch/partial_fc_v2.py
(`PartialFC_V2.forward`: normalised embeddings x normalised class centres, `clamp(-1, 1)`, margin,
cross entropy). The classifier here is one shard of 6 classes with embedding size 8; labels of
other shards are -1 and the loss ignores them.

Breaks: `torch.where(labels != -1)[0]` (nonzero: data-dependent output shape), then indexing with it.

HAND: one-hot mask `(arange(C) == labels[:, None]) & (labels != -1)[:, None]` and `torch.where`
over the whole logit matrix; the ArcFace formula runs on a "safe" operand (0 off-target) so the
unselected entries cannot put NaN into the gradient of `sqrt(1 - x^2)`.
"""
import math

import torch
import torch.nn.functional as F
from torch import nn

KIND = "nonzero-index"
GRAD = True


class ArcFace(torch.nn.Module):
    """ ArcFace (https://arxiv.org/pdf/1801.07698v1.pdf):
    """
    def __init__(self, s=64.0, margin=0.5):
        super(ArcFace, self).__init__()
        self.scale = s
        self.cos_m = math.cos(margin)
        self.sin_m = math.sin(margin)
        self.theta = math.cos(math.pi - margin)
        self.sinmm = math.sin(math.pi - margin) * margin
        self.easy_margin = False

    def forward(self, logits: torch.Tensor, labels: torch.Tensor):
        index = torch.where(labels != -1)[0]
        target_logit = logits[index, labels[index].view(-1)]

        sin_theta = torch.sqrt(1.0 - torch.pow(target_logit, 2))
        cos_theta_m = target_logit * self.cos_m - sin_theta * self.sin_m  # cos(target+margin)
        if self.easy_margin:
            final_target_logit = torch.where(
                target_logit > 0, cos_theta_m, target_logit)
        else:
            final_target_logit = torch.where(
                target_logit > self.theta, cos_theta_m, target_logit - self.sinmm)

        logits[index, labels[index].view(-1)] = final_target_logit
        logits = logits * self.scale
        return logits


class CosFace(torch.nn.Module):
    def __init__(self, s=64.0, m=0.40):
        super(CosFace, self).__init__()
        self.s = s
        self.m = m

    def forward(self, logits: torch.Tensor, labels: torch.Tensor):
        index = torch.where(labels != -1)[0]
        target_logit = logits[index, labels[index].view(-1)]
        final_target_logit = target_logit - self.m
        logits[index, labels[index].view(-1)] = final_target_logit
        logits = logits * self.s
        return logits


class PartialFCShard(nn.Module):
    """The local-shard part of PartialFC_V2.forward (sample_rate 1, world size 1)."""

    def __init__(self, embedding_size=8, num_local=6):
        super().__init__()
        self.weight = nn.Parameter(torch.normal(0, 0.01, (num_local, embedding_size)))
        self.arcface = ArcFace(s=64.0, margin=0.5)
        self.cosface = CosFace(s=64.0, m=0.4)

    def forward(self, local_embeddings, local_labels, use_cosface=False):
        norm_embeddings = F.normalize(local_embeddings)
        norm_weight_activated = F.normalize(self.weight)
        logits = F.linear(norm_embeddings, norm_weight_activated)
        logits = logits.clamp(-1, 1)

        margin_softmax = self.cosface if use_cosface else self.arcface
        logits = margin_softmax(logits, local_labels)
        loss = F.cross_entropy(logits, local_labels, ignore_index=-1)
        return logits, loss


def make():
    torch.manual_seed(0)
    return PartialFCShard()


def inputs():
    g = torch.Generator().manual_seed(5)

    def batch(n, labels):
        return torch.randn(n, 8, generator=g), torch.tensor(labels)

    out = []
    for labels, cos in [([0, 3, 5, 1], False), ([2, -1, 4, -1, 0], False), ([-1, 1, -1], True),
                        ([5, 5, 2, 0, 1, 3], True), ([-1, -1, 3], False), ([4], False),
                        ([1, -1, 2, 2, -1, 0, 5], True), ([3, 0], False)]:
        out.append((*batch(len(labels), labels), cos))
    # an embedding almost opposite a class centre: target cosine below cos(pi - m), the fallback branch
    w = make().weight.detach()
    out.append((-w[[2, 4]] * 10 + 0.03 * torch.randn(2, 8, generator=g), torch.tensor([2, 4]), False))
    return out
