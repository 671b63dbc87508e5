"""Autoformer's Auto-Correlation layer in training mode: the time-delay aggregation rolls the values
by each of the top-k delays, read out of a tensor with `int(index[i])`, and gathers the weights with
`mean_value[:, index[i]]`.

Source: https://github.com/thuml/Autoformer/blob/main/layers/AutoCorrelation.py
(`AutoCorrelation.time_delay_agg_training`, `AutoCorrelation.forward`, `AutoCorrelationLayer`).

Breaks: `int(index[i])` (a Python int read from a tensor, used as the shift of `torch.roll`) and
`mean_value[:, index[i]]` (indexing with a 0-d tensor computed by `topk`) inside the Python loops
over `top_k`.

HAND: the weights are `mean_value.index_select(1, index)` and each rolled pattern is a `gather`
with the index `(arange(length) + index[i]) % length` -- `roll(v, -d)[t] == v[(t + d) % length]`,
the same trick the file's own `time_delay_agg_inference` uses; values and gradients are the same.
"""
import math

import torch
import torch.nn as nn


class AutoCorrelation(nn.Module):
    def __init__(self, mask_flag=True, factor=1, scale=None, attention_dropout=0.1, output_attention=False):
        super(AutoCorrelation, self).__init__()
        self.factor = factor
        self.scale = scale
        self.mask_flag = mask_flag
        self.output_attention = output_attention
        self.dropout = nn.Dropout(attention_dropout)

    def time_delay_agg_training(self, values, corr):
        """
        SpeedUp version of Autocorrelation (a batch-normalization style design)
        This is for the training phase.
        """
        head = values.shape[1]
        channel = values.shape[2]
        length = values.shape[3]
        # find top k
        top_k = int(self.factor * math.log(length))
        mean_value = torch.mean(torch.mean(corr, dim=1), dim=1)
        index = torch.topk(torch.mean(mean_value, dim=0), top_k, dim=-1)[1]
        weights = torch.stack([mean_value[:, index[i]] for i in range(top_k)], dim=-1)
        # update corr
        tmp_corr = torch.softmax(weights, dim=-1)
        # aggregation
        tmp_values = values
        delays_agg = torch.zeros_like(values).float()
        for i in range(top_k):
            pattern = torch.roll(tmp_values, -int(index[i]), -1)
            delays_agg = delays_agg + pattern * \
                         (tmp_corr[:, i].unsqueeze(1).unsqueeze(1).unsqueeze(1).repeat(1, head, channel, length))
        return delays_agg

    def forward(self, queries, keys, values, attn_mask):
        B, L, H, E = queries.shape
        _, S, _, D = values.shape
        if L > S:
            zeros = torch.zeros_like(queries[:, :(L - S), :]).float()
            values = torch.cat([values, zeros], dim=1)
            keys = torch.cat([keys, zeros], dim=1)
        else:
            values = values[:, :L, :, :]
            keys = keys[:, :L, :, :]

        # period-based dependencies
        q_fft = torch.fft.rfft(queries.permute(0, 2, 3, 1).contiguous(), dim=-1)
        k_fft = torch.fft.rfft(keys.permute(0, 2, 3, 1).contiguous(), dim=-1)
        res = q_fft * torch.conj(k_fft)
        corr = torch.fft.irfft(res, n=L, dim=-1)

        # time delay agg
        V = self.time_delay_agg_training(values.permute(0, 2, 3, 1).contiguous(), corr).permute(0, 3, 1, 2)

        if self.output_attention:
            return (V.contiguous(), corr.permute(0, 3, 1, 2))
        else:
            return (V.contiguous(), None)


class AutoCorrelationLayer(nn.Module):
    def __init__(self, correlation, d_model, n_heads, d_keys=None, d_values=None):
        super(AutoCorrelationLayer, self).__init__()

        d_keys = d_keys or (d_model // n_heads)
        d_values = d_values or (d_model // n_heads)

        self.inner_correlation = correlation
        self.query_projection = nn.Linear(d_model, d_keys * n_heads)
        self.key_projection = nn.Linear(d_model, d_keys * n_heads)
        self.value_projection = nn.Linear(d_model, d_values * n_heads)
        self.out_projection = nn.Linear(d_values * n_heads, d_model)
        self.n_heads = n_heads

    def forward(self, queries, keys, values, attn_mask):
        B, L, _ = queries.shape
        _, S, _ = keys.shape
        H = self.n_heads

        queries = self.query_projection(queries).view(B, L, H, -1)
        keys = self.key_projection(keys).view(B, S, H, -1)
        values = self.value_projection(values).view(B, S, H, -1)

        out, attn = self.inner_correlation(queries, keys, values, attn_mask)
        out = out.view(B, L, -1)

        return self.out_projection(out), attn


def make():
    torch.manual_seed(0)
    layer = AutoCorrelationLayer(AutoCorrelation(False, factor=1, attention_dropout=0.0), d_model=8, n_heads=2)
    layer.train()
    return layer


def inputs():
    out = []
    g = torch.Generator().manual_seed(1)
    for B, L, S in [(2, 8, 8), (1, 8, 8), (2, 12, 12), (3, 8, 6), (2, 16, 16), (1, 12, 10), (2, 8, 12), (2, 24, 24), (1, 20, 20)]:
        x = torch.randn(B, L, 8, generator=g)
        kv = torch.randn(B, S, 8, generator=g)
        if L == 8 and B == 1:
            # a strongly periodic series (period 3), so one delay dominates
            t = torch.arange(L, dtype=torch.float32)
            x = torch.sin(2 * math.pi * t / 3).view(1, L, 1).expand(B, L, 8).clone()
            kv = x.clone()
        out.append((x, kv, kv.clone(), None))
    return out


KIND = "int-loop"
GRAD = True
