"""DINO's `MultiCropWrapper.forward`: the global and local crops (different resolutions) are
grouped by `torch.unique_consecutive` over their widths, each group of equal-resolution crops is
concatenated and run through the backbone once, and the head runs on all features.

Source: https://github.com/facebookresearch/dino/blob/main/utils.py (`MultiCropWrapper`) and
https://github.com/facebookresearch/dino/blob/main/vision_transformer.py (`DINOHead`, reduced: a
2-layer MLP, L2 normalisation, a bias-free last layer without weight norm). The backbone is a tiny
conv net (conv, ReLU, global average pool) with the `fc` / `head` attributes the wrapper disables.
Crops of 8x8 ("global") and 4x4 / 6x6 ("local"), batch 1-2 per crop.

Breaks: `torch.unique_consecutive(torch.tensor([...]), return_counts=True)` (dynamic output shape)
and `for end_idx in idx_crops:` iterating a tensor whose elements slice the Python list of crops
(`x[start_idx: end_idx]` with 0-d tensors as slice bounds).

HAND: the group boundaries are computed from the (static) crop shapes in Python — the cumulative
run lengths of equal consecutive widths, exactly what `unique_consecutive` + `cumsum` produce — so
the slices use Python ints and every backbone call traces.
"""
import torch
from torch import nn

KIND = "unique-tensor-iter"
GRAD = True


class TinyBackbone(nn.Module):
    def __init__(self, embed_dim=6):
        super().__init__()
        self.conv = nn.Conv2d(3, embed_dim, 3, padding=1)
        self.fc = nn.Linear(embed_dim, 10)
        self.head = nn.Linear(embed_dim, 10)

    def forward(self, x):
        x = torch.relu(self.conv(x)).mean(dim=(-2, -1))
        return self.head(self.fc(x))


class DINOHead(nn.Module):
    def __init__(self, in_dim, out_dim, hidden_dim=8, bottleneck_dim=5):
        super().__init__()
        self.mlp = nn.Sequential(nn.Linear(in_dim, hidden_dim), nn.GELU(), nn.Linear(hidden_dim, bottleneck_dim))
        self.last_layer = nn.Linear(bottleneck_dim, out_dim, bias=False)

    def forward(self, x):
        x = self.mlp(x)
        x = nn.functional.normalize(x, dim=-1, p=2)
        x = self.last_layer(x)
        return x


class MultiCropWrapper(nn.Module):
    """
    Perform forward pass separately on each resolution input.
    The inputs corresponding to a single resolution are clubbed and single
    forward is run on the same resolution inputs. Hence we do several
    forward passes = number of different resolutions used. We then
    concatenate all the output features and run the head forward on these
    concatenated features.
    """
    def __init__(self, backbone, head):
        super(MultiCropWrapper, self).__init__()
        # disable layers dedicated to ImageNet labels classification
        backbone.fc, backbone.head = nn.Identity(), nn.Identity()
        self.backbone = backbone
        self.head = head

    def forward(self, x):
        # convert to list
        if not isinstance(x, list):
            x = [x]
        idx_crops = torch.cumsum(torch.unique_consecutive(
            torch.tensor([inp.shape[-1] for inp in x]),
            return_counts=True,
        )[1], 0)
        start_idx, output = 0, torch.empty(0).to(x[0].device)
        for end_idx in idx_crops:
            _out = self.backbone(torch.cat(x[start_idx: end_idx]))
            # The output is a tuple with XCiT model. See:
            # https://github.com/facebookresearch/xcit/blob/master/xcit.py#L404-L405
            if isinstance(_out, tuple):
                _out = _out[0]
            # accumulate outputs
            output = torch.cat((output, _out))
            start_idx = end_idx
        # Run the head forward on the concatenated features.
        return self.head(output)


def make():
    torch.manual_seed(0)
    return MultiCropWrapper(TinyBackbone(6), DINOHead(6, 7))


def _crops(g, b, sizes):
    return ([torch.randn(b, 3, s, s, generator=g) for s in sizes],)


def inputs():
    g = torch.Generator().manual_seed(11)
    return [
        _crops(g, 2, [8, 8, 4, 4, 4, 4]),     # 2 global + 4 local crops: two groups
        _crops(g, 2, [8, 8]),                 # teacher: global crops only, one group
        _crops(g, 1, [8, 8, 4, 4]),
        _crops(g, 2, [8]),                    # a single crop
        _crops(g, 1, [8, 8, 6, 6, 4, 4]),     # three resolutions
        _crops(g, 2, [8, 4, 8, 4]),           # not sorted: four groups
        _crops(g, 1, [4, 4, 4]),
        _crops(g, 2, [8, 8, 6, 4, 4]),
    ]
