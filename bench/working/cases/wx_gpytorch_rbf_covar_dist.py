"""GPyTorch ScaleKernel(RBFKernel(ard_num_dims=2)) evaluation through Kernel.covar_dist and the Distance
module's _sq_dist (gpytorch 1.x), as called for the train prior covariance K(X, X), the cross covariance
K(X, X*), and the diagonal, in training and under torch.no_grad() prediction.

Source: https://github.com/cornellius-gp/gpytorch/blob/01c35da260c6edf2ef0114170f3b1792bb3980b8/gpytorch/kernels/kernel.py
        https://github.com/cornellius-gp/gpytorch/blob/v1.6.0/gpytorch/kernels/rbf_kernel.py (postprocess_rbf, ARD path)
        https://github.com/cornellius-gp/gpytorch/blob/v1.6.0/gpytorch/kernels/scale_kernel.py
        https://github.com/cornellius-gp/gpytorch/blob/v1.6.0/gpytorch/constraints/constraints.py (Positive/softplus)
Breaks: `x1_eq_x2 = torch.equal(x1, x2)` (data-dependent Python bool) and the branches on it in covar_dist
        (`if x1_eq_x2:` on the diag path) and _sq_dist (`if x1_eq_x2 and not x1.requires_grad ...` shortcut and
        the diagonal `fill_(0)`); plus `postprocess = torch.tensor(postprocess)` later used in `if postprocess`.
        Lazy tensors, priors, active_dims and the RBFCovariance autograd.Function fast path are dropped (the ARD
        path calls covar_dist directly, as in the source).
HAND: partial — on the full-matrix path torch.equal becomes a 0-d tensor (same shape, dtype and all elements
      equal) and the diagonal fill_(0) a torch.where; `postprocess` stays a Python bool. The diag path keeps
      `if torch.equal(x1, x2)`: its all-zeros result has no autograd history (None gradients for the inputs and
      the lengthscale), which a traced select cannot reproduce. 4 of 5 sites removed.
"""
import torch
from torch.nn import functional as F

KIND = "torch.equal branch (GP kernel)"
GRAD = True


def default_postprocess_script(x):
    return x


def postprocess_rbf(dist_mat):
    return dist_mat.div_(-2).exp_()


class Positive(torch.nn.Module):
    def transform(self, tensor):
        return F.softplus(tensor)


class Distance(torch.nn.Module):
    def __init__(self, postprocess_script=default_postprocess_script):
        super().__init__()
        self._postprocess = postprocess_script

    def _sq_dist(self, x1, x2, postprocess, x1_eq_x2=False):
        # TODO: use torch squared cdist once implemented: https://github.com/pytorch/pytorch/pull/25799
        adjustment = x1.mean(-2, keepdim=True)
        x1 = x1 - adjustment
        x2 = x2 - adjustment  # x1 and x2 should be identical in all dims except -2 at this point

        # Compute squared distance matrix using quadratic expansion
        x1_norm = x1.pow(2).sum(dim=-1, keepdim=True)
        x1_pad = torch.ones_like(x1_norm)
        if x1_eq_x2 and not x1.requires_grad and not x2.requires_grad:
            x2_norm, x2_pad = x1_norm, x1_pad
        else:
            x2_norm = x2.pow(2).sum(dim=-1, keepdim=True)
            x2_pad = torch.ones_like(x2_norm)
        x1_ = torch.cat([-2.0 * x1, x1_norm, x1_pad], dim=-1)
        x2_ = torch.cat([x2, x2_pad, x2_norm], dim=-1)
        res = x1_.matmul(x2_.transpose(-2, -1))

        if x1_eq_x2 and not x1.requires_grad and not x2.requires_grad:
            res.diagonal(dim1=-2, dim2=-1).fill_(0)

        # Zero out negative values
        res.clamp_min_(0)
        return self._postprocess(res) if postprocess else res

    def _dist(self, x1, x2, postprocess, x1_eq_x2=False):
        # TODO: use torch cdist once implementation is improved: https://github.com/pytorch/pytorch/pull/25799
        res = self._sq_dist(x1, x2, postprocess=False, x1_eq_x2=x1_eq_x2)
        res = res.clamp_min_(1e-30).sqrt_()
        return self._postprocess(res) if postprocess else res


class RBFKernel(torch.nn.Module):
    has_lengthscale = True

    def __init__(self, ard_num_dims=None, batch_shape=torch.Size([])):
        super().__init__()
        self._batch_shape = batch_shape
        self.ard_num_dims = ard_num_dims
        lengthscale_num_dims = 1 if ard_num_dims is None else ard_num_dims
        self.register_parameter(
            "raw_lengthscale",
            torch.nn.Parameter(torch.zeros(*batch_shape, 1, lengthscale_num_dims)),
        )
        self.raw_lengthscale_constraint = Positive()
        self.distance_module = None

    @property
    def lengthscale(self):
        return self.raw_lengthscale_constraint.transform(self.raw_lengthscale)

    def covar_dist(
        self,
        x1,
        x2,
        diag=False,
        last_dim_is_batch=False,
        square_dist=False,
        dist_postprocess_func=default_postprocess_script,
        postprocess=True,
        **params,
    ):
        if last_dim_is_batch:
            x1 = x1.transpose(-1, -2).unsqueeze(-1)
            x2 = x2.transpose(-1, -2).unsqueeze(-1)

        x1_eq_x2 = torch.equal(x1, x2)

        # torch scripts expect tensors
        postprocess = torch.tensor(postprocess)

        res = None

        # Cache the Distance object or else JIT will recompile every time
        if not self.distance_module or self.distance_module._postprocess != dist_postprocess_func:
            self.distance_module = Distance(dist_postprocess_func)

        if diag:
            # Special case the diagonal because we can return all zeros most of the time.
            if x1_eq_x2:
                res = torch.zeros(*x1.shape[:-2], x1.shape[-2], dtype=x1.dtype, device=x1.device)
                if postprocess:
                    res = dist_postprocess_func(res)
                return res
            else:
                res = torch.norm(x1 - x2, p=2, dim=-1)
                if square_dist:
                    res = res.pow(2)
            if postprocess:
                res = dist_postprocess_func(res)
            return res

        elif square_dist:
            res = self.distance_module._sq_dist(x1, x2, postprocess, x1_eq_x2)
        else:
            res = self.distance_module._dist(x1, x2, postprocess, x1_eq_x2)

        return res

    def forward(self, x1, x2, diag=False, **params):
        # (ard_num_dims > 1: the covar_dist path of RBFKernel.forward)
        x1_ = x1.div(self.lengthscale)
        x2_ = x2.div(self.lengthscale)
        return self.covar_dist(
            x1_, x2_, square_dist=True, diag=diag, dist_postprocess_func=postprocess_rbf, postprocess=True, **params
        )

    def __call__(self, x1, x2=None, diag=False, **params):
        # reduced Kernel.__call__: unsqueeze 1-d inputs, default x2 to x1, then forward
        x1_, x2_ = x1, x2
        if x1_.ndimension() == 1:
            x1_ = x1_.unsqueeze(1)
        if x2_ is not None:
            if x2_.ndimension() == 1:
                x2_ = x2_.unsqueeze(1)
            if not x1_.size(-1) == x2_.size(-1):
                raise RuntimeError("x1_ and x2_ must have the same number of dimensions!")
        if x2_ is None:
            x2_ = x1_
        return super().__call__(x1_, x2_, diag=diag, **params)


class ScaleKernel(torch.nn.Module):
    def __init__(self, base_kernel):
        super().__init__()
        self.base_kernel = base_kernel
        self.register_parameter("raw_outputscale", torch.nn.Parameter(torch.tensor(0.0)))
        self.raw_outputscale_constraint = Positive()

    @property
    def outputscale(self):
        return self.raw_outputscale_constraint.transform(self.raw_outputscale)

    def forward(self, x1, x2=None, diag=False, **params):
        orig_output = self.base_kernel(x1, x2, diag=diag, **params)
        outputscales = self.outputscale
        if diag:
            outputscales = outputscales.unsqueeze(-1)
        return orig_output.mul(outputscales)


class GPCovar(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.covar_module = ScaleKernel(RBFKernel(ard_num_dims=2))
        with torch.no_grad():
            self.covar_module.base_kernel.raw_lengthscale.copy_(torch.tensor([[0.3, -0.2]]))
            self.covar_module.raw_outputscale.fill_(0.5)

    def forward(self, x1, x2, diag: bool, predict: bool):
        if predict:
            with torch.no_grad():
                return self.covar_module(x1, x2, diag=diag)
        return self.covar_module(x1, x2, diag=diag)


def make():
    torch.manual_seed(0)
    return GPCovar()


def inputs():
    g = torch.Generator().manual_seed(0)
    out = []
    x = torch.randn(5, 2, generator=g)
    out.append((x, None, False, False))             # train prior K(X, X): x2 defaults to x1
    out.append((x, x.clone(), False, False))        # equal values, different tensor
    out.append((x, torch.randn(3, 2, generator=g), False, False))   # cross covariance
    out.append((x, None, True, False))              # diag, equal -> zeros
    xs = torch.randn(5, 2, generator=g)
    out.append((x, xs, True, False))                # diag, not equal
    out.append((x, None, False, True))              # no_grad prediction, equal -> shortcut + zero diagonal
    out.append((x, xs, False, True))                # no_grad prediction, cross covariance
    xb = torch.randn(2, 4, 2, generator=g)
    out.append((xb, None, False, False))            # batched
    out.append((xb, xb + 0.1, True, True))          # batched diag under no_grad
    out.append((torch.randn(4, 2, generator=g), None, True, True))
    return out
