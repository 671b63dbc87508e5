"""timm.layers.pos_embed.resample_abs_pos_embed (resizes a ViT's absolute position embedding to a
new patch grid, logging the resize), as called from VisionTransformer._pos_embed with
dynamic_img_size=True.

Source: https://github.com/huggingface/pytorch-image-models/blob/main/timm/layers/pos_embed.py
(`resample_abs_pos_embed`; the model around it reduced to a patch-embedding conv, the position
embedding and a class token, as in timm/models/vision_transformer.py `_pos_embed`, with the
`verbose` flag switched on to log the resize).

Breaks: `_logger.info(f'Resized position embedding: {old_size} to {new_size}.')` — a Logger
method called in the traced code.

HAND: the log call moves into a `torch.library.custom_op` with an ORDERED effect that emits the
same record from the same logger at run time (old and new sizes passed as ints); the op returns a
0-d zero token that is added to the embedding, so the log is a data dependency under inductor.
Note: under inductor with dynamic shapes (recompiles without reset) the ORIGINAL fails too
(`isIntList() INTERNAL ASSERT` in the antialiased bicubic interpolate), so the hand rewrite's
inductor run fails on the inputs that trigger a dynamic recompile; not caused by the rewrite.
"""
import logging
import math
from typing import List, Optional

import torch
import torch.nn as nn
import torch.nn.functional as F

KIND = "logging"

_logger = logging.getLogger(__name__)


def resample_abs_pos_embed(
    posemb: torch.Tensor,
    new_size: List[int],
    old_size: Optional[List[int]] = None,
    num_prefix_tokens: int = 1,
    interpolation: str = 'bicubic',
    antialias: bool = True,
    verbose: bool = False,
):
    # sort out sizes, assume square if old size not provided
    num_pos_tokens = posemb.shape[1]
    num_new_tokens = new_size[0] * new_size[1] + num_prefix_tokens
    if num_new_tokens == num_pos_tokens and new_size[0] == new_size[1]:
        return posemb

    if old_size is None:
        hw = int(math.sqrt(num_pos_tokens - num_prefix_tokens))
        old_size = hw, hw

    if num_prefix_tokens:
        posemb_prefix, posemb = posemb[:, :num_prefix_tokens], posemb[:, num_prefix_tokens:]
    else:
        posemb_prefix, posemb = None, posemb

    # do the interpolation
    embed_dim = posemb.shape[-1]
    orig_dtype = posemb.dtype
    posemb = posemb.float()  # interpolate needs float32
    posemb = posemb.reshape(1, old_size[0], old_size[1], -1).permute(0, 3, 1, 2)
    posemb = F.interpolate(posemb, size=new_size, mode=interpolation, antialias=antialias)
    posemb = posemb.permute(0, 2, 3, 1).reshape(1, -1, embed_dim)
    posemb = posemb.to(orig_dtype)

    # add back extra (class, etc) prefix tokens
    if posemb_prefix is not None:
        posemb = torch.cat([posemb_prefix, posemb], dim=1)

    if not torch.jit.is_scripting() and verbose:
        _logger.info(f'Resized position embedding: {old_size} to {new_size}.')

    return posemb


class TinyViTEmbed(nn.Module):
    def __init__(self, img_size=8, patch_size=2, embed_dim=6, verbose=True):
        super().__init__()
        self.grid_size = (img_size // patch_size, img_size // patch_size)
        self.proj = nn.Conv2d(3, embed_dim, patch_size, patch_size)
        self.cls_token = nn.Parameter(torch.randn(1, 1, embed_dim) * 0.02)
        self.pos_embed = nn.Parameter(torch.randn(1, 1 + self.grid_size[0] * self.grid_size[1], embed_dim) * 0.02)
        self.num_prefix_tokens = 1
        self.verbose = verbose

    def forward(self, x):
        x = self.proj(x).permute(0, 2, 3, 1)  # NHWC, as timm's PatchEmbed(output_fmt='NHWC')
        B, H, W, C = x.shape
        pos_embed = resample_abs_pos_embed(
            self.pos_embed,
            new_size=(H, W),
            old_size=self.grid_size,
            num_prefix_tokens=self.num_prefix_tokens,
            verbose=self.verbose,
        )
        x = x.view(B, -1, C)
        x = torch.cat([self.cls_token.expand(x.shape[0], -1, -1), x], dim=1)
        return x + pos_embed


def make():
    torch.manual_seed(0)
    return TinyViTEmbed()


def inputs():
    torch.manual_seed(0)
    return [
        (torch.randn(2, 3, 12, 12),),   # 6x6 grid: resized and logged
        (torch.randn(1, 3, 8, 8),),     # native 4x4 grid: returned as is
        (torch.randn(2, 3, 8, 12),),    # 4x6
        (torch.randn(1, 3, 6, 6),),     # 3x3: shrink
        (torch.randn(3, 3, 8, 8),),
        (torch.randn(1, 3, 16, 4),),    # 8x2
        (torch.randn(2, 3, 10, 10),),
        (torch.randn(1, 3, 4, 8),),
    ]


GRAD = True
