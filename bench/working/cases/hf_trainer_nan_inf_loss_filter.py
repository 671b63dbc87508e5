"""One iteration of the Hugging Face Trainer's inner training loop: `training_step` (forward, scale by
the accumulation steps, backward, return the detached loss), then the running `tr_loss` is updated,
and with `logging_nan_inf_filter` a NaN/inf step loss is replaced by the running average.

Source: https://github.com/huggingface/transformers/blob/main/src/transformers/trainer.py
(`Trainer._inner_training_loop`: `if args.logging_nan_inf_filter and (torch.isnan(tr_loss_step)
or torch.isinf(tr_loss_step)): tr_loss = tr_loss + tr_loss / (1 + self.state.global_step -
self._globalstep_last_logged)`; `Trainer.training_step`). The accumulation tensor is kept as a
buffer of the step module; the model is a tiny classifier.

Breaks: `loss.backward()` inside the compiled step; `torch.isnan(tr_loss_step) or
torch.isinf(tr_loss_step)` -- `bool()` of 0-d tensors (data-dependent branch).

HAND: partial -- the filter becomes `torch.where(isnan | isinf, tr_loss + tr_loss / (1 + ...),
tr_loss + tr_loss_step)` (the division count is a Python int); the backward stays.
"""
import dataclasses

import torch
import torch.nn.functional as F
from torch import nn


@dataclasses.dataclass
class TrainingArguments:
    logging_nan_inf_filter: bool = True
    gradient_accumulation_steps: int = 2


@dataclasses.dataclass
class TrainerState:
    global_step: int = 0


class TinyClassifier(nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = nn.Linear(6, 8)
        self.head = nn.Linear(8, 3)

    def forward(self, features, labels):
        logits = self.head(torch.tanh(self.proj(features)))
        return {"loss": F.cross_entropy(logits, labels), "logits": logits}


class TrainerInnerStep(nn.Module):
    def __init__(self):
        super().__init__()
        self.model = TinyClassifier()
        self.args = TrainingArguments()
        self.state = TrainerState()
        self._globalstep_last_logged = 0
        self._step = -1
        self.register_buffer("tr_loss", torch.tensor(0.0))

    def compute_loss(self, model, inputs):
        outputs = model(**inputs)
        return outputs["loss"] if isinstance(outputs, dict) else outputs[0]

    def training_step(self, model, inputs):
        model.train()
        loss = self.compute_loss(model, inputs)
        if self.args.gradient_accumulation_steps > 1:
            loss = loss / self.args.gradient_accumulation_steps
        loss.backward()
        return loss.detach()

    def forward(self, features, labels):
        self._step += 1
        step = self._step
        tr_loss = self.tr_loss
        tr_loss_step = self.training_step(self.model, {"features": features, "labels": labels})

        if (
            self.args.logging_nan_inf_filter
            and (torch.isnan(tr_loss_step) or torch.isinf(tr_loss_step))
        ):
            # if loss is nan or inf simply add the average of previous logged losses
            tr_loss += tr_loss / (1 + self.state.global_step - self._globalstep_last_logged)
        else:
            tr_loss += tr_loss_step

        if (step + 1) % self.args.gradient_accumulation_steps == 0:
            self.state.global_step += 1
        return tr_loss_step, tr_loss.clone()


def make():
    torch.manual_seed(0)
    return TrainerInnerStep()


def inputs():
    g = torch.Generator().manual_seed(9)
    calls = []
    for n in range(10):
        x = torch.randn(4, 6, generator=g)
        y = torch.randint(0, 3, (4,), generator=g)
        if n in (3, 7):
            x[1, 2] = float("nan")    # a corrupted sample: NaN loss
        elif n == 5:
            x[0, 0] = float("inf")    # overflowing feature: non-finite loss
        calls.append((x, y))
    return calls


KIND = "backward+branch"
