"""A Lightning training step compiled with its LightningModule: `training_step` calls `self.log(...)`,
which Lightning decorates with `@torch.compiler.disable` (as it does `_ResultCollection.log` and
`update_metrics`), because `log` inspects the step's signature (`inspect.getfullargspec`), which
Dynamo fails on under torch 2.12/2.13 (Lightning-AI/pytorch-lightning#21836).

Source: https://github.com/Lightning-AI/pytorch-lightning/blob/master/src/lightning/pytorch/core/module.py
(`LightningModule.log`, `__to_tensor`),
https://github.com/Lightning-AI/pytorch-lightning/blob/master/src/lightning/pytorch/trainer/connectors/logger_connector/result.py
(`_ResultCollection.log`, `update_metrics`, `_extract_batch_size`, `_ResultMetric.update`/`compute`;
the metric is a plain object here, not a torchmetrics `Metric`),
https://github.com/Lightning-AI/pytorch-lightning/blob/master/src/lightning/pytorch/utilities/signature_utils.py
(`is_param_in_hook_signature`), https://github.com/Lightning-AI/pytorch-lightning/pull/21837 and
https://github.com/Lightning-AI/pytorch-lightning/issues/17177 (the LitClassifier-style step).

Breaks: each `self.log(...)` call in `training_step` -- a call to a `torch.compiler.disable`d
function.

HAND: drop the three decorators and compute the signature check
(`is_param_in_hook_signature(self.training_step, "dataloader_iter", explicit=True)`) once when the
loop step is built instead of in every `log` call (the step's signature does not change); the
bookkeeping left (dict updates, detached tensor sums) traces, and the logged values are the same.
"""
import dataclasses
import inspect
import numbers
import warnings
from typing import Any, Callable, Optional, Union

import torch
import torch.nn.functional as F
from torch import Tensor, nn


def is_param_in_hook_signature(
    hook_fx: Callable, param: str, explicit: bool = False, min_args: Optional[int] = None
) -> bool:
    if hasattr(hook_fx, "__wrapped__"):
        # in case the hook has a decorator
        hook_fx = hook_fx.__wrapped__
    parameters = inspect.getfullargspec(hook_fx)
    args = parameters.args[1:]  # ignore `self`
    return (
        param in args
        or (not explicit and (parameters.varargs is not None))
        or (isinstance(min_args, int) and len(args) >= min_args)
    )


class MisconfigurationException(Exception):
    pass


@dataclasses.dataclass
class _Metadata:
    fx: str
    name: str
    prog_bar: bool = False
    logger: bool = True
    on_step: bool = False
    on_epoch: bool = True
    reduce_fx: Any = "mean"

    @property
    def is_mean_reduction(self) -> bool:
        return self.reduce_fx == "mean"

    @property
    def is_sum_reduction(self) -> bool:
        return self.reduce_fx == "sum"


class _ResultMetric:
    """Wraps the value provided to `LightningModule.log` (mean/sum reductions)."""

    def __init__(self, metadata: _Metadata, is_tensor: bool) -> None:
        self.is_tensor = is_tensor
        self.meta = metadata
        self.has_reset = False
        self.value = torch.tensor(0.0, dtype=torch.get_default_dtype())
        if self.meta.is_mean_reduction:
            self.cumulated_batch_size = torch.tensor(0)
        self._forward_cache = None

    def update(self, value, batch_size: int) -> None:
        dtype = torch.get_default_dtype()
        if value.dtype not in (torch.float32, torch.float64):
            value = value.to(dtype)

        if self.meta.on_step:
            self._forward_cache = value.clone()
            # performance: no need to accumulate on values only logged on_step
            if not self.meta.on_epoch:
                self.value = self._forward_cache
                return

        # perform accumulation with reduction
        if self.meta.is_mean_reduction:
            # do not use `+=` as it doesn't do type promotion
            self.value = self.value + value * batch_size
            self.cumulated_batch_size = self.cumulated_batch_size + batch_size
        elif self.meta.is_sum_reduction:
            self.value = self.value + value

    def compute(self) -> Tensor:
        value = self.value.clone()
        if self.meta.is_mean_reduction and self.meta.on_epoch:
            return value / self.cumulated_batch_size
        return value


class _ResultCollection(dict):
    def __init__(self, training: bool) -> None:
        super().__init__()
        self.training = training
        self.batch: Optional[Any] = None
        self.batch_size: Optional[int] = None

    def _extract_batch_size(self, value: _ResultMetric, batch_size: Optional[int], meta: _Metadata) -> int:
        # check if we have extracted the batch size already
        if batch_size is None:
            batch_size = self.batch_size

        if batch_size is not None:
            return batch_size

        batch_size = 1
        if self.batch is not None and value.is_tensor and meta.on_epoch and meta.is_mean_reduction:
            batch_size = len(self.batch[0])
            self.batch_size = batch_size

        return batch_size

    @torch.compiler.disable
    def log(self, fx: str, name: str, value, prog_bar: bool = False, logger: bool = True,
            on_step: bool = False, on_epoch: bool = True, reduce_fx="mean", batch_size: Optional[int] = None) -> None:
        # no metrics should be logged with graphs
        value = value.detach()

        # storage key
        key = f"{fx}.{name}"

        meta = _Metadata(fx=fx, name=name, prog_bar=prog_bar, logger=logger, on_step=on_step,
                         on_epoch=on_epoch, reduce_fx=reduce_fx)

        # register logged value if it doesn't exist
        if key not in self:
            metric = _ResultMetric(meta, isinstance(value, Tensor))
            self[key] = metric

        # check the stored metadata and the current one match
        elif meta != self[key].meta:
            raise MisconfigurationException(
                f"You called `self.log({name}, ...)` twice in `{fx}` with different arguments. This is not allowed"
            )

        batch_size = self._extract_batch_size(self[key], batch_size, meta)
        self.update_metrics(key, value, batch_size)

    @torch.compiler.disable
    def update_metrics(self, key: str, value, batch_size: int) -> None:
        result_metric = self[key]
        result_metric.update(value, batch_size)
        result_metric.has_reset = False


class _Trainer:
    def __init__(self):
        self.training = True
        self.barebones = False
        self._results = _ResultCollection(training=True)


class LightningModule(nn.Module):
    def __init__(self):
        super().__init__()
        self._trainer = None
        self._current_fx_name = None

    @torch.compiler.disable
    def log(self, name: str, value, prog_bar: bool = False, logger: Optional[bool] = None,
            on_step: Optional[bool] = None, on_epoch: Optional[bool] = None, reduce_fx="mean",
            batch_size: Optional[int] = None) -> None:
        """Log a key, value pair."""
        trainer = self._trainer
        if trainer is None:
            # not an error to support testing the `*_step` methods without a `Trainer` reference
            warnings.warn(
                "You are trying to `self.log()` but the `self.trainer` reference is not registered on the model yet."
                " This is most likely because the model hasn't been passed to the `Trainer`"
            )
            return
        results = trainer._results
        if self._current_fx_name is None:
            raise MisconfigurationException(
                "You are trying to `self.log()` but it is not managed by the `Trainer` control flow"
            )

        # the defaults of `_FxValidator` for `training_step`
        on_step = True if on_step is None else on_step
        on_epoch = False if on_epoch is None else on_epoch

        value = self.__to_tensor(value, name)

        if (
            trainer.training
            and is_param_in_hook_signature(self.training_step, "dataloader_iter", explicit=True)
            and batch_size is None
        ):
            raise MisconfigurationException(
                "With `def training_step(self, dataloader_iter)`, `self.log(..., batch_size=...)` should be provided."
            )

        if logger is None:
            logger = True

        results.log(self._current_fx_name, name, value, prog_bar=prog_bar, logger=logger,
                    on_step=on_step, on_epoch=on_epoch, reduce_fx=reduce_fx, batch_size=batch_size)

    def __to_tensor(self, value: Union[Tensor, numbers.Number], name: str) -> Tensor:
        value = (
            value.clone().detach()
            if isinstance(value, Tensor)
            else torch.tensor(value, dtype=torch.get_default_dtype())
        )
        if not torch.numel(value) == 1:
            raise ValueError(
                f"`self.log({name}, {value})` was called, but the tensor must have a single element."
                f" You can try doing `self.log({name}, {value}.mean())`"
            )
        value = value.squeeze()
        return value


class LitClassifier(LightningModule):
    def __init__(self):
        super().__init__()
        self.l1 = torch.nn.Linear(12, 4)

    def forward(self, x):
        return torch.relu(self.l1(x.view(x.size(0), -1)))

    def training_step(self, batch, batch_idx):
        x, y = batch
        logits = self(x)
        loss = F.cross_entropy(logits, y)
        self.log("train_loss", loss)
        acc = (logits.argmax(-1) == y).float().mean()
        self.log("train_acc", acc, on_epoch=True, prog_bar=True)
        return loss


class FitLoopStep(nn.Module):
    """What the fit loop does around one (compiled) `training_step`: set the batch on the results,
    run the step, and read the logged metrics."""

    def __init__(self):
        super().__init__()
        self.model = LitClassifier()
        self.trainer = _Trainer()
        self.model._trainer = self.trainer
        self.model._current_fx_name = "training_step"

    def forward(self, batch, batch_idx):
        results = self.trainer._results
        results.batch = batch
        results.batch_size = None
        loss = self.model.training_step(batch, batch_idx)
        return loss, {key: metric.compute() for key, metric in results.items()}


def make():
    torch.manual_seed(0)
    return FitLoopStep()


def inputs():
    g = torch.Generator().manual_seed(23)
    calls = []
    for i, B in enumerate([4, 4, 3, 5, 4, 2, 6, 4]):
        x = torch.randn(B, 3, 4, generator=g)
        y = torch.randint(0, 4, (B,), generator=g)
        calls.append(((x, y), i))
    return calls


KIND = "compiler-disable"
GRAD = True
