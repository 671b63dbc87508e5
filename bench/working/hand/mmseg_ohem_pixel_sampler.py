"""Hand rewrite of mmseg_ohem_pixel_sampler: sort with +inf for invalid pixels, gather, where, clamp."""
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
            if self.thresh is not None:
                seg_prob = F.softmax(seg_logit, dim=1)

                tmp_seg_label = torch.where(valid_mask, seg_label, 0).unsqueeze(1)
                seg_prob = seg_prob.gather(1, tmp_seg_label).squeeze(1)
                n_valid = valid_mask.sum()
                keyed = torch.where(valid_mask, seg_prob, torch.inf).flatten()
                sort_prob = keyed.sort().values
                k = torch.clamp(torch.clamp(n_valid - 1, max=batch_kept), min=0)
                kth = sort_prob.gather(0, k.reshape(1)).squeeze(0)
                min_threshold = torch.where(n_valid > 0, kth, torch.zeros_like(kth))
                threshold = torch.clamp(min_threshold, min=self.thresh)
                seg_weight = (valid_mask & (seg_prob < threshold)).to(seg_logit.dtype)
            else:
                seg_weight = seg_logit.new_zeros(size=seg_label.size())

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
