"""DeepSpeed's fp16 `DynamicLossScaler`: the overflow check sums every gradient into a Python float
(`float(x.float().sum())`) and tests it for inf/NaN; `update_scale` then halves the loss scale (after
`delayed_shift` overflows of hysteresis), logs "[deepspeed] OVERFLOW! ..." on rank 0, raises at the
minimum scale, or doubles the scale every `scale_window` clean iterations. The callable is one
optimizer-step's worth of it: check, update, and unscale the gradients when there was no overflow.

Source: https://github.com/microsoft/DeepSpeed/blob/v0.14.0/deepspeed/runtime/fp16/loss_scaler.py
(`DynamicLossScaler.has_overflow_serial`, `_has_inf_or_nan`, `update_scale`); the step wrapper
follows `FP16_UnfusedOptimizer.step` in
https://github.com/microsoft/DeepSpeed/blob/v0.14.0/deepspeed/runtime/fp16/unfused_optimizer.py
(check overflow, `_update_scale`, skip the step or unscale by the previous scale). `dist.get_rank()`
is a stub returning 0; the gradients come as a list of tensors instead of `p.grad` of parameters.
init_scale 8, scale_window 3, min_scale 1, delayed_shift 2, dtype torch.half.

Breaks: `cpu_sum = float(x.float().sum())` (Tensor -> Python float) and the two `logger.info(overflow_msg)`
calls (scale reduced; hysteresis reduced).

HAND: none — the loss scale, hysteresis and iteration counters are Python numbers updated on the
data-dependent overflow decision (and the step returns that decision and the scale to the caller as
Python values), so the result cannot stay inside one graph without changing what the caller sees.
"""
import logging
from types import SimpleNamespace

import torch

logger = logging.getLogger(__name__)

KIND = "float-log-raise"

dist = SimpleNamespace(get_rank=lambda: 0)


class LossScalerBase:
    """LossScalarBase
    Base class for a loss scaler
    """

    def __init__(self, cur_scale):
        self.cur_scale = cur_scale
        self.dynamic = False

    @property
    def loss_scale(self):
        return self.cur_scale


class DynamicLossScaler(LossScalerBase):
    def __init__(self,
                 init_scale=2**32,
                 scale_factor=2.,
                 scale_window=1000,
                 min_scale=1,
                 delayed_shift=1,
                 consecutive_hysteresis=False,
                 raise_error_at_min_scale=True,
                 dtype=torch.half):
        super(DynamicLossScaler, self).__init__(init_scale)
        self.cur_iter = 0
        self.last_overflow_iter = -1
        self.scale_factor = scale_factor
        self.scale_window = scale_window
        self.min_scale = min_scale
        self.delayed_shift = delayed_shift
        self.cur_hysteresis = delayed_shift
        self.consecutive_hysteresis = consecutive_hysteresis
        self.raise_error_at_min_scale = raise_error_at_min_scale
        self.dynamic = True
        self.dtype = dtype

    # `params` is a list / generator of torch.Variable
    def has_overflow_serial(self, params):
        for p in params:
            if p is not None and self._has_inf_or_nan(p.data):
                return True

        return False

    # `x` is a torch.Tensor
    @staticmethod
    def _has_inf_or_nan(x):
        try:
            # if x is half, the .float() incurs an additional deep copy, but it's necessary if
            # Pytorch's .sum() creates a one-element tensor of the same type as x
            # (which is true for some recent version of pytorch).
            cpu_sum = float(x.float().sum())
            # More efficient version that can be used if .sum() returns a Python scalar
            # cpu_sum = float(x.sum())
        except RuntimeError as instance:
            # We want to check if inst is actually an overflow exception.
            # RuntimeError could come from a different error.
            # If so, we still want the exception to propagate.
            if "value cannot be converted" not in instance.args[0]:
                raise
            return True
        else:
            if cpu_sum in [float('inf'), -float('inf')] or cpu_sum != cpu_sum:
                return True
            return False

    # `overflow` is boolean indicating whether the gradient overflowed
    def update_scale(self, overflow):
        if overflow:
            # self.cur_scale /= self.scale_factor
            if self.delayed_shift == 1 or self.cur_hysteresis == 1:
                if (self.cur_scale == self.min_scale) and self.raise_error_at_min_scale:
                    raise Exception(
                        "Current loss scale already at minimum - cannot decrease scale anymore. Exiting run.")
                else:
                    next_scale = max(self.cur_scale / self.scale_factor, self.min_scale)
                    if dist.get_rank() == 0:
                        overflow_msg = f"[deepspeed] OVERFLOW! Rank {dist.get_rank()} Skipping step."
                        if self.dtype == torch.half:
                            overflow_msg += f" Attempted loss scale: {int(self.cur_scale)}, reducing to {int(next_scale)}"
                        logger.info(overflow_msg)
                    self.cur_scale = next_scale
            else:
                if dist.get_rank() == 0:
                    overflow_msg = f"[deepspeed] OVERFLOW! Rank {dist.get_rank()} Skipping step."
                    if self.dtype == torch.half:
                        overflow_msg += f" Attempted loss scale: {int(self.cur_scale)}, but hysteresis is {self.cur_hysteresis}. Reducing hysteresis to {self.cur_hysteresis-1}"
                    logger.info(overflow_msg)
                self.cur_hysteresis -= 1
            self.last_overflow_iter = self.cur_iter
        else:
            if self.consecutive_hysteresis:
                if dist.get_rank() == 0:
                    hysteresis_msg = f"Consecutive hysteresis is enabled. Restoring hysteresis to {self.delayed_shift}"
                    logger.info(hysteresis_msg)
                self.cur_hysteresis = self.delayed_shift
            if (self.cur_iter - self.last_overflow_iter) % self.scale_window == 0:
                if not self.consecutive_hysteresis:
                    self.cur_hysteresis = self.delayed_shift
                self.cur_scale *= self.scale_factor
        self.cur_iter += 1


class FP16Step:
    def __init__(self):
        self.loss_scaler = DynamicLossScaler(init_scale=8, scale_factor=2., scale_window=3, min_scale=1,
                                             delayed_shift=2)

    @property
    def cur_scale(self):
        return self.loss_scaler.loss_scale

    def step(self, grads):
        self.overflow = self.loss_scaler.has_overflow_serial(grads)
        prev_scale = self.cur_scale
        self.loss_scaler.update_scale(self.overflow)
        if self.overflow:
            return self.overflow, self.cur_scale, None
        return self.overflow, self.cur_scale, [g.float() / prev_scale for g in grads]


def make():
    return FP16Step().step


def _grads(g, bad=None):
    grads = [(torch.randn(3, 4, generator=g) * 8).half(), (torch.randn(5, generator=g) * 8).half()]
    if bad == "inf":
        grads[1][2] = float("inf")
    elif bad == "-inf":
        grads[0][1, 1] = -float("inf")
    elif bad == "nan":
        grads[0][0, 3] = float("nan")
    elif bad == "big":  # finite half values whose float32 sum is finite: no overflow
        grads[1][:] = 60000.0
    return (grads,)


def inputs():
    g = torch.Generator().manual_seed(9)
    return [
        _grads(g),              # clean
        _grads(g, "inf"),       # overflow: hysteresis 2 -> 1
        _grads(g, "nan"),       # overflow: scale 8 -> 4
        _grads(g),              # clean
        _grads(g, "big"),       # clean (large but finite half values)
        _grads(g),              # clean, window reached: scale 4 -> 8, hysteresis back to 2
        _grads(g, "-inf"),      # overflow: hysteresis 2 -> 1
        _grads(g, "inf"),       # overflow: 8 -> 4
        _grads(g, "nan"),       # overflow: 4 -> 2
        _grads(g, "inf"),       # overflow: 2 -> 1
    ]


def failing_inputs():
    g = torch.Generator().manual_seed(10)
    return [
        _grads(g, "nan"),       # overflow at the minimum scale: raises
    ]
