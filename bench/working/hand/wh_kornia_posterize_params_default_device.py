"""Hand rewrite of cases/wh_kornia_posterize_params_default_device.py: the upstream fix of
https://github.com/kornia/kornia/pull/3797 -- `_extract_device_dtype` falls back to
`torch.empty(0).device` instead of `torch.get_default_device()`. Both read the current default
device; the tensor op is traceable, so the generator forward is one graph and returns the same
parameters on the same device."""
from typing import Any, Dict, List, Optional, Tuple, Type, TypeVar, Union

import torch
from torch import nn
from torch.distributions import Uniform

KIND = "torch-nontensor-op"

T = TypeVar("T")


class DeviceError(RuntimeError):
    def __init__(self, message, actual_devices=None, expected_device=None):
        super().__init__(message)
        self.actual_devices = actual_devices
        self.expected_device = expected_device


def _extract_device_dtype(tensor_list: List[Optional[Any]]) -> Tuple[torch.device, torch.dtype]:
    """Check if all the input are in the same device (only if when they are torch.Tensor).

    If so, it would return a tuple of (device, dtype).
    Default: (``torch.get_default_device()``, ``torch.get_default_dtype()``).
    """
    device, dtype = None, None
    for tensor in tensor_list:
        if tensor is not None:
            if not isinstance(tensor, torch.Tensor):
                continue
            _device = tensor.device
            _dtype = tensor.dtype
            if device is None and dtype is None:
                device = _device
                dtype = _dtype
            elif device != _device or dtype != _dtype:
                raise DeviceError(
                    f"Passed values are not in the same device and dtype. "
                    f"Got ({device}, {dtype}) and ({_device}, {_dtype}).",
                    actual_devices=[device, _device],
                    expected_device=device,
                )
    if device is None:
        # the current default device, read with a tensor op that dynamo traces
        device = torch.empty(0).device
    if dtype is None:
        dtype = torch.get_default_dtype()
    return (device, dtype)


def _is_traced_dim(value: Any) -> bool:
    return isinstance(value, torch.Tensor) and value.numel() == 1 and value.dim() <= 1


def _common_param_check(batch_size: int, same_on_batch: Optional[bool] = None) -> None:
    if _is_traced_dim(batch_size):
        return
    if not (isinstance(batch_size, int) and batch_size >= 0):
        raise AssertionError(f"`batch_size` shall be a positive integer. Got {batch_size}.")
    if same_on_batch is not None and not isinstance(same_on_batch, bool):
        raise AssertionError(f"`same_on_batch` shall be boolean. Got {same_on_batch}.")


def _joint_range_check(ranged_factor: torch.Tensor, name: str, bounds: Optional[Tuple[float, float]] = None) -> None:
    """Check if bounds[0] <= ranged_factor[0] <= ranged_factor[1] <= bounds[1]."""
    if bounds is None:
        bounds = (float("-inf"), float("inf"))
    if ranged_factor.dim() == 1 and len(ranged_factor) == 2:
        if not bounds[0] <= ranged_factor[0] or not bounds[1] >= ranged_factor[1]:
            raise ValueError(f"{name} out of bounds. Expected inside {bounds}, got {ranged_factor}.")
        if not bounds[0] <= ranged_factor[0] <= ranged_factor[1] <= bounds[1]:
            raise ValueError(f"{name}[0] should be smaller than {name}[1] got {ranged_factor}")
    else:
        raise TypeError(
            f"{name} should be a torch.Tensor with length 2 whose values between {bounds}. Got {ranged_factor}."
        )


def _adapted_rsampling(
    shape: Union[Tuple[int, ...], torch.Size],
    dist: torch.distributions.Distribution,
    same_on_batch: Optional[bool] = False,
) -> torch.Tensor:
    if isinstance(shape, tuple):
        shape = torch.Size(shape)

    if same_on_batch:
        rsample_size = torch.Size((1, *shape[1:]))
        rsample = dist.rsample(rsample_size)
        return rsample.repeat(shape[0], *[1] * (len(rsample.shape) - 1))
    return dist.rsample(shape)


class MultiprocessWrapper:
    """When used as a base class, makes the class work with the 'spawn' multiprocessing context."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        args = tuple(arg.clone() if isinstance(arg, torch.Tensor) else arg for arg in args)
        kwargs = {key: val.clone() if isinstance(val, torch.Tensor) else val for key, val in kwargs.items()}
        super().__init__(*args, **kwargs)


class UniformDistribution(MultiprocessWrapper, Uniform):
    """Wrapper around torch Uniform distribution which makes it work with the 'spawn' multiprocessing context."""


class _PostInitInjectionMetaClass(type):
    """To inject the ``__post_init__`` function after the creation of each instance."""

    def __call__(cls: Type[T], *args: Any, **kwargs: Any) -> T:
        obj = type.__call__(cls, *args, **kwargs)
        obj.__post_init__()
        return obj


class RandomGeneratorBase(nn.Module, metaclass=_PostInitInjectionMetaClass):
    """Base class for generating random augmentation parameters."""

    device: Union[None, str, torch.device] = None
    dtype: torch.dtype

    def __init__(self) -> None:
        super().__init__()

    def __post_init__(self) -> None:
        self.set_rng_device_and_dtype()

    def set_rng_device_and_dtype(self, device: Optional[torch.device] = None, dtype: torch.dtype = torch.float32) -> None:
        if device is None:
            device = torch.device("cpu")
        if self.device != device or self.dtype != dtype:
            self.make_samplers(device, dtype)
            self.device = device
            self.dtype = dtype

    def make_samplers(self, device: torch.device, dtype: torch.dtype) -> None:
        raise NotImplementedError

    def forward(self, batch_shape: Tuple[int, ...], same_on_batch: bool = False) -> Dict[str, torch.Tensor]:
        raise NotImplementedError


class PosterizeGenerator(RandomGeneratorBase):
    r"""Generate random posterize parameters for a batch of images."""

    def __init__(self, bits: Union[float, Tuple[float, float], torch.Tensor]) -> None:
        super().__init__()
        self.bits_factor = bits

    def __repr__(self) -> str:
        repr = f"bits={self.bits_factor}"
        return repr

    def make_samplers(self, device: torch.device, dtype: torch.dtype) -> None:
        bits = torch.as_tensor(self.bits_factor, device=device, dtype=dtype)
        if len(bits.size()) == 0:
            bits = bits.repeat(2)
            bits[1] = 8
        elif not (len(bits.size()) == 1 and bits.size(0) == 2):
            raise ValueError(f"'bits' shall be either a scalar or a length 2 torch.Tensor. Got {bits}.")
        _joint_range_check(bits, "bits", (0, 8))
        self.bit_sampler = UniformDistribution(bits[0], bits[1], validate_args=False)

    def forward(self, batch_shape: Tuple[int, ...], same_on_batch: bool = False) -> Dict[str, torch.Tensor]:
        batch_size = batch_shape[0]
        _common_param_check(batch_size, same_on_batch)
        _device, _ = _extract_device_dtype([self.bits_factor if isinstance(self.bits_factor, torch.Tensor) else None])
        bits_factor = _adapted_rsampling((batch_size,), self.bit_sampler, same_on_batch)
        return {"bits_factor": bits_factor.round().to(device=_device, dtype=torch.int32)}


class PosterizeParams(nn.Module):
    """Draws the parameters of three posterize augmentations in a row (one batch shape)."""

    def __init__(self):
        super().__init__()
        self.generators = nn.ModuleList(
            [
                PosterizeGenerator(3.0),
                PosterizeGenerator((2.0, 6.0)),
                PosterizeGenerator(torch.tensor([1.0, 5.0])),
            ]
        )

    def forward(self, batch_shape: Tuple[int, ...], same_on_batch: bool = False):
        # as `ImageSequential.forward_parameters` walks its augmentations
        params = []
        for gen in self.generators:
            params.append(gen(batch_shape, same_on_batch))
        return params


def make():
    torch.manual_seed(0)
    return PosterizeParams()


def inputs():
    return [
        ((4, 3, 8, 8), False),
        ((4, 3, 8, 8), True),       # one draw repeated over the batch
        ((1, 1, 5, 5), False),
        ((2, 3, 4, 4), True),
        ((8, 3, 2, 2), False),
        ((3, 1, 6, 6), False),
        ((5, 3, 3, 3), True),
        ((6, 2, 4, 4), False),
    ]
