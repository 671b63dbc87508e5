"""kornia augmentation base: per-sample Bernoulli ``batch_prob``, ``int(to_apply.sum().item())`` and
the ``not to_apply.any()`` / ``to_apply.all()`` / boolean-index_put dispatch of ``apply_func``.

``_BasicAugmentationBase`` / ``_AugmentationBase`` kept as in the source (``__batch_prob_generator__``,
``forward_parameters``, ``_process_kwargs_to_params_and_flags``, ``apply_func``), with a
RandomHorizontalFlip subclass (flip matrix, ``hflip``) in front of a small conv backbone. Callers may
pass ``params`` (with a ``batch_prob``) to replay an augmentation, as kornia's API allows.

Source: https://github.com/kornia/kornia/blob/main/kornia/augmentation/base.py
        https://github.com/kornia/kornia/blob/main/kornia/augmentation/_2d/geometric/horizontal_flip.py

Breaks: ``batch_prob.sum().item() == 1`` and ``int(to_apply.sum().item())`` (``.item()``),
``if not to_apply.any()`` / ``elif to_apply.all()`` (data-dependent branches) and
``in_tensor[to_apply]`` (boolean-mask gather, dynamic shape).

HAND: with ``p_batch`` 1 or 0 (a constructor setting) the batch-level draw is a constant, so the
``.item()`` test becomes a test of the setting; this subclass has no parameter generator, so
``generate_parameters`` does not need the number of applied samples; ``apply_func`` computes the
flip and the flip matrix for the whole batch and selects per sample with ``torch.where`` (same values,
same gradients: the per-sample flip does not mix samples).
"""
from typing import Any, Dict, Optional

import torch
import torch.nn as nn
from torch import Tensor
from torch.distributions import Bernoulli


def _adapted_sampling(shape, dist, same_on_batch=False) -> Tensor:
    if same_on_batch:
        return dist.sample((1, *shape[1:])).repeat(shape[0], *[1] * (len(shape) - 1))
    return dist.sample(shape)


def override_parameters(params, params_override=None, if_none_exist="ignore", in_place=False):
    if params_override is None:
        return params
    out = params if in_place else params.copy()
    for k, v in params_override.items():
        if k in params_override:
            out[k] = v
        elif if_none_exist == "raise":
            raise RuntimeError(f"Param `{k}` not existed in `{params_override}`.")
    return out


class _BasicAugmentationBase(nn.Module):
    def __init__(self, p: float = 0.5, p_batch: float = 1.0, same_on_batch: bool = False, keepdim: bool = False) -> None:
        super().__init__()
        self.p = p
        self.p_batch = p_batch
        self.same_on_batch = same_on_batch
        self.keepdim = keepdim
        self._params: Dict[str, Tensor] = {}
        if p != 0.0 or p != 1.0:
            self._p_gen = Bernoulli(self.p)
        if p_batch != 0.0 or p_batch != 1.0:
            self._p_batch_gen = Bernoulli(self.p_batch)
        self._param_generator = None
        self.flags: Dict[str, Any] = {}

    def transform_tensor(self, input: Tensor) -> Tensor:
        return input

    def generate_parameters(self, batch_shape: torch.Size) -> Dict[str, Tensor]:
        if self._param_generator is not None:
            return self._param_generator(batch_shape, self.same_on_batch)
        return {}

    def __batch_prob_generator__(self, batch_shape: torch.Size, p: float, p_batch: float, same_on_batch: bool) -> Tensor:
        batch_prob: Tensor
        if p_batch == 1:
            batch_prob = torch.tensor([True])
        elif p_batch == 0:
            batch_prob = torch.tensor([False])
        else:
            batch_prob = _adapted_sampling((1,), self._p_batch_gen, same_on_batch).bool()

        if batch_prob.sum().item() == 1:
            elem_prob: Tensor
            if p == 1:
                elem_prob = torch.tensor([True] * batch_shape[0])
            elif p == 0:
                elem_prob = torch.tensor([False] * batch_shape[0])
            else:
                elem_prob = _adapted_sampling((batch_shape[0],), self._p_gen, same_on_batch).bool()
            batch_prob = batch_prob * elem_prob
        else:
            batch_prob = batch_prob.repeat(batch_shape[0])
        return batch_prob

    def _process_kwargs_to_params_and_flags(self, params, flags, **kwargs):
        save_kwargs = kwargs["save_kwargs"] if "save_kwargs" in kwargs else False
        if save_kwargs:
            params = override_parameters(params, kwargs, in_place=True)
            self._params = params
        else:
            self._params = params
            params = override_parameters(params, kwargs, in_place=False)
        flags = override_parameters(self.flags, kwargs, in_place=False)
        return params, flags

    def forward_parameters(self, batch_shape) -> Dict[str, Tensor]:
        to_apply = self.__batch_prob_generator__(batch_shape, self.p, self.p_batch, self.same_on_batch)
        _params = self.generate_parameters(torch.Size((int(to_apply.sum().item()), *batch_shape[1:])))
        if _params is None:
            _params = {}
        _params["batch_prob"] = to_apply
        input_size = torch.tensor(batch_shape, dtype=torch.long)
        _params.update({"forward_input_shape": input_size})
        return _params

    def forward(self, input: Tensor, params: Optional[Dict[str, Tensor]] = None, **kwargs) -> Tensor:
        in_tensor = input
        in_tensor = self.transform_tensor(in_tensor)
        batch_shape = in_tensor.shape
        if params is None:
            params = self.forward_parameters(batch_shape)

        if "batch_prob" not in params:
            params["batch_prob"] = torch.tensor([True] * batch_shape[0])

        params, flags = self._process_kwargs_to_params_and_flags(params, self.flags, **kwargs)

        output = self.apply_func(in_tensor, params, flags)
        return output


class _AugmentationBase(_BasicAugmentationBase):
    def identity_matrix(self, input: Tensor) -> Tensor:
        raise NotImplementedError

    def compute_transformation(self, input, params, flags) -> Tensor:
        raise NotImplementedError

    def apply_transform(self, input, params, flags, transform=None) -> Tensor:
        raise NotImplementedError

    def apply_func(self, in_tensor: Tensor, params: Dict[str, Tensor], flags: Optional[Dict[str, Any]] = None) -> Tensor:
        if flags is None:
            flags = self.flags
        to_apply = params["batch_prob"]

        # if no augmentation needed
        if not to_apply.any():
            output = in_tensor
            trans_matrix = self.identity_matrix(in_tensor)
        # if all data needs to be augmented
        elif to_apply.all():
            trans_matrix = self.compute_transformation(in_tensor, params=params, flags=flags)
            output = self.apply_transform(in_tensor, params=params, flags=flags, transform=trans_matrix)
        else:
            output = in_tensor.clone()
            trans_matrix = self.identity_matrix(in_tensor)
            trans_matrix = trans_matrix.index_put(
                (to_apply,), self.compute_transformation(in_tensor[to_apply], params=params, flags=flags)
            )
            output = output.index_put(
                (to_apply,),
                self.apply_transform(in_tensor[to_apply], params=params, flags=flags, transform=trans_matrix[to_apply]),
            )

        self._transform_matrix = trans_matrix

        return output


class RandomHorizontalFlip(_AugmentationBase):
    def identity_matrix(self, input: Tensor) -> Tensor:
        return torch.eye(3, device=input.device, dtype=input.dtype).repeat(input.shape[0], 1, 1)

    def compute_transformation(self, input: Tensor, params, flags) -> Tensor:
        w: int = input.shape[-1]
        flip_mat: Tensor = torch.tensor(
            [[-1, 0, w - 1], [0, 1, 0], [0, 0, 1]], device=input.device, dtype=input.dtype
        )
        return flip_mat.repeat(input.size(0), 1, 1)

    def apply_transform(self, input: Tensor, params, flags, transform=None) -> Tensor:
        return input.flip(-1)


class AugmentThenEncode(nn.Module):
    def __init__(self):
        super().__init__()
        self.aug = RandomHorizontalFlip(p=0.5)
        self.backbone = nn.Conv2d(3, 4, 3, padding=1)

    def forward(self, x, params=None):
        x = self.aug(x, params)
        return self.backbone(x).mean((2, 3)), self.aug._transform_matrix


def make():
    torch.manual_seed(0)
    return AugmentThenEncode()


def inputs():
    g = torch.Generator().manual_seed(0)

    def img(b, h=5, w=6):
        return torch.randn(b, 3, h, w, generator=g)

    return [
        (img(4),),
        (img(1),),
        (img(2, 4, 4),),
        (img(6, 3, 3),),
        (img(3), {"batch_prob": torch.tensor([False, False, False])}),
        (img(3), {"batch_prob": torch.tensor([True, True, True])}),
        (img(3), {"batch_prob": torch.tensor([True, False, True])}),
        (img(2), {"batch_prob": torch.tensor([False, True])}),
        (img(8, 2, 7),),
    ]


KIND = "item+branch"
GRAD = True
