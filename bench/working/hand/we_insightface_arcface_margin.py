"""Hand rewrite of cases/we_insightface_arcface_margin.py: the margin is applied through a one-hot
mask of the in-shard (row, label) entries and `torch.where` instead of `torch.where(labels != -1)[0]`
and advanced-index assignment; ArcFace's formula runs on a safe operand (0 off-target)."""
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
        # one-hot of the (row, label) entries of the rows whose label is in this shard
        hit = (torch.arange(logits.size(1), device=logits.device) == labels[:, None]) & (labels != -1)[:, None]
        # "safe" operand: off-target entries are 0, so sqrt(1 - x^2) has a finite gradient there
        target_logit = torch.where(hit, logits, torch.zeros_like(logits))

        sin_theta = torch.sqrt(1.0 - torch.pow(target_logit, 2))
        cos_theta_m = target_logit * self.cos_m - sin_theta * self.sin_m  # cos(target+margin)
        if self.easy_margin:
            final_target_logit = torch.where(
                target_logit > 0, cos_theta_m, target_logit)
        else:
            final_target_logit = torch.where(
                target_logit > self.theta, cos_theta_m, target_logit - self.sinmm)

        logits = torch.where(hit, final_target_logit, logits)
        logits = logits * self.scale
        return logits


class CosFace(torch.nn.Module):
    def __init__(self, s=64.0, m=0.40):
        super(CosFace, self).__init__()
        self.s = s
        self.m = m

    def forward(self, logits: torch.Tensor, labels: torch.Tensor):
        hit = (torch.arange(logits.size(1), device=logits.device) == labels[:, None]) & (labels != -1)[:, None]
        logits = torch.where(hit, logits - self.m, logits)
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
