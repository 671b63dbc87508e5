"""Hugging Face `GenerationMixin._prepare_special_tokens` (called at the start of `generate`):
converts the special token ids of the generation config to tensors, and when no pad token is set
but an eos token is, uses the first eos token as pad token and logs
`logger.warning(f"Setting `pad_token_id` to `eos_token_id`:{pad_token_tensor} for open-end
generation.")`, formatting the tensor into the message. The tensor-dependent sanity checks next to
it are already skipped while Dynamo traces (`if not is_torchdynamo_compiling():`); that warning is
not.

Source: https://github.com/tenstorrent/tt-torch/issues/852 ("Disable logger level graph breaks":
"`torch.compile` introduces graph breaks ... 'Logger not supported for non-export cases' ...
transformers/generation/utils.py, line 2150 in _prepare_special_tokens ...
`logger.warning(f"Setting `pad_token_id` to `eos_token_id`:{pad_token_tensor} for open-end
generation.")`"), code at
https://github.com/huggingface/transformers/blob/v4.52.0/src/transformers/generation/utils.py (as of ~v4.46-v4.53)
(`GenerationMixin._prepare_special_tokens`). Reduced: the compiled unit is
`_prepare_special_tokens` itself, bound to a tiny decoder-only model (tt-torch compiles all of
`generate`); `GenerationConfig` is a dataclass whose `_*_token_tensor` attributes are fields, so
the harness compares what the method writes; `logger.warning_once` is transformers' lru_cache'd
helper; `isin_mps_friendly` is `torch.isin` (no MPS here).

Breaks: `logger.warning(f"Setting `pad_token_id` to `eos_token_id`:{pad_token_tensor} ...")`
(Logger methods are not traceable; the f-string formats a tensor). The other warnings are on
`not is_torchdynamo_compiling()` paths, i.e. eager only, as in the source.

HAND: the warning is emitted from a `torch.library.custom_op` with an ORDERED effect that receives
`pad_token_tensor` and logs the same f-string at run time (the real tensor formats the same way).
"""
import functools
import logging
from dataclasses import dataclass
from typing import List, Optional, Union

import torch
import torch.nn as nn

KIND = "logging-fstring-tensor"

logger = logging.getLogger(__name__)


@functools.lru_cache(None)
def _warning_once(*args, **kwargs):
    logger.warning(*args, **kwargs)


logger.warning_once = _warning_once


def is_torchdynamo_compiling():
    return torch.compiler.is_compiling()


def isin_mps_friendly(elements: torch.Tensor, test_elements: torch.Tensor | int) -> torch.Tensor:
    return torch.isin(elements, test_elements)


@dataclass
class GenerationConfig:
    bos_token_id: Optional[int] = None
    eos_token_id: Optional[Union[int, List[int], torch.Tensor]] = None
    pad_token_id: Optional[int] = None
    decoder_start_token_id: Optional[int] = None
    _bos_token_tensor: Optional[torch.Tensor] = None
    _eos_token_tensor: Optional[torch.Tensor] = None
    _pad_token_tensor: Optional[torch.Tensor] = None
    _decoder_start_token_tensor: Optional[torch.Tensor] = None


class _ModelConfig:
    is_encoder_decoder = False


class GenerationMixin:
    def _prepare_special_tokens(
        self,
        generation_config: GenerationConfig,
        kwargs_has_attention_mask: Optional[bool] = None,
        device: Optional[Union[torch.device, str]] = None,
    ):
        """
        Prepares the special tokens for generation, overwriting the generation config with their processed versions
        converted to tensor.

        Note that `generation_config` is changed in place and stops being serializable after this method is called.
        That is no problem if called within `generate` (`generation_config` is a local copy that doesn't leave the
        function). However, if called outside `generate`, consider creating a copy of `generation_config` first.
        """

        # Convert special tokens to tensors
        def _tensor_or_none(token, device=None):
            if token is None:
                return token

            device = device if device is not None else self.device
            if isinstance(token, torch.Tensor):
                return token.to(device)
            return torch.tensor(token, device=device, dtype=torch.long)

        bos_token_tensor = _tensor_or_none(generation_config.bos_token_id, device=device)
        eos_token_tensor = _tensor_or_none(generation_config.eos_token_id, device=device)
        pad_token_tensor = _tensor_or_none(generation_config.pad_token_id, device=device)
        decoder_start_token_tensor = _tensor_or_none(generation_config.decoder_start_token_id, device=device)

        # for BC we also try to get `decoder_start_token_id` or `bos_token_id` (#30892)
        if self.config.is_encoder_decoder:
            decoder_start_token_tensor = (
                decoder_start_token_tensor if decoder_start_token_tensor is not None else bos_token_tensor
            )

        # We can have more than one eos token. Always treat it as a 1D tensor (when it exists).
        if eos_token_tensor is not None and eos_token_tensor.ndim == 0:
            eos_token_tensor = eos_token_tensor.unsqueeze(0)

        # Set pad token if unset (and there are conditions to do so)
        if pad_token_tensor is None and eos_token_tensor is not None:
            if not is_torchdynamo_compiling():
                if kwargs_has_attention_mask is not None and not kwargs_has_attention_mask:
                    logger.warning(
                        "The attention mask and the pad token id were not set. As a consequence, you may observe "
                        "unexpected behavior. Please pass your input's `attention_mask` to obtain reliable results."
                    )
            pad_token_tensor = eos_token_tensor[0]
            logger.warning(f"Setting `pad_token_id` to `eos_token_id`:{pad_token_tensor} for open-end generation.")

        # Sanity checks/warnings
        if self.config.is_encoder_decoder and decoder_start_token_tensor is None:
            raise ValueError(
                "`decoder_start_token_id` or `bos_token_id` has to be defined for encoder-decoder generation."
            )
        if not is_torchdynamo_compiling():  # Checks that depend on tensor-dependent control flow
            if (
                eos_token_tensor is not None
                and isin_mps_friendly(elements=eos_token_tensor, test_elements=pad_token_tensor).any()
            ):
                if kwargs_has_attention_mask is not None and not kwargs_has_attention_mask:
                    logger.warning_once(
                        "The attention mask is not set and cannot be inferred from input because pad token is same as "
                        "eos token. As a consequence, you may observe unexpected behavior. Please pass your input's "
                        "`attention_mask` to obtain reliable results."
                    )
            if eos_token_tensor is not None and (
                torch.is_floating_point(eos_token_tensor) or (eos_token_tensor < 0).any()
            ):
                logger.warning(
                    f"`eos_token_id` should consist of positive integers, but is {eos_token_tensor}. Your generation "
                    "will not stop until the maximum length is reached. Depending on other flags, it may even crash."
                )

        # Update generation config with the updated special tokens tensors
        # NOTE: this must be written into a different attribute name than the one holding the original special tokens
        # (in their non-tensor form), in order to enable end-to-end compilation. See
        # https://pytorch.org/docs/stable/torch.compiler_cudagraph_trees.html#limitations
        generation_config._bos_token_tensor = bos_token_tensor
        generation_config._eos_token_tensor = eos_token_tensor
        generation_config._pad_token_tensor = pad_token_tensor
        generation_config._decoder_start_token_tensor = decoder_start_token_tensor


class TinyCausalLM(nn.Module, GenerationMixin):
    def __init__(self, vocab=16, dim=8):
        super().__init__()
        self.config = _ModelConfig()
        self.embed_tokens = nn.Embedding(vocab, dim)
        self.lm_head = nn.Linear(dim, vocab, bias=False)

    @property
    def device(self) -> torch.device:
        return next(self.parameters()).device

    def forward(self, input_ids):
        return self.lm_head(self.embed_tokens(input_ids))


def make():
    torch.manual_seed(0)
    model = TinyCausalLM().eval()
    return model._prepare_special_tokens


def inputs():
    return [
        (GenerationConfig(bos_token_id=1, eos_token_id=2), True),  # pad <- eos, warning
        (GenerationConfig(eos_token_id=[2, 7], pad_token_id=0), False),
        (GenerationConfig(eos_token_id=2, pad_token_id=2), False),  # pad == eos, no mask
        (GenerationConfig(bos_token_id=1), None),  # no eos, no pad
        (GenerationConfig(eos_token_id=[3, -1], pad_token_id=0), None),  # negative eos id
        (GenerationConfig(eos_token_id=5), False),  # pad <- eos, no mask: two warnings
        (GenerationConfig(eos_token_id=torch.tensor([4, 6]), pad_token_id=1), True),
        (GenerationConfig(bos_token_id=1, eos_token_id=[9, 2]), None),  # pad <- eos[0]
        (GenerationConfig(eos_token_id=2, pad_token_id=2), False),  # warning_once: not again
    ]
