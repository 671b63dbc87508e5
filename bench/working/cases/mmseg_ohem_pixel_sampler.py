"""mmseg OHEMPixelSampler (confidence-threshold mode) feeding a decode head's weighted CE loss.

A decode head (1x1 conv_seg) produces logits; as in mmseg's ``BaseDecodeHead.loss_by_feat`` the
pixel sampler builds ``seg_weight`` and the cross-entropy is weighted by it. The sampler is kept
as in the source: the probabilities of the valid pixels are gathered by a boolean mask, sorted,
the ``min(batch_kept, numel - 1)``-th is taken (or 0.0 when there is no valid pixel), and the
threshold is the Python ``max`` of that 0-d tensor and ``self.thresh``.

Source: https://github.com/open-mmlab/mmsegmentation/blob/main/mmseg/structures/sampler/ohem_pixel_sampler.py
        https://github.com/open-mmlab/mmsegmentation/blob/main/mmseg/models/losses/cross_entropy_loss.py

Breaks: ``seg_prob[valid_mask]`` (boolean-mask gather, data-dependent size), ``sort_prob.numel() > 0``
on that size, ``max(min_threshold, self.thresh)`` (bool of a 0-d tensor comparison) and the
boolean-mask assignments ``valid_seg_weight[...] = 1.`` / ``seg_weight[valid_mask] = ...``.

HAND: invalid pixels get +inf before a sort over all pixels, so the first ``n_valid`` sorted values
are the valid ones; the k-th is read with ``gather`` at ``clamp(min(batch_kept, n_valid - 1), 0)``,
``torch.where(n_valid > 0, ..., 0.0)`` replaces the numel test and ``clamp(min=thresh)`` the
Python max (same float32 threshold); the weight is ``(valid_mask & (seg_prob < threshold))``.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F


class BasePixelSampler:
    """mmseg: `class BasePixelSampler(metaclass=ABCMeta)`, not an nn.Module."""


class OHEMPixelSampler(BasePixelSampler):
    def __init__(self, context, thresh=None, min_kept=100000):
        super().__init__()
        self.context = context
        assert min_kept > 1
        self.thresh = thresh
        self.min_kept = min_kept

    def sample(self, seg_logit, seg_label):
        with torch.no_grad():
            assert seg_logit.shape[2:] == seg_label.shape[2:]
            assert seg_label.shape[1] == 1
            seg_label = seg_label.squeeze(1).long()
            batch_kept = self.min_kept * seg_label.size(0)
            valid_mask = seg_label != self.context.ignore_index
            seg_weight = seg_logit.new_zeros(size=seg_label.size())
            valid_seg_weight = seg_weight[valid_mask]
            if self.thresh is not None:
                seg_prob = F.softmax(seg_logit, dim=1)

                tmp_seg_label = seg_label.clone().unsqueeze(1)
                tmp_seg_label[tmp_seg_label == self.context.ignore_index] = 0
                seg_prob = seg_prob.gather(1, tmp_seg_label).squeeze(1)
                sort_prob, sort_indices = seg_prob[valid_mask].sort()

                if sort_prob.numel() > 0:
                    min_threshold = sort_prob[min(batch_kept,
                                                  sort_prob.numel() - 1)]
                else:
                    min_threshold = 0.0
                threshold = max(min_threshold, self.thresh)
                valid_seg_weight[seg_prob[valid_mask] < threshold] = 1.
            seg_weight[valid_mask] = valid_seg_weight

            return seg_weight


class DecodeHead(nn.Module):
    def __init__(self, in_channels=4, num_classes=3, ignore_index=255):
        super().__init__()
        self.ignore_index = ignore_index
        self.conv_seg = nn.Conv2d(in_channels, num_classes, kernel_size=1)
        self.sampler = OHEMPixelSampler(context=self, thresh=0.7, min_kept=6)

    def forward(self, feat, seg_label):
        seg_logits = self.conv_seg(feat)
        seg_weight = self.sampler.sample(seg_logits, seg_label)
        label = seg_label.squeeze(1)
        loss = F.cross_entropy(seg_logits, label, reduction="none", ignore_index=self.ignore_index)
        loss = (loss * seg_weight.float()).mean()
        return loss, seg_weight


def make():
    torch.manual_seed(0)
    return DecodeHead()


def inputs():
    g = torch.Generator().manual_seed(0)

    def lab(n, h, w, p_ignore):
        y = torch.randint(0, 3, (n, 1, h, w), generator=g)
        y[torch.rand(n, 1, h, w, generator=g) < p_ignore] = 255
        return y

    return [
        (torch.randn(2, 4, 5, 5, generator=g), lab(2, 5, 5, 0.1)),
        (torch.randn(1, 4, 6, 4, generator=g), lab(1, 6, 4, 0.0)),
        (torch.randn(2, 4, 4, 4, generator=g) * 20, lab(2, 4, 4, 0.2)),   # confident: threshold above 0.7
        (torch.randn(1, 4, 3, 3, generator=g), torch.full((1, 1, 3, 3), 255)),  # no valid pixel
        (torch.randn(1, 4, 3, 3, generator=g) * 10, lab(1, 3, 3, 0.6)),   # fewer valid than batch_kept
        (torch.randn(3, 4, 2, 5, generator=g), lab(3, 2, 5, 0.3)),
        (torch.randn(2, 4, 6, 6, generator=g) * 3, lab(2, 6, 6, 0.0)),
        (torch.randn(1, 4, 4, 4, generator=g) * 50, lab(1, 4, 4, 0.0)),
    ]


KIND = "dynamic-shape+branch"
GRAD = True
