"""nerf-pytorch volume rendering (render_rays + raw2outputs) for a tiny NeRF MLP, coarse samples only.

Source: https://github.com/yenchenlin/nerf-pytorch/blob/master/run_nerf.py (render_rays, raw2outputs)
        https://github.com/yenchenlin/nerf-pytorch/blob/master/run_nerf_helpers.py (NeRF MLP, reduced)
Breaks: the numerical-error check at the end of render_rays,
        `if (torch.isnan(ret[k]).any() or torch.isinf(ret[k]).any()) and DEBUG:` -- the `or` converts a
        0-d bool tensor to a Python bool (data-dependent branch), for every entry of `ret`, although the
        module-level DEBUG flag is False so nothing is ever printed.
        (perturb / raw_noise_std / hierarchical sampling keep their defaults 0 as in render at test time.)
HAND: test the constant flag first (`if DEBUG and (...)`): isnan/isinf/any have no side effects, so the
      short-circuit order does not change behaviour, and the tensor is never converted.
"""
import torch
import torch.nn.functional as F
from torch import nn

KIND = "tensor-bool in debug check"
GRAD = True

DEBUG = False


class NeRF(nn.Module):
    def __init__(self, D=3, W=16, input_ch=3, output_ch=4):
        super().__init__()
        self.pts_linears = nn.ModuleList([nn.Linear(input_ch, W)] + [nn.Linear(W, W) for _ in range(D - 1)])
        self.output_linear = nn.Linear(W, output_ch)

    def forward(self, x):
        h = x
        for l in self.pts_linears:
            h = F.relu(l(h))
        return self.output_linear(h)


def run_network(inputs, viewdirs, fn):
    inputs_flat = torch.reshape(inputs, [-1, inputs.shape[-1]])
    outputs_flat = fn(inputs_flat)
    return torch.reshape(outputs_flat, list(inputs.shape[:-1]) + [outputs_flat.shape[-1]])


def raw2outputs(raw, z_vals, rays_d, raw_noise_std=0, white_bkgd=False, pytest=False):
    raw2alpha = lambda raw, dists, act_fn=F.relu: 1. - torch.exp(-act_fn(raw) * dists)

    dists = z_vals[..., 1:] - z_vals[..., :-1]
    dists = torch.cat([dists, torch.Tensor([1e10]).expand(dists[..., :1].shape)], -1)  # [N_rays, N_samples]

    dists = dists * torch.norm(rays_d[..., None, :], dim=-1)

    rgb = torch.sigmoid(raw[..., :3])  # [N_rays, N_samples, 3]
    noise = 0.
    if raw_noise_std > 0.:
        noise = torch.randn(raw[..., 3].shape) * raw_noise_std

    alpha = raw2alpha(raw[..., 3] + noise, dists)  # [N_rays, N_samples]
    weights = alpha * torch.cumprod(torch.cat([torch.ones((alpha.shape[0], 1)), 1. - alpha + 1e-10], -1), -1)[:, :-1]
    rgb_map = torch.sum(weights[..., None] * rgb, -2)  # [N_rays, 3]

    depth_map = torch.sum(weights * z_vals, -1)
    disp_map = 1. / torch.max(1e-10 * torch.ones_like(depth_map), depth_map / torch.sum(weights, -1))
    acc_map = torch.sum(weights, -1)

    if white_bkgd:
        rgb_map = rgb_map + (1. - acc_map[..., None])

    return rgb_map, disp_map, acc_map, weights, depth_map


def render_rays(ray_batch, network_fn, network_query_fn, N_samples, retraw=False, lindisp=False,
                perturb=0., N_importance=0, network_fine=None, white_bkgd=False, raw_noise_std=0.,
                verbose=False, pytest=False):
    N_rays = ray_batch.shape[0]
    rays_o, rays_d = ray_batch[:, 0:3], ray_batch[:, 3:6]  # [N_rays, 3] each
    viewdirs = ray_batch[:, -3:] if ray_batch.shape[-1] > 8 else None
    bounds = torch.reshape(ray_batch[..., 6:8], [-1, 1, 2])
    near, far = bounds[..., 0], bounds[..., 1]  # [-1,1]

    t_vals = torch.linspace(0., 1., steps=N_samples)
    if not lindisp:
        z_vals = near * (1. - t_vals) + far * (t_vals)
    else:
        z_vals = 1. / (1. / near * (1. - t_vals) + 1. / far * (t_vals))

    z_vals = z_vals.expand([N_rays, N_samples])

    pts = rays_o[..., None, :] + rays_d[..., None, :] * z_vals[..., :, None]  # [N_rays, N_samples, 3]

    raw = network_query_fn(pts, viewdirs, network_fn)
    rgb_map, disp_map, acc_map, weights, depth_map = raw2outputs(raw, z_vals, rays_d, raw_noise_std, white_bkgd, pytest=pytest)

    ret = {'rgb_map': rgb_map, 'disp_map': disp_map, 'acc_map': acc_map}
    if retraw:
        ret['raw'] = raw

    for k in ret:
        if DEBUG and (torch.isnan(ret[k]).any() or torch.isinf(ret[k]).any()):
            print(f"! [Numerical Error] {k} contains nan or inf.")

    return ret


class Renderer(nn.Module):
    def __init__(self):
        super().__init__()
        self.network_fn = NeRF()

    def forward(self, ray_batch, lindisp, white_bkgd, retraw):
        return render_rays(ray_batch, self.network_fn, run_network, N_samples=6, retraw=retraw,
                           lindisp=lindisp, white_bkgd=white_bkgd)


def make():
    torch.manual_seed(0)
    return Renderer()


def inputs():
    g = torch.Generator().manual_seed(0)
    out = []
    for i, (lindisp, white, retraw) in enumerate([(False, False, False), (True, False, False), (False, True, True),
                                                  (True, True, False), (False, False, True), (True, False, True),
                                                  (False, True, False), (True, True, True)]):
        n = 3 + i % 3
        o = torch.randn(n, 3, generator=g)
        d = torch.randn(n, 3, generator=g)
        near = torch.rand(n, 1, generator=g) * 0.5 + 0.1
        far = near + 1.0 + torch.rand(n, 1, generator=g)
        if i in (1, 5):
            near[0] = 0.0  # lindisp with near == 0 -> inf/nan in the outputs (the check's True case)
        out.append((torch.cat([o, d, near, far], -1), lindisp, white, retraw))
    return out
