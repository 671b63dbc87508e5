"""Hand rewrite of torchvision_multiscale_roi_align: math for the scales, torch.where over levels."""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F


def box_area(boxes):
    return (boxes[:, 2] - boxes[:, 0]) * (boxes[:, 3] - boxes[:, 1])


def roi_align(input, rois, output_size, spatial_scale, sampling_ratio):
    """Torch-only stand-in for torchvision.ops.roi_align: one bilinear sample per bin centre."""
    ph, pw = output_size
    batch_idx = rois[:, 0].long()
    x1, y1, x2, y2 = (rois[:, 1:] * spatial_scale).unbind(1)
    bin_w = (x2 - x1).clamp(min=1) / pw
    bin_h = (y2 - y1).clamp(min=1) / ph
    xs = x1[:, None] + (torch.arange(pw, dtype=rois.dtype) + 0.5) * bin_w[:, None]
    ys = y1[:, None] + (torch.arange(ph, dtype=rois.dtype) + 0.5) * bin_h[:, None]
    h, w = input.shape[-2:]
    gx = (xs + 0.5) / w * 2 - 1
    gy = (ys + 0.5) / h * 2 - 1
    grid = torch.stack(torch.broadcast_tensors(gx[:, None, :], gy[:, :, None]), dim=-1)
    return F.grid_sample(input[batch_idx], grid, align_corners=False)


class LevelMapper(object):
    def __init__(self, k_min, k_max, canonical_scale=224, canonical_level=4, eps=1e-6):
        self.k_min = k_min
        self.k_max = k_max
        self.s0 = canonical_scale
        self.lvl0 = canonical_level
        self.eps = eps

    def __call__(self, boxlists):
        # Compute level ids
        s = torch.sqrt(torch.cat([box_area(boxlist) for boxlist in boxlists]))

        # Eqn.(1) in FPN paper
        target_lvls = torch.floor(self.lvl0 + torch.log2(s / self.s0 + self.eps))
        target_lvls = torch.clamp(target_lvls, min=self.k_min, max=self.k_max)
        return target_lvls.to(torch.int64) - self.k_min


class MultiScaleRoIAlign(nn.Module):
    def __init__(self, featmap_names, output_size, sampling_ratio):
        super(MultiScaleRoIAlign, self).__init__()
        if isinstance(output_size, int):
            output_size = (output_size, output_size)
        self.featmap_names = featmap_names
        self.sampling_ratio = sampling_ratio
        self.output_size = tuple(output_size)
        self.scales = None
        self.map_levels = None

    def convert_to_roi_format(self, boxes):
        concat_boxes = torch.cat(boxes, dim=0)
        device, dtype = concat_boxes.device, concat_boxes.dtype
        ids = torch.cat(
            [
                torch.full((len(b), 1), i, dtype=dtype, device=device)
                for i, b in enumerate(boxes)
            ],
            dim=0,
        )
        rois = torch.cat([ids, concat_boxes], dim=1)
        return rois

    def infer_scale(self, feature, original_size):
        # assumption: the scale is of the form 2 ** (-k), with k integer
        size = feature.shape[-2:]
        possible_scales = []
        for s1, s2 in zip(size, original_size):
            approx_scale = float(s1) / s2
            scale = 2 ** float(round(math.log2(approx_scale)))
            possible_scales.append(scale)
        assert possible_scales[0] == possible_scales[1]
        return possible_scales[0]

    def setup_scales(self, features, image_shapes):
        original_input_shape = tuple(max(s) for s in zip(*image_shapes))
        scales = [self.infer_scale(feat, original_input_shape) for feat in features]
        # get the levels in the feature map by leveraging the fact that the network always
        # downsamples by a factor of 2 at each level.
        lvl_min = -math.log2(scales[0])
        lvl_max = -math.log2(scales[-1])
        self.scales = scales
        self.map_levels = LevelMapper(lvl_min, lvl_max)

    def forward(self, x, boxes, image_shapes):
        x = [v for k, v in x.items() if k in self.featmap_names]
        num_levels = len(x)
        rois = self.convert_to_roi_format(boxes)
        if self.scales is None:
            self.setup_scales(x, image_shapes)

        if num_levels == 1:
            return roi_align(
                x[0], rois,
                output_size=self.output_size,
                spatial_scale=self.scales[0],
                sampling_ratio=self.sampling_ratio
            )

        levels = self.map_levels(boxes)

        num_rois = len(rois)
        num_channels = x[0].shape[1]

        dtype, device = x[0].dtype, x[0].device
        result = torch.zeros(
            (num_rois, num_channels,) + self.output_size,
            dtype=dtype,
            device=device,
        )

        for level, (per_level_feature, scale) in enumerate(zip(x, self.scales)):
            pooled = roi_align(
                per_level_feature, rois,
                output_size=self.output_size,
                spatial_scale=scale, sampling_ratio=self.sampling_ratio
            )
            result = torch.where((levels == level)[:, None, None, None], pooled.to(result.dtype), result)

        return result


class BoxHead(nn.Module):
    def __init__(self):
        super().__init__()
        self.box_roi_pool = MultiScaleRoIAlign(["feat1", "feat2"], 2, 2)
        self.fc = nn.Linear(2 * 2 * 2, 5)

    def forward(self, features, proposals, image_shapes):
        pooled = self.box_roi_pool(features, proposals, image_shapes)
        return self.fc(pooled.flatten(1))


def make():
    torch.manual_seed(0)
    return BoxHead()


def _boxes(n, g, lo=8.0, hi=250.0):
    xy = torch.rand(n, 2, generator=g) * 120
    wh = lo + torch.rand(n, 2, generator=g) * (hi - lo - 120)
    return torch.cat([xy, (xy + wh).clamp(max=255)], dim=1)


def inputs():
    g = torch.Generator().manual_seed(0)
    out = []
    for b, counts in [(1, [3]), (2, [2, 4]), (1, [5]), (2, [1, 1]), (1, [6]), (2, [3, 2]), (1, [2]), (2, [4, 4])]:
        feats = {"feat1": torch.randn(b, 2, 64, 64, generator=g), "feat2": torch.randn(b, 2, 32, 32, generator=g)}
        boxes = [_boxes(c, g) for c in counts]
        out.append((feats, boxes, [(256, 256)] * b))
    # only small boxes (all on the first level), only large boxes (all on the second)
    out.append(({"feat1": torch.randn(1, 2, 64, 64, generator=g), "feat2": torch.randn(1, 2, 32, 32, generator=g)},
                [torch.tensor([[0.0, 0.0, 20.0, 30.0], [50.0, 60.0, 70.0, 64.0]])], [(256, 256)]))
    out.append(({"feat1": torch.randn(1, 2, 64, 64, generator=g), "feat2": torch.randn(1, 2, 32, 32, generator=g)},
                [torch.tensor([[0.0, 0.0, 250.0, 240.0], [10.0, 5.0, 200.0, 255.0]])], [(256, 256)]))
    return out


KIND = "item+dynamic-shape"
GRAD = True
