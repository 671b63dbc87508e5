"""AudioCraft/EnCodec residual vector quantizer with quantizer dropout: at train time a random
number of codebooks n_q in [1, max] is drawn for the step, and only that many residual stages run.

Source: https://github.com/facebookresearch/audiocraft/blob/main/audiocraft/quantization/vq.py
        (ResidualVectorQuantizer.forward) and
        https://github.com/facebookresearch/audiocraft/blob/main/audiocraft/quantization/core_vq.py
        (ResidualVectorQuantization, VectorQuantization, EuclideanCodebook).
Reduced: no k-means init (codebooks start from kaiming-uniform, `inited` is True), no dead-code
expiry (threshold 0), no einops (`rearrange` written with transpose/reshape), QuantizedResult is a
dataclass; tiny dimension/codebook sizes.

Breaks: `n_q = int(torch.randint(1, self.n_q + 1, (1,)).item())` (Tensor.item()); the number of
residual stages run, and so the number of codebooks in `codes`, depends on it. Also
`loss = torch.tensor([0.0], device=device, requires_grad=self.training)` in VectorQuantization
(a new leaf that requires grad inside the compiled region).

HAND: none — `codes` has shape [B, n_q, T] with n_q drawn at run time, a data-dependent output
shape, and the bandwidth returned is n_q times the per-codebook rate; the zero loss must stay a
leaf that requires grad in training (the penalty's `requires_grad` does not depend on x).
"""
import math
import typing as tp
from dataclasses import dataclass, field

import torch
import torch.nn.functional as F
from torch import nn


@dataclass
class QuantizedResult:
    x: torch.Tensor
    codes: torch.Tensor
    bandwidth: torch.Tensor  # bandwidth in kb/s used, per batch item.
    penalty: tp.Optional[torch.Tensor] = None
    metrics: dict = field(default_factory=dict)


def ema_inplace(moving_avg, new, decay: float):
    moving_avg.data.mul_(decay).add_(new, alpha=(1 - decay))


def laplace_smoothing(x, n_categories: int, epsilon: float = 1e-5):
    return (x + epsilon) / (x.sum() + n_categories * epsilon)


def uniform_init(*shape: int):
    t = torch.empty(shape)
    nn.init.kaiming_uniform_(t)
    return t


class EuclideanCodebook(nn.Module):
    def __init__(self, dim: int, codebook_size: int, decay: float = 0.8, epsilon: float = 1e-5):
        super().__init__()
        self.decay = decay
        embed = uniform_init(codebook_size, dim)
        self.codebook_size = codebook_size
        self.epsilon = epsilon
        self.register_buffer("cluster_size", torch.zeros(codebook_size))
        self.register_buffer("embed", embed)
        self.register_buffer("embed_avg", embed.clone())

    def preprocess(self, x):
        return x.reshape(-1, x.shape[-1])

    def quantize(self, x):
        embed = self.embed.t()
        dist = -(
            x.pow(2).sum(1, keepdim=True)
            - 2 * x @ embed
            + embed.pow(2).sum(0, keepdim=True)
        )
        embed_ind = dist.max(dim=-1).indices
        return embed_ind

    def postprocess_emb(self, embed_ind, shape):
        return embed_ind.view(*shape[:-1])

    def dequantize(self, embed_ind):
        quantize = F.embedding(embed_ind, self.embed)
        return quantize

    def forward(self, x):
        shape, dtype = x.shape, x.dtype
        x = self.preprocess(x)

        embed_ind = self.quantize(x)
        embed_onehot = F.one_hot(embed_ind, self.codebook_size).type(dtype)
        embed_ind = self.postprocess_emb(embed_ind, shape)
        quantize = self.dequantize(embed_ind)

        if self.training:
            ema_inplace(self.cluster_size, embed_onehot.sum(0), self.decay)
            embed_sum = x.t() @ embed_onehot
            ema_inplace(self.embed_avg, embed_sum.t(), self.decay)
            cluster_size = (
                laplace_smoothing(self.cluster_size, self.codebook_size, self.epsilon)
                * self.cluster_size.sum()
            )
            embed_normalized = self.embed_avg / cluster_size.unsqueeze(1)
            self.embed.data.copy_(embed_normalized)

        return quantize, embed_ind


class VectorQuantization(nn.Module):
    def __init__(self, dim: int, codebook_size: int, decay: float = 0.8, epsilon: float = 1e-5,
                 channels_last: bool = False, commitment_weight: float = 1.):
        super().__init__()
        self.project_in = nn.Identity()
        self.project_out = nn.Identity()
        self.epsilon = epsilon
        self.commitment_weight = commitment_weight
        self._codebook = EuclideanCodebook(dim=dim, codebook_size=codebook_size, decay=decay, epsilon=epsilon)
        self.codebook_size = codebook_size
        self.channels_last = channels_last

    def _preprocess(self, x):
        if not self.channels_last:
            x = x.transpose(1, 2)  # "b d n -> b n d"
        return x

    def _postprocess(self, quantize):
        if not self.channels_last:
            quantize = quantize.transpose(1, 2)  # "b n d -> b d n"
        return quantize

    def forward(self, x):
        device = x.device
        x = self._preprocess(x)

        x = self.project_in(x)
        quantize, embed_ind = self._codebook(x)

        if self.training:
            quantize = x + (quantize - x).detach()

        loss = torch.tensor([0.0], device=device, requires_grad=self.training)

        if self.training:
            if self.commitment_weight > 0:
                commit_loss = F.mse_loss(quantize.detach(), x)
                loss = loss + commit_loss * self.commitment_weight

        quantize = self.project_out(quantize)
        quantize = self._postprocess(quantize)

        return quantize, embed_ind, loss


class ResidualVectorQuantization(nn.Module):
    """Residual vector quantization implementation.

    Follows Algorithm 1. in https://arxiv.org/pdf/2107.03312.pdf
    """
    def __init__(self, *, num_quantizers, **kwargs):
        super().__init__()
        self.layers = nn.ModuleList(
            [VectorQuantization(**kwargs) for _ in range(num_quantizers)]
        )

    def forward(self, x, n_q: tp.Optional[int] = None):
        quantized_out = 0.0
        residual = x

        all_losses = []
        all_indices = []

        n_q = n_q or len(self.layers)

        for i, layer in enumerate(self.layers[:n_q]):
            quantized, indices, loss = layer(residual)
            residual = residual - quantized
            quantized_out = quantized_out + quantized
            all_indices.append(indices)
            all_losses.append(loss)

        out_losses, out_indices = map(torch.stack, (all_losses, all_indices))
        return quantized_out, out_indices, out_losses


class ResidualVectorQuantizer(nn.Module):
    def __init__(self, dimension: int = 8, n_q: int = 4, q_dropout: bool = False, bins: int = 16,
                 decay: float = 0.99):
        super().__init__()
        self.max_n_q = n_q
        self.n_q = n_q
        self.q_dropout = q_dropout
        self.dimension = dimension
        self.bins = bins
        self.decay = decay
        self.vq = ResidualVectorQuantization(
            dim=self.dimension,
            codebook_size=self.bins,
            num_quantizers=self.n_q,
            decay=self.decay,
            channels_last=False,
        )

    def forward(self, x: torch.Tensor, frame_rate: int):
        n_q = self.n_q
        if self.training and self.q_dropout:
            n_q = int(torch.randint(1, self.n_q + 1, (1,)).item())
        bw_per_q = math.log2(self.bins) * frame_rate / 1000
        quantized, codes, commit_loss = self.vq(x, n_q=n_q)
        codes = codes.transpose(0, 1)
        # codes is [B, K, T], with T frames, K nb of codebooks.
        bw = torch.tensor(n_q * bw_per_q).to(x)
        return QuantizedResult(quantized, codes, bw, penalty=torch.mean(commit_loss))


def make():
    torch.manual_seed(0)
    model = ResidualVectorQuantizer(dimension=8, n_q=4, q_dropout=True, bins=16)
    model.train()
    return model


def inputs():
    g = torch.Generator().manual_seed(0)
    out = []
    for i, (b, t, fr) in enumerate([(1, 5, 50), (2, 4, 75), (2, 7, 50), (3, 3, 25),
                                    (1, 9, 50), (2, 6, 150), (4, 2, 50), (1, 1, 50)]):
        out.append((torch.randn(b, 8, t, generator=g) * (1 + i % 3), fr))
    return out


KIND = "item"
GRAD = True
