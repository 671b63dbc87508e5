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

    def get_current_decay(self):
        epoch = clamp(self.step.item() - self.update_after_step - 1, min_value=0.)
        value = 1 - (1 + epoch / self.inv_gamma) ** - self.power

        if epoch <= 0:
            return 0.

        return clamp(value, min_value=self.min_value, max_value=self.beta)

    def update(self):
        step = self.step.item()
        self.step += 1

        if (step % self.update_every) != 0:
            return

        if step <= self.update_after_step:
            self.copy_params_from_model_to_ema()
            return

        if not self.initted.item():
            self.copy_params_from_model_to_ema()
            self.initted.data.copy_(torch.Tensor([True]))

        self.update_moving_average(self.ema_model, self.online_model)

    @torch.no_grad()
    def update_moving_average(self, ma_model, current_model):
        current_decay = self.get_current_decay()

        for (name, current_params), (_, ma_params) in zip(self.get_params_iter(current_model), self.get_params_iter(ma_model)):
            if name in self.ignore_names:
                continue

            if name in self.param_or_buffer_names_no_ema:
                ma_params.data.copy_(current_params.data)
                continue

            difference = ma_params.data - current_params.data
            difference.mul_(1.0 - current_decay)
            ma_params.sub_(difference)

        for (name, current_buffer), (_, ma_buffer) in zip(self.get_buffers_iter(current_model), self.get_buffers_iter(ma_model)):
            if name in self.ignore_names:
                continue

            if name in self.param_or_buffer_names_no_ema:
                ma_buffer.data.copy_(current_buffer.data)
                continue

            difference = ma_buffer - current_buffer
            difference.mul_(1.0 - current_decay)
            ma_buffer.sub_(difference)

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
