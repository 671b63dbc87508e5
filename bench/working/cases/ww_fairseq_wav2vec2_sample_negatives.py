"""fairseq Wav2Vec2Model pre-training head: sample_negatives + compute_preds, the contrastive
logits computed at the end of Wav2Vec2Model.forward (distractors drawn from the other masked
time steps of the same utterance; cross_sample_negatives=0 as in the released configs, so that
branch is not taken).

Source: https://github.com/facebookresearch/fairseq/blob/3d262bb25690e4eb2e7d3c1309b1e9c406ca4b99/fairseq/models/wav2vec/wav2vec2.py
        (Wav2Vec2Model.sample_negatives, compute_preds, and the tail of forward:
        `negs, _ = self.sample_negatives(y, y.size(1), padding_count=padding_count)`,
        `x = self.final_proj(x)`, `x = self.compute_preds(x, y, negs)`)
        https://github.com/facebookresearch/fairseq/blob/3d262bb25690e4eb2e7d3c1309b1e9c406ca4b99/fairseq/utils.py
        (buffered_arange, index_put, is_xla_tensor)
Kept as in the source; the quantizer is reduced to its output (y: quantized targets, so equal
codes give equal rows) and project_q / final_proj to single Linear layers.

Breaks: `buffered_arange` caches a tensor on the function object
(`buffered_arange.buf = torch.LongTensor()`, dynamo: "setattr() on unsupported type function"),
then `buf.resize_` / `torch.arange(max, out=buf)`; `neg_idxs[neg_idxs >= tszs] += 1` indexes
with a boolean mask (aten.nonzero: dynamic output shape); in
compute_preds `if is_xla_tensor(logits) or neg_is_pos.any():` branches on a tensor, and
`index_put` does `tensor[indices] = value` with a boolean mask.

HAND: buffered_arange(num) -> torch.arange(num) (same int64 values); the boolean-mask `+= 1`
becomes `+ (neg_idxs >= tszs).long()`; compute_preds always applies
`logits[1:] = logits[1:].masked_fill(neg_is_pos, float("-inf"))` (a no-op when no negative equals
its positive, with the same gradient as the masked assignment) and sets `self._inftensor` as the
source's first positive hit would. Same RNG draws (the torch.randint calls are unchanged).
"""

import torch
import torch.nn as nn


def buffered_arange(max, device="cpu"):
    if not hasattr(buffered_arange, "buf"):
        buffered_arange.buf = torch.LongTensor().to(device)
    if max > buffered_arange.buf.numel():
        buffered_arange.buf.resize_(max)
        torch.arange(max, out=buffered_arange.buf)
    return buffered_arange.buf[:max]


def is_xla_tensor(tensor):
    return torch.is_tensor(tensor) and tensor.device.type == "xla"


def index_put(tensor, indices, value):
    if is_xla_tensor(tensor):
        for _ in range(indices.dim(), tensor.dim()):
            indices = indices.unsqueeze(-1)
        if indices.size(-1) < tensor.size(-1):
            indices = indices.expand_as(tensor)
        tensor = torch.mul(tensor, ~indices) + torch.mul(value, indices)
    else:
        tensor[indices] = value
    return tensor


class Wav2Vec2ContrastiveHead(nn.Module):
    def __init__(self, encoder_embed_dim=12, codebook_dim=8, final_dim=6, n_negatives=4, cross_sample_negatives=0, logit_temp=0.1):
        super().__init__()
        self.n_negatives = n_negatives
        self.cross_sample_negatives = cross_sample_negatives
        self.logit_temp = logit_temp
        self.project_q = nn.Linear(codebook_dim, final_dim)
        self.final_proj = nn.Linear(encoder_embed_dim, final_dim)

    def sample_negatives(self, y, num, padding_count=None):

        if self.n_negatives == 0 and self.cross_sample_negatives == 0:
            return y.new(0)

        bsz, tsz, fsz = y.shape
        y = y.view(-1, fsz)  # BTC => (BxT)C

        # FIXME: what happens if padding_count is specified?
        cross_high = tsz * bsz
        high = tsz - (padding_count or 0)
        with torch.no_grad():
            assert high > 1, f"{bsz,tsz,fsz}"

            if self.n_negatives > 0:
                tszs = (
                    buffered_arange(num)
                    .unsqueeze(-1)
                    .expand(-1, self.n_negatives)
                    .flatten()
                )

                neg_idxs = torch.randint(
                    low=0, high=high - 1, size=(bsz, self.n_negatives * num)
                )
                neg_idxs[neg_idxs >= tszs] += 1

            if self.cross_sample_negatives > 0:
                tszs = (
                    buffered_arange(num)
                    .unsqueeze(-1)
                    .expand(-1, self.cross_sample_negatives)
                    .flatten()
                )

                cross_neg_idxs = torch.randint(
                    low=0,
                    high=cross_high - 1,
                    size=(bsz, self.cross_sample_negatives * num),
                )
                cross_neg_idxs[cross_neg_idxs >= tszs] += 1

        if self.n_negatives > 0:
            neg_idxs = neg_idxs + (torch.arange(bsz).unsqueeze(1) * high)
        else:
            neg_idxs = cross_neg_idxs

        if self.cross_sample_negatives > 0 and self.n_negatives > 0:
            neg_idxs = torch.cat([neg_idxs, cross_neg_idxs], dim=1)

        negs = y[neg_idxs.view(-1)]
        negs = negs.view(
            bsz, num, self.n_negatives + self.cross_sample_negatives, fsz
        ).permute(
            2, 0, 1, 3
        )  # to NxBxTxC
        return negs, neg_idxs

    def compute_preds(self, x, y, negatives):

        neg_is_pos = (y == negatives).all(-1)
        y = y.unsqueeze(0)
        targets = torch.cat([y, negatives], dim=0)

        logits = torch.cosine_similarity(x.float(), targets.float(), dim=-1)
        logits = logits / self.logit_temp
        logits = logits.type_as(x)

        if is_xla_tensor(logits) or neg_is_pos.any():
            if not hasattr(self, "_inftensor"):
                fillval = -float(2**30)
                self._inftensor = (
                    torch.tensor(fillval).to(x.device)
                    if is_xla_tensor(logits)
                    else float("-inf")
                )
            logits[1:] = index_put(logits[1:], neg_is_pos, self._inftensor)

        return logits

    def forward(self, x, y, padding_count=None):
        # x: encoder output at the masked steps (B, T, C); y: quantized targets (B, T, codebook_dim)
        y = self.project_q(y)
        negs, _ = self.sample_negatives(
            y,
            y.size(1),
            padding_count=padding_count,
        )
        x = self.final_proj(x)
        x = self.compute_preds(x, y, negs)
        return x


KIND = "function-attribute cache + bool-mask index + .any() branch"
GRAD = True


def make():
    torch.manual_seed(0)
    return Wav2Vec2ContrastiveHead()


def _batch(g, b, t, n_codes=None):
    x = torch.randn(b, t, 12, generator=g)
    if n_codes is None:  # all targets distinct
        return x, torch.randn(b, t, 8, generator=g)
    codebook = torch.randn(n_codes, 8, generator=g)
    codes = torch.randint(0, n_codes, (b, t), generator=g)
    return x, codebook[codes]


def inputs():
    g = torch.Generator().manual_seed(0)
    return [
        _batch(g, 1, 6),  # distinct targets, one utterance: no negative equals its positive
        _batch(g, 2, 8, 3),  # few codes: many negatives equal the positive
        _batch(g, 1, 5, 2),
        _batch(g, 3, 4, 100),
        _batch(g, 1, 7),
        (*_batch(g, 2, 10, 4), 2),  # padding_count
        _batch(g, 2, 12, 1000),  # longer: buffered_arange grows its buffer
        _batch(g, 2, 3, 1),  # one code: every negative is a positive
        (*_batch(g, 1, 9, 5), 1),
    ]


def failing_inputs():
    g = torch.Generator().manual_seed(1)
    return [(*_batch(g, 2, 3, 4), 2)]  # high = 1: assert high > 1
