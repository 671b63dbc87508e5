"""flash-attention's fused dropout + residual + LayerNorm (`flash_attn.ops.layer_norm`): before calling
the CUDA kernel, every operand goes through `maybe_align`, which clones a tensor whose storage address
is not a multiple of 16 bytes (`x.data_ptr() % alignment_in_bytes`).

Source: https://github.com/pytorch/pytorch/issues/128071 ("[user empathy day 2][based] torch.compile
issues": graph break 1 is `x.data_ptr() % ...` in flash_attn/ops/layer_norm.py:13, `maybe_align`)
and https://github.com/Dao-AILab/flash-attention/blob/main/flash_attn/ops/layer_norm.py
(`maybe_align`, `DropoutAddLayerNormFn.forward`). The CUDA kernel `dropout_add_ln_fwd` is replaced by
flash-attention's own reference computation (residual add, optional residual_in_fp32, LayerNorm,
prenorm returns the residual too); dropout is 0 (inference).

Breaks: `x.data_ptr() % alignment_in_bytes == 0` (data_ptr is not traceable), once per operand.

HAND: `maybe_align` returns its argument: the clone it makes has the same values, and every later use
only reads values (alignment only matters to the CUDA kernel, which is not on this path).
"""
import torch
import torch.nn.functional as F
from torch import nn

KIND = "data_ptr"
GRAD = True


def maybe_align(x, alignment_in_bytes=16):
    """Assume that x already has last dim divisible by alignment_in_bytes"""
    # TD [2023-07-04] I'm not 100% sure that clone will align the memory
    # https://discuss.pytorch.org/t/how-to-ensure-that-tensor-data-ptr-is-aligned-to-16-bytes/183440
    return x if x.data_ptr() % alignment_in_bytes == 0 else x.clone()


def _dropout_add_layer_norm_forward(x0, residual, gamma, beta, epsilon, residual_in_fp32=False):
    """Reference path for the CUDA kernel (dropout_p = 0)."""
    hidden_size = gamma.numel()
    x0mat = x0.view((-1, hidden_size))
    residualmat = residual.view((-1, hidden_size)) if residual is not None else None
    x = x0mat if residualmat is None else x0mat + residualmat
    if residual_in_fp32:
        x = x.float()
    z = F.layer_norm(x.to(gamma.dtype), (hidden_size,), gamma, beta, epsilon)
    return z, x


class DropoutAddLayerNorm(nn.Module):
    def __init__(self, hidden_size, prenorm=False, eps=1e-5, residual_in_fp32=False):
        super().__init__()
        self.prenorm = prenorm
        self.eps = eps
        self.residual_in_fp32 = residual_in_fp32
        self.weight = nn.Parameter(torch.ones(hidden_size) + 0.1 * torch.randn(hidden_size))
        self.bias = nn.Parameter(0.1 * torch.randn(hidden_size))

    def forward(self, x0, residual=None):
        x0 = maybe_align(x0.contiguous(), 16)
        residual = maybe_align(residual.contiguous(), 16) if residual is not None else None
        gamma = maybe_align(self.weight.contiguous(), 16)
        beta = maybe_align(self.bias.contiguous(), 16) if self.bias is not None else None
        zmat, xmat = _dropout_add_layer_norm_forward(x0, residual, gamma, beta, self.eps, self.residual_in_fp32)
        x0_shape = x0.shape
        z = zmat.view(x0_shape)
        if not self.prenorm:
            return z
        return z, xmat.view(x0_shape)


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.norm = DropoutAddLayerNorm(8)
        self.prenorm = DropoutAddLayerNorm(8, prenorm=True, residual_in_fp32=True)

    def forward(self, x, residual=None, use_prenorm=False):
        if use_prenorm:
            return self.prenorm(x, residual)
        return self.norm(x, residual)


def make():
    torch.manual_seed(0)
    return Block()


def _offset(shape, elems):
    # a view whose storage address is `elems` floats past an aligned allocation
    n = 1
    for s in shape:
        n *= s
    return torch.randn(n + elems)[elems:].view(shape)


def inputs():
    torch.manual_seed(0)
    return [
        (torch.randn(2, 3, 8),),                                   # aligned, no residual
        (_offset((2, 3, 8), 1),),                                  # misaligned: clone
        (torch.randn(2, 3, 8), torch.randn(2, 3, 8)),              # aligned residual
        (_offset((1, 4, 8), 2), _offset((1, 4, 8), 4)),            # misaligned x0, aligned-offset residual
        (torch.randn(3, 8), _offset((3, 8), 3), True),             # prenorm, misaligned residual
        (_offset((2, 2, 8), 1), torch.randn(2, 2, 8), True),       # prenorm, misaligned x0
        (torch.randn(4, 8).t().t(), None, False),                  # contiguous view
        (torch.randn(8, 4).t(), torch.randn(4, 8)),                # non-contiguous: .contiguous() copies
    ]
