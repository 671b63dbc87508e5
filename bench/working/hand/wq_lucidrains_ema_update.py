"""lucidrains ema-pytorch: `EMA.update()` called after every optimiser step, with the warm-up decay
schedule, the copy phase before `update_after_step` and the lazy first copy guarded by the
`initted` buffer; then the EMA model is evaluated.

Source: https://github.com/lucidrains/ema-pytorch/blob/main/ema_pytorch/ema_pytorch.py
(`EMA.update`, `EMA.get_current_decay`, `EMA.update_moving_average`, `copy_params_from_model_to_ema`,
in the version that stores `step`/`initted` as buffers and reads them with `.item()`).
The "optimiser step" is reduced to an in-place shift of the online parameters.

Breaks: `step = self.step.item()` (Tensor.item()), which then drives the Python branches
`if (step % self.update_every) != 0`, `if step <= self.update_after_step`; `if not self.initted.item()`
(Tensor.item()); `self.step.item()` again in `get_current_decay`.

HAND: `step` stays a 1-element tensor; the three outcomes (skip, copy, moving average, with the lazy
first copy) become masks, every EMA parameter is written with
`torch.where(mask, new_value, old_value)`, `initted` with `torch.where(ema_phase, 1., initted)`, and the
decay is computed as a float64 tensor with the same formula and clamps (`torch.where(epoch <= 0, 0, ...)`).
"""
import copy

import torch
from torch import nn

KIND = "item-branch"


def exists(val):
    return val is not None


def is_float_dtype(dtype):
    return any([dtype == float_dtype for float_dtype in (torch.float64, torch.float32, torch.float16, torch.bfloat16)])


def clamp(value, min_value=None, max_value=None):
    assert exists(min_value) or exists(max_value)
    if exists(min_value):
        value = max(value, min_value)

    if exists(max_value):
        value = min(value, max_value)

    return value


class EMA(nn.Module):
    def __init__(
        self,
        model,
        ema_model=None,
        beta=0.9999,
        update_after_step=100,
        update_every=10,
        inv_gamma=1.0,
        power=2 / 3,
        min_value=0.0,
        param_or_buffer_names_no_ema=set(),
        ignore_names=set(),
    ):
        super().__init__()
        self.beta = beta
        self.online_model = model

        self.ema_model = ema_model

        if not exists(self.ema_model):
            self.ema_model = copy.deepcopy(model)

        self.ema_model.requires_grad_(False)

        self.parameter_names = {name for name, param in self.ema_model.named_parameters() if is_float_dtype(param.dtype)}
        self.buffer_names = {name for name, buffer in self.ema_model.named_buffers() if is_float_dtype(buffer.dtype)}

        self.update_every = update_every
        self.update_after_step = update_after_step

        self.inv_gamma = inv_gamma
        self.power = power
        self.min_value = min_value

        assert isinstance(param_or_buffer_names_no_ema, (set, list))
        self.param_or_buffer_names_no_ema = param_or_buffer_names_no_ema  # parameter or buffer

        self.ignore_names = ignore_names

        self.register_buffer('initted', torch.Tensor([False]))
        self.register_buffer('step', torch.tensor([0]))

    def get_params_iter(self, model):
        for name, param in model.named_parameters():
            if name not in self.parameter_names:
                continue
            yield name, param

    def get_buffers_iter(self, model):
        for name, buffer in model.named_parameters():
            if name not in self.buffer_names:
                continue
            yield name, buffer

    def copy_params_from_model_to_ema(self):
        for (_, ma_params), (_, current_params) in zip(self.get_params_iter(self.ema_model), self.get_params_iter(self.online_model)):
            ma_params.data.copy_(current_params.data)

        for (_, ma_buffers), (_, current_buffers) in zip(self.get_buffers_iter(self.ema_model), self.get_buffers_iter(self.online_model)):
            ma_buffers.data.copy_(current_buffers.data)

    def get_current_decay(self, step):
        # same formula as the source, on a float64 tensor instead of Python floats
        epoch = (step.double() - self.update_after_step - 1).clamp(min=0.)
        value = 1 - (1 + epoch / self.inv_gamma) ** - self.power
        value = value.clamp(min=self.min_value, max=self.beta)
        return torch.where(epoch <= 0, torch.zeros_like(value), value)

    @torch.no_grad()
    def update(self):
        step = self.step.clone()
        self.step += 1

        do_update = (step % self.update_every) == 0
        copy_phase = do_update & (step <= self.update_after_step)
        ema_phase = do_update & ~copy_phase
        # the lazy first copy happens in the EMA phase while `initted` is still False
        copy_now = copy_phase | (ema_phase & (self.initted == 0))
        self.initted.copy_(torch.where(ema_phase, torch.ones_like(self.initted), self.initted))

        # the source reads self.step after the increment
        current_decay = self.get_current_decay(self.step)

        for (name, current_params), (_, ma_params) in zip(self.get_params_iter(self.online_model), self.get_params_iter(self.ema_model)):
            src = torch.where(copy_now, current_params.data, ma_params.data)
            if name in self.ignore_names:
                new = src
            elif name in self.param_or_buffer_names_no_ema:
                new = current_params.data
            else:
                difference = src - current_params.data
                difference = difference * (1.0 - current_decay).to(difference.dtype)
                new = src - difference
            ma_params.data.copy_(torch.where(ema_phase, new, src))

        for (name, current_buffer), (_, ma_buffer) in zip(self.get_buffers_iter(self.online_model), self.get_buffers_iter(self.ema_model)):
            src = torch.where(copy_now, current_buffer.data, ma_buffer.data)
            if name in self.ignore_names:
                new = src
            elif name in self.param_or_buffer_names_no_ema:
                new = current_buffer.data
            else:
                difference = src - current_buffer
                difference = difference * (1.0 - current_decay).to(difference.dtype)
                new = src - difference
            ma_buffer.data.copy_(torch.where(ema_phase, new, src))

    def __call__(self, *args, **kwargs):
        return self.ema_model(*args, **kwargs)


class TrainStepWithEMA(nn.Module):
    """One (reduced) optimiser step on the online model, the EMA update, then the EMA model's output."""

    def __init__(self):
        super().__init__()
        net = nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 2))
        self.ema = EMA(net, beta=0.99, update_after_step=3, update_every=2, power=3 / 4,
                       param_or_buffer_names_no_ema={"2.bias"})

    def forward(self, x, lr):
        with torch.no_grad():
            for p in self.ema.online_model.parameters():
                p.add_(lr * torch.ones_like(p))
        self.ema.update()
        return self.ema(x)


def make():
    torch.manual_seed(0)
    return TrainStepWithEMA()


def inputs():
    g = torch.Generator().manual_seed(5)
    # called in order on one module: steps 0..9 cover skip / copy phase / first EMA (lazy copy,
    # decay 0) / later EMA updates with the warm-up decay
    return [(torch.randn(2, 3, generator=g), 0.1 * (i + 1)) for i in range(10)]
