"""sglang's Sampler: optional NaN detection on the logits (log a warning, replace NaN by -1e5, crash in
CI), then greedy argmax or the torch-native top-k/top-p/min-p sampling fallback, and optional top
logprobs returned as Python lists.

Source: https://github.com/sgl-project/sglang/blob/main/python/sglang/srt/layers/sampler.py
(`Sampler.forward`, `top_k_top_p_min_p_sampling_from_probs_torch`, `top_p_normalize_probs_torch`,
`get_top_logprobs`; `crash_on_warnings` reads an environment flag in sglang, here a module flag).

Breaks: `if self.use_nan_detection and torch.any(torch.isnan(logits))` (data-dependent branch) with
`logger.warning` inside it; `ret.values.tolist()` / `ret.indices.tolist()` in `get_top_logprobs`.

HAND: partial -- the NaN check moves into a `torch.library.custom_op` with an ORDERED effect that logs
the same warning at run time iff the logits contain a NaN, and `torch.where(isnan, -1e5, logits)` is
applied unconditionally (the identity when there is no NaN); as in the original, the caller's
logits are overwritten with the probabilities exactly when there was no NaN and the sampling path
ran (through a mutating custom op). The top logprobs stay Python lists (the caller's API), so
`tolist` stays.
"""
import dataclasses
import logging
from typing import List, Optional

import torch
from torch import nn
from torch._library.effects import EffectType

logger = logging.getLogger(__name__)

_CRASH_ON_WARNINGS = False
global_server_args_dict = {"enable_nan_detection": True, "sampling_backend": "pytorch"}


def crash_on_warnings():
    # Crash on warning if we are running CI tests
    return _CRASH_ON_WARNINGS


@torch.library.custom_op("blind_sglang::nan_logits_check", mutates_args=())
def _nan_logits_check(logits: torch.Tensor) -> None:
    if torch.any(torch.isnan(logits)):
        logger.warning("Detected errors during sampling! NaN in the logits.")
        if crash_on_warnings():
            raise ValueError("Detected errors during sampling! NaN in the logits.")


@_nan_logits_check.register_fake
def _(logits):
    return None


torch.library._register_effectful_op("blind_sglang::nan_logits_check", EffectType.ORDERED)


# The write-back into the caller's logits goes through a mutating custom op, and the sampling masks
# are applied out of place (`probs_sort` is a fresh tensor from `sort`, so nothing else sees the
# difference): inductor (torch 2.13) fails with `KeyError: 'bufN'`/'opN' on in-place writes after a
# sort in one graph -- the original fails the same way under inductor on these inputs (NOTES.md).
@torch.library.custom_op("blind_sglang::write_back_probs", mutates_args=("dst",))
def _write_back_probs(dst: torch.Tensor, has_nan: torch.Tensor, probs: torch.Tensor) -> None:
    dst.copy_(torch.where(has_nan, dst, probs))


@_write_back_probs.register_fake
def _(dst, has_nan, probs):
    return None


@dataclasses.dataclass
class LogitsProcessorOutput:
    next_token_logits: torch.Tensor
    next_token_logprobs: Optional[torch.Tensor] = None
    next_token_top_logprobs_val: Optional[List] = None
    next_token_top_logprobs_idx: Optional[List] = None


@dataclasses.dataclass
class SamplingBatchInfo:
    temperatures: torch.Tensor
    top_ps: torch.Tensor
    top_ks: torch.Tensor
    min_ps: torch.Tensor
    is_all_greedy: bool
    need_min_p_sampling: bool


class Sampler(nn.Module):
    def __init__(self):
        super().__init__()
        self.use_nan_detection = global_server_args_dict["enable_nan_detection"]

    def forward(
        self,
        logits_output: LogitsProcessorOutput,
        sampling_info: SamplingBatchInfo,
        return_logprob: bool,
        top_logprobs_nums: List[int],
    ):
        logits = logits_output.next_token_logits
        # The original replaces the logits by a new tensor only when they contain a NaN; otherwise
        # the sampling below works in place on the caller's tensor. Keep both: work on a copy and
        # write the probabilities back into the caller's tensor iff there was no NaN.
        caller_logits = None

        if self.use_nan_detection:
            _nan_logits_check(logits)
            caller_logits = logits
            has_nan = torch.any(torch.isnan(logits))
            logits = torch.where(
                torch.isnan(logits), torch.full_like(logits, -1e5), logits
            )

        if sampling_info.is_all_greedy:
            # Use torch.argmax if all requests use greedy sampling
            batch_next_token_ids = torch.argmax(logits, -1)
            if return_logprob:
                logprobs = torch.nn.functional.log_softmax(logits, dim=-1)
        else:
            # Post process logits
            # (out of place: `logits` is already a copy; inductor fails with `KeyError: 'bufN'` on an
            # in-place softmax write followed by a sort, see NOTES.md)
            probs = torch.softmax(logits / sampling_info.temperatures, dim=-1)
            del logits
            if caller_logits is not None:
                _write_back_probs(caller_logits, has_nan, probs)

            if global_server_args_dict["sampling_backend"] == "pytorch":
                # A slower fallback implementation with torch native operations.
                batch_next_token_ids = top_k_top_p_min_p_sampling_from_probs_torch(
                    probs,
                    sampling_info.top_ks,
                    sampling_info.top_ps,
                    sampling_info.min_ps,
                    sampling_info.need_min_p_sampling,
                )

                if return_logprob:
                    # clamp to avoid -inf
                    logprobs = torch.log(
                        top_p_normalize_probs_torch(probs, sampling_info.top_ps)
                    ).clamp(min=torch.finfo(probs.dtype).min)
            else:
                raise ValueError(
                    f"Invalid sampling backend: {global_server_args_dict['sampling_backend']}"
                )

        # Attach logprobs to logits_output (in-place modification)
        if return_logprob:
            if any(x > 0 for x in top_logprobs_nums):
                (
                    logits_output.next_token_top_logprobs_val,
                    logits_output.next_token_top_logprobs_idx,
                ) = get_top_logprobs(logprobs, top_logprobs_nums)

            logits_output.next_token_logprobs = logprobs[
                torch.arange(len(batch_next_token_ids), device=logprobs.device),
                batch_next_token_ids,
            ]

        return batch_next_token_ids


def top_k_top_p_min_p_sampling_from_probs_torch(
    probs: torch.Tensor,
    top_ks: torch.Tensor,
    top_ps: torch.Tensor,
    min_ps: torch.Tensor,
    need_min_p_sampling: bool,
):
    """A top-k, top-p and min-p sampling implementation with native pytorch operations."""
    probs_sort, probs_idx = probs.sort(dim=-1, descending=True)
    probs_sum = torch.cumsum(probs_sort, dim=-1)
    probs_sort = probs_sort.masked_fill(
        torch.arange(0, probs.shape[-1], device=probs.device).view(1, -1)
        >= top_ks.view(-1, 1), 0.0)
    probs_sort = probs_sort.masked_fill((probs_sum - probs_sort) > top_ps.view(-1, 1), 0.0)

    if need_min_p_sampling:
        min_p_thresholds = probs_sort[:, 0] * min_ps
        probs_sort = probs_sort.masked_fill(probs_sort < min_p_thresholds.view(-1, 1), 0.0)

    sampled_index = torch.multinomial(probs_sort, num_samples=1)
    # int32 range is enough to represent the token ids
    probs_idx = probs_idx.to(torch.int32)
    batch_next_token_ids = torch.gather(probs_idx, dim=1, index=sampled_index).view(-1)
    return batch_next_token_ids


def top_p_normalize_probs_torch(
    probs: torch.Tensor,
    top_ps: torch.Tensor,
):
    probs_sort, probs_idx = probs.sort(dim=-1, descending=True)
    probs_sum = torch.cumsum(probs_sort, dim=-1)
    probs_sort[(probs_sum - probs_sort) > top_ps.view(-1, 1)] = 0.0
    probs_sort.div_(probs_sort.sum(dim=-1, keepdim=True))
    return torch.zeros_like(probs_sort).scatter_(-1, probs_idx, probs_sort)


def get_top_logprobs(logprobs: torch.Tensor, top_logprobs_nums: List[int]):
    assert len(top_logprobs_nums) == logprobs.shape[0], (
        len(top_logprobs_nums),
        logprobs.shape[0],
    )
    max_k = max(top_logprobs_nums)
    ret = logprobs.topk(max_k, dim=1)
    values = ret.values.tolist()
    indices = ret.indices.tolist()

    output_top_logprobs_val = []
    output_top_logprobs_idx = []
    for i, k in enumerate(top_logprobs_nums):
        output_top_logprobs_val.append(values[i][:k])
        output_top_logprobs_idx.append(indices[i][:k])
    return output_top_logprobs_val, output_top_logprobs_idx


def make():
    torch.manual_seed(0)
    return Sampler()


def inputs():
    g = torch.Generator().manual_seed(7)
    B, V = 3, 10

    def info(greedy, min_p=False):
        return SamplingBatchInfo(
            temperatures=torch.tensor([[0.7], [1.0], [1.3]]),
            top_ps=torch.tensor([0.9, 1.0, 0.5]),
            top_ks=torch.tensor([5, 10, 3]),
            min_ps=torch.tensor([0.0, 0.05, 0.1]),
            is_all_greedy=greedy,
            need_min_p_sampling=min_p,
        )

    def logits(nan=False):
        t = torch.randn(B, V, generator=g) * 2
        if nan:
            t[1, 3] = float("nan")
        return LogitsProcessorOutput(next_token_logits=t)

    return [
        (logits(), info(True), False, [0, 0, 0]),
        (logits(nan=True), info(True), False, [0, 0, 0]),
        (logits(), info(False), False, [0, 0, 0]),
        (logits(nan=True), info(False, min_p=True), False, [0, 0, 0]),
        (logits(), info(True), True, [2, 0, 1]),
        (logits(nan=True), info(True), True, [0, 0, 0]),
        (logits(), info(False, min_p=True), True, [3, 1, 2]),
        (logits(nan=True), info(False), True, [1, 1, 1]),
        (logits(), info(False), True, [0, 0, 0]),
    ]


KIND = "branch-logging+tolist"
