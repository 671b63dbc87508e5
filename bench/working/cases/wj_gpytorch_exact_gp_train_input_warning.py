"""GPyTorch's `ExactGP.__call__` in posterior (eval) mode: with `gpytorch.settings.debug` on (its
default), every prediction first compares the test inputs with the stored training inputs,
`all(torch.equal(train_input, input) for ...)`, and warns "The input matches the stored training
data. Did you forget to call model.train()?" when they match; then the joint prior over
training+test points is conditioned on the training targets (the exact GP posterior). Predicting
through a compiled model -- BoTorch's acquisition optimisation differentiates the posterior w.r.t.
the test points -- pays this check on every call.

Source: https://github.com/cornellius-gp/gpytorch/blob/1f4fd44f0c8db34a3e097f4081649e07f47b8f51/gpytorch/models/exact_gp.py
(`ExactGP.__init__`, `ExactGP.__call__`), with `gpytorch/settings.py` (`_feature_flag`, `debug`),
`gpytorch/models/exact_prediction_strategies.py` (`DefaultPredictionStrategy.exact_prediction`:
mean and covariance cache), and the regression model of the GPyTorch "Simple GP Regression"
tutorial (`ConstantMean`, `ScaleKernel(RBFKernel())`, `GaussianLikelihood`). Reduced: the lazy
tensors are dense tensors and the prediction strategy a Cholesky solve recomputed on every call
(not cached on the model); the training-mode and prior-mode branches of `__call__` are left out
(the model is in eval mode); `MultivariateNormal` is a (loc, covariance_matrix) named tuple;
softplus-constrained raw hyperparameters as in GPyTorch. Tiny shapes: 6 training points, 1-7 test
points in 1-D.

Breaks: `if all(torch.equal(train_input, input) for ...)`: `torch.equal` is a data-dependent operator
(a Python bool from tensor values); as it is inside a generator expression dynamo cannot resume
there ("Generator reconstruction with mutations") and runs the whole `__call__` eagerly, so the
`warnings.warn(...)` under it (an unsupported builtin, a break of its own) is never traced.

HAND: the comparison and the warning move into a `torch.library.custom_op` with an ORDERED effect
(`warn_if_train_inputs(train_inputs, inputs)`) that runs the same `all(torch.equal(...))` test and
issues the same UserWarning with the same text at run time; the settings check stays in Python.
"""
import warnings
from typing import NamedTuple, Optional

import torch
import torch.nn.functional as F
from torch import nn

KIND = "branch+warning"
GRAD = True


class _feature_flag:
    r"""Base class for feature flag settings with global scope.
    The default is set via the `_default` class attribute.
    """

    _default: bool = False
    _state: Optional[bool] = None

    @classmethod
    def is_default(cls) -> bool:
        return cls._state is None

    @classmethod
    def on(cls) -> bool:
        if cls.is_default():
            return cls._default
        return cls._state

    @classmethod
    def off(cls) -> bool:
        return not cls.on()

    @classmethod
    def _set_state(cls, state: Optional[bool]) -> None:
        cls._state = state

    def __init__(self, state: bool = True):
        self.prev = self.__class__._state
        self.state = state

    def __enter__(self):
        self.__class__._set_state(self.state)

    def __exit__(self, *args):
        self.__class__._set_state(self.prev)
        return False


class settings:
    class debug(_feature_flag):
        """
        Whether or not to perform "safety" checks on the supplied data.
        (For example, that the correct training data is supplied in Exact GP training mode)
        Pros: fewer data checks, fewer warning messages
        Cons: possibility of supplying incorrect data, model accidentially in wrong mode

        (Default: True)
        """

        _default = True


class MultivariateNormal(NamedTuple):
    loc: torch.Tensor
    covariance_matrix: torch.Tensor


def _positive(raw):
    return F.softplus(raw)


class ConstantMean(nn.Module):
    def __init__(self):
        super().__init__()
        self.constant = nn.Parameter(torch.zeros(()))

    def forward(self, x):
        return self.constant.expand(x.shape[:-1])


class ScaleRBFKernel(nn.Module):
    """ScaleKernel(RBFKernel()): outputscale * exp(-|x1 - x2|^2 / (2 lengthscale^2))."""

    def __init__(self):
        super().__init__()
        self.raw_lengthscale = nn.Parameter(torch.zeros(1, 1))
        self.raw_outputscale = nn.Parameter(torch.zeros(()))

    def forward(self, x1, x2):
        lengthscale = _positive(self.raw_lengthscale)
        x1_ = x1.div(lengthscale)
        x2_ = x2.div(lengthscale)
        sq_dist = (x1_.unsqueeze(-2) - x2_.unsqueeze(-3)).pow(2).sum(-1)
        return _positive(self.raw_outputscale) * sq_dist.div(-2).exp()


class GaussianLikelihood(nn.Module):
    def __init__(self):
        super().__init__()
        self.raw_noise = nn.Parameter(torch.zeros(1))

    @property
    def noise(self):
        return _positive(self.raw_noise) + 1e-4  # GreaterThan(1e-4)

    def forward(self, mvn):
        covar = mvn.covariance_matrix
        eye = torch.eye(covar.shape[-1], dtype=covar.dtype, device=covar.device)
        return MultivariateNormal(mvn.loc, covar + self.noise * eye)


class ExactGP(nn.Module):
    def __init__(self, train_inputs, train_targets, likelihood):
        super().__init__()
        if train_inputs is not None and torch.is_tensor(train_inputs):
            train_inputs = (train_inputs,)
        if train_inputs is not None and not all(torch.is_tensor(train_input) for train_input in train_inputs):
            raise RuntimeError("Train inputs must be a tensor, or a list/tuple of tensors")
        if not isinstance(likelihood, GaussianLikelihood):
            raise RuntimeError("ExactGP can only handle Gaussian likelihoods")

        if train_inputs is not None:
            self.train_inputs = tuple(tri.unsqueeze(-1) if tri.ndimension() == 1 else tri for tri in train_inputs)
            self.train_targets = train_targets
        else:
            self.train_inputs = None
            self.train_targets = None
        self.likelihood = likelihood

    def __call__(self, *args, **kwargs):
        train_inputs = list(self.train_inputs) if self.train_inputs is not None else []
        inputs = [i.unsqueeze(-1) if i.ndimension() == 1 else i for i in args]

        # Posterior mode
        if settings.debug.on():
            if all(torch.equal(train_input, input) for train_input, input in zip(train_inputs, inputs)):
                warnings.warn(
                    "The input matches the stored training data. Did you forget to call model.train()?", UserWarning
                )

        # Concatenate the input to the training input
        full_inputs = []
        for train_input, input in zip(train_inputs, inputs):
            full_inputs.append(torch.cat([train_input, input], dim=-2))

        # Get the joint distribution for training/test data
        full_output = super(ExactGP, self).__call__(*full_inputs, **kwargs)
        if settings.debug().on():
            if not isinstance(full_output, MultivariateNormal):
                raise RuntimeError("ExactGP.forward must return a MultivariateNormal")
        full_mean, full_covar = full_output.loc, full_output.covariance_matrix

        # Make the prediction (DefaultPredictionStrategy.exact_prediction)
        n_train = train_inputs[0].shape[-2]
        train_prior = MultivariateNormal(full_mean[..., :n_train], full_covar[..., :n_train, :n_train])
        train_train_covar = self.likelihood(train_prior).covariance_matrix
        chol = torch.linalg.cholesky(train_train_covar)
        train_residual = (self.train_targets - train_prior.loc).unsqueeze(-1)
        mean_cache = torch.cholesky_solve(train_residual, chol).squeeze(-1)
        test_train_covar = full_covar[..., n_train:, :n_train]
        test_test_covar = full_covar[..., n_train:, n_train:]
        predictive_mean = full_mean[..., n_train:] + test_train_covar @ mean_cache
        covar_correction = test_train_covar @ torch.cholesky_solve(test_train_covar.transpose(-1, -2), chol)
        predictive_covar = test_test_covar - covar_correction
        return full_output.__class__(predictive_mean, predictive_covar)


class ExactGPModel(ExactGP):
    def __init__(self, train_x, train_y, likelihood):
        super(ExactGPModel, self).__init__(train_x, train_y, likelihood)
        self.mean_module = ConstantMean()
        self.covar_module = ScaleRBFKernel()

    def forward(self, x):
        mean_x = self.mean_module(x)
        covar_x = self.covar_module(x, x)
        return MultivariateNormal(mean_x, covar_x)


TRAIN_X = torch.linspace(0, 1, 6)


def make():
    torch.manual_seed(0)
    train_y = torch.sin(TRAIN_X * (2 * torch.pi)) + 0.1 * torch.randn(6)
    model = ExactGPModel(TRAIN_X.clone(), train_y, GaussianLikelihood())
    with torch.no_grad():  # "trained" hyperparameters
        model.covar_module.raw_lengthscale.fill_(-1.0)
        model.covar_module.raw_outputscale.fill_(0.5)
        model.likelihood.raw_noise.fill_(-3.0)
        model.mean_module.constant.fill_(0.1)
    return model.eval()


def inputs():
    g = torch.Generator().manual_seed(17)
    perturbed = TRAIN_X.clone()
    perturbed[3] += 1e-3
    return [
        (torch.rand(4, generator=g),),           # ordinary test points
        (TRAIN_X.clone(),),                      # the training inputs again: warning
        (torch.rand(7, generator=g),),
        (TRAIN_X.clone().unsqueeze(-1),),        # as an (n, 1) matrix: still the training data, warning
        (perturbed,),                            # almost the training data: no warning
        (TRAIN_X[:5].clone(),),                  # a subset (other shape): no warning
        (torch.rand(1, generator=g),),
        (TRAIN_X.clone(),),                      # warns again (each call warns)
    ]
