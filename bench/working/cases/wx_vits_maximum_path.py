"""VITS monotonic alignment search (MAS): the training-time alignment between text and latent frames in
SynthesizerTrn.forward, computed from the negative cross-entropy and handed to the Cython DP.

Source: https://github.com/jaywalnut310/vits/blob/main/monotonic_align/__init__.py
        https://github.com/jaywalnut310/vits/blob/main/models.py (SynthesizerTrn.forward, the neg_cent block)
        https://github.com/jaywalnut310/vits/blob/main/monotonic_align/core.pyx (maximum_path_each/maximum_path_c)
Breaks: `neg_cent.data.cpu().numpy()` and `mask.sum(1)[:, 0].data.cpu().numpy()` (tensor -> numpy), then
the DP runs on numpy arrays (here a pure-Python port of the Cython core) and `torch.from_numpy(path)`.
HAND: none — the DP is a sequential per-sample dynamic program over data-dependent lengths t_y/t_x with a
data-dependent backtrack; a torch port would be a different algorithm (while_loop over both lengths with
gather-based backtracking), not a rewrite of these statements, and float32 ties would need re-checking.
"""
import math

import numpy as np
import torch

KIND = "tensor->numpy DP"


def maximum_path_each(path, value, t_y, t_x, max_neg_val=-1e9):
    index = t_x - 1
    for y in range(t_y):
        for x in range(max(0, t_x + y - t_y), min(t_x, y + 1)):
            if x == y:
                v_cur = max_neg_val
            else:
                v_cur = value[y - 1, x]
            if x == 0:
                if y == 0:
                    v_prev = 0.
                else:
                    v_prev = max_neg_val
            else:
                v_prev = value[y - 1, x - 1]
            value[y, x] += max(v_prev, v_cur)
    for y in range(t_y - 1, -1, -1):
        path[y, index] = 1
        if index != 0 and (index == y or value[y - 1, index] < value[y - 1, index - 1]):
            index = index - 1


def maximum_path_c(paths, values, t_ys, t_xs):
    b = paths.shape[0]
    for i in range(b):
        maximum_path_each(paths[i], values[i], t_ys[i], t_xs[i])


def maximum_path(neg_cent, mask):
    """ Cython optimized version.
    neg_cent: [b, t_t, t_s]
    mask: [b, t_t, t_s]
    """
    device = neg_cent.device
    dtype = neg_cent.dtype
    neg_cent = neg_cent.data.cpu().numpy().astype(np.float32)
    path = np.zeros(neg_cent.shape, dtype=np.int32)

    t_t_max = mask.sum(1)[:, 0].data.cpu().numpy().astype(np.int32)
    t_s_max = mask.sum(2)[:, 0].data.cpu().numpy().astype(np.int32)
    maximum_path_c(path, neg_cent, t_t_max, t_s_max)
    return torch.from_numpy(path).to(device=device, dtype=dtype)


def align(z_p, m_p, logs_p, x_mask, y_mask):
    with torch.no_grad():
        # negative cross-entropy
        s_p_sq_r = torch.exp(-2 * logs_p)  # [b, d, t]
        neg_cent1 = torch.sum(-0.5 * math.log(2 * math.pi) - logs_p, [1], keepdim=True)  # [b, 1, t_s]
        neg_cent2 = torch.matmul(-0.5 * (z_p ** 2).transpose(1, 2), s_p_sq_r)  # [b, t_t, d] x [b, d, t_s] = [b, t_t, t_s]
        neg_cent3 = torch.matmul(z_p.transpose(1, 2), (m_p * s_p_sq_r))  # [b, t_t, d] x [b, d, t_s] = [b, t_t, t_s]
        neg_cent4 = torch.sum(-0.5 * (m_p ** 2) * s_p_sq_r, [1], keepdim=True)  # [b, 1, t_s]
        neg_cent = neg_cent1 + neg_cent2 + neg_cent3 + neg_cent4

        attn_mask = torch.unsqueeze(x_mask, 2) * torch.unsqueeze(y_mask, -1)
        attn = maximum_path(neg_cent, attn_mask.squeeze(1)).unsqueeze(1).detach()

    w = attn.sum(2)
    # expand prior
    m_p = torch.matmul(attn.squeeze(1), m_p.transpose(1, 2)).transpose(1, 2)
    logs_p = torch.matmul(attn.squeeze(1), logs_p.transpose(1, 2)).transpose(1, 2)
    return attn, w, m_p, logs_p


def make():
    torch.manual_seed(0)
    return align


def _mask(lengths, t):
    return (torch.arange(t)[None, :] < torch.tensor(lengths)[:, None]).float().unsqueeze(1)


def inputs():
    g = torch.Generator().manual_seed(0)
    out = []
    d, t_s, t_t = 4, 5, 9
    for xl, yl in [([5, 5], [9, 9]), ([5, 3], [9, 7]), ([2, 4], [5, 9]), ([5, 1], [5, 3]),
                   ([3, 3], [3, 8]), ([4, 5], [8, 6]), ([1, 2], [9, 2]), ([5, 4], [6, 9])]:
        z_p = torch.randn(2, d, t_t, generator=g)
        m_p = torch.randn(2, d, t_s, generator=g)
        logs_p = torch.randn(2, d, t_s, generator=g) * 0.3
        out.append((z_p, m_p, logs_p, _mask(xl, t_s), _mask(yl, t_t)))
    return out
