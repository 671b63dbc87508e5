"""Small configurations and inputs that reach the branches, for any transformers model type.

Every model is built from its default config shrunk to a couple of layers (random weights; nothing
is downloaded). Inputs are chosen so data-dependent code runs: an attention mask with padding (so
`if not torch.all(mask == 1)` takes its slow path), integer ids inside the shrunk vocabulary,
decoder ids for encoder-decoder models, pixel values at the config's image size for vision models.
"""

from __future__ import annotations

import contextlib
from typing import Any

SMALL: dict[str, Any] = dict(
    hidden_size=32, num_hidden_layers=2, num_attention_heads=2, num_key_value_heads=2, intermediate_size=64,
    vocab_size=128, max_position_embeddings=64, head_dim=16, num_local_experts=4, num_experts=4,
    num_experts_per_tok=2, moe_intermediate_size=32, shared_expert_intermediate_size=32,
    d_model=32, encoder_layers=2, decoder_layers=2, encoder_attention_heads=2, decoder_attention_heads=2,
    encoder_ffn_dim=64, decoder_ffn_dim=64, n_layer=2, n_head=2, n_embd=32, num_layers=2, num_heads=2, d_ff=64,
    d_kv=16, num_decoder_layers=2, n_positions=64, max_source_positions=32, max_target_positions=64,
)
BATCH, SEQ = 2, 8

# Models whose configs derive their layer layout in `__init__` (the hybrid Mamba models): setting
# `num_hidden_layers` afterwards leaves a layout the model cannot build, and their Mamba kernels are
# CUDA-only. These are passed to the config's constructor (with the small sizes it accepts); the
# sizes among them are set again after shrinking.
INIT_OVERRIDES: dict[str, dict[str, Any]] = {
    "zamba": dict(num_hidden_layers=3, use_mamba_kernels=False),
    "zamba2": dict(num_hidden_layers=3, layers_block_type=["mamba", "mamba", "hybrid"], use_mamba_kernels=False, mamba_headdim=16, n_mamba_heads=4),
    "jamba": dict(use_mamba_kernels=False, attn_layer_period=2, attn_layer_offset=1, expert_layer_period=2, expert_layer_offset=1),
}


def small_config(model_type: str) -> Any:
    from transformers import AutoConfig

    overrides = INIT_OVERRIDES.get(model_type, {})
    config = AutoConfig.for_model(model_type, **_init_arguments(model_type, overrides))
    _shrink(config)
    for key, value in overrides.items():
        if key in SMALL:  # what shrinking overwrote; the rest the constructor may have translated
            setattr(config, key, value)
    _tokens_inside_vocabulary(config)
    for sub in ("text_config", "vision_config"):
        nested = getattr(config, sub, None)
        if nested is not None:
            _shrink(nested)
            _tokens_inside_vocabulary(nested)
    # a multimodal model may embed the text tokens with the nested vocabulary but keep the
    # special ids on the outer config
    text_vocab = getattr(getattr(config, "text_config", None), "vocab_size", None)
    if isinstance(text_vocab, int):
        _tokens_inside_vocabulary(config, text_vocab)
    return config


def _init_arguments(model_type: str, overrides: dict[str, Any]) -> dict[str, Any]:
    """The small sizes the config's constructor accepts, plus `overrides`; nothing for the other
    models, whose configs are shrunk after construction as before."""
    import inspect

    from transformers import AutoConfig

    if not overrides:
        return {}
    accepted = inspect.signature(type(AutoConfig.for_model(model_type)).__init__).parameters
    return {**{key: value for key, value in SMALL.items() if key in accepted}, **overrides}


def _shrink(config: Any) -> None:
    for key, value in SMALL.items():
        if isinstance(getattr(config, key, None), (list, tuple)):
            continue  # per-stage settings (Swin's depths and heads): an int would break `heads[i]`
        if hasattr(config, key):
            with contextlib.suppress(Exception):
                setattr(config, key, value)


def input_options(model: Any, config: Any) -> list[dict[str, Any]]:
    """Inputs to try, richest first: a text model with a vision tower gets text and an image, and
    text alone if the image does not fit (the probe keeps the first that runs eagerly)."""
    name = getattr(model, "main_input_name", "input_ids")
    if name in ("input_values", "input_features"):
        return _audio_options(name, config)
    inputs = inputs_for(model, config)
    if "input_ids" in inputs and "pixel_values" in inputs:
        return [inputs, {k: v for k, v in inputs.items() if k != "pixel_values"}]
    return [inputs]


def inputs_for(model: Any, config: Any) -> dict[str, Any]:
    """Keyword inputs for one forward pass; ValueError for input kinds the harness does not build."""
    import torch

    generator = torch.Generator().manual_seed(1)
    name = getattr(model, "main_input_name", "input_ids")
    if name == "input_ids":
        vocab = int(getattr(config, "vocab_size", None) or getattr(getattr(config, "text_config", None), "vocab_size", 100) or 100)
        ids = torch.randint(0, min(vocab, 100), (BATCH, SEQ), generator=generator)
        mask = torch.ones(BATCH, SEQ, dtype=torch.long)
        mask[1, :2] = 0  # left padding: the mask is not all ones
        inputs: dict[str, Any] = {"input_ids": ids, "attention_mask": mask}
        if getattr(config, "is_encoder_decoder", False):
            inputs["decoder_input_ids"] = torch.randint(0, min(vocab, 100), (BATCH, SEQ // 2), generator=generator)
        if getattr(config, "vision_config", None) is not None:  # text-image models (CLIP-like) take both
            inputs.update(_pixels(config, generator))
        return inputs
    if name == "pixel_values":
        return _pixels(config, generator)
    raise ValueError(f"inputs of kind {name!r} are not built by this harness")


def _pixels(config: Any, generator: Any) -> dict[str, Any]:
    import torch

    vision = getattr(config, "vision_config", None) or config
    size = getattr(vision, "image_size", 224)
    size = size[0] if isinstance(size, (list, tuple)) else size
    channels = getattr(vision, "num_channels", 3)
    frames = getattr(vision, "num_frames", None)
    if isinstance(frames, int):  # video models take (batch, frames, channels, height, width)
        return {"pixel_values": torch.randn(BATCH, frames, channels, int(size), int(size), generator=generator)}
    return {"pixel_values": torch.randn(BATCH, channels, int(size), int(size), generator=generator)}


def _audio_options(name: str, config: Any) -> list[dict[str, Any]]:
    """Raw waveforms (`input_values`: wav2vec2-like conv front ends) or filter-bank features
    (`input_features`: mel bins first for Whisper-like encoders, time first for Speech2Text-like
    ones), with and without a padded attention mask; decoder ids for encoder-decoder models."""
    import torch

    generator = torch.Generator().manual_seed(1)
    if name == "input_values":
        samples = 3200  # 0.2 s at 16 kHz: a few frames after a 320x conv downsampling
        candidates = [torch.randn(BATCH, samples, generator=generator), torch.randn(BATCH, 1, samples, generator=generator)]
        length = samples
    else:
        bins = next((getattr(config, k) for k in ("num_mel_bins", "input_feat_per_channel", "feature_size", "input_dim") if isinstance(getattr(config, k, None), int)), 80)
        positions = getattr(config, "max_source_positions", None)
        frames = 2 * positions if isinstance(positions, int) and positions <= 64 else 64
        candidates = [torch.randn(BATCH, bins, frames, generator=generator), torch.randn(BATCH, frames, bins, generator=generator)]
        length = frames
    options = []
    for values in candidates:
        base: dict[str, Any] = {name: values}
        if getattr(config, "is_encoder_decoder", False):
            vocab = int(getattr(config, "vocab_size", 100) or 100)
            base["decoder_input_ids"] = torch.randint(0, min(vocab, 100), (BATCH, SEQ // 2), generator=generator)
        mask = torch.ones(BATCH, length if values.shape[-1] == length else values.shape[1], dtype=torch.long)
        mask[1, -mask.shape[1] // 4 :] = 0  # the second example is padded: masks take their data-dependent path
        options += [{**base, "attention_mask": mask}, base]
    return options


def _tokens_inside_vocabulary(config: Any, vocab: int | None = None) -> None:
    """A shrunk vocabulary must still hold the special tokens (an embedding's padding_idx)."""
    vocab = vocab if vocab is not None else getattr(config, "vocab_size", None)
    if not isinstance(vocab, int):
        return
    for key in ("pad_token_id", "bos_token_id", "eos_token_id", "decoder_start_token_id", "image_token_id", "image_token_index"):
        value = getattr(config, key, None)
        if isinstance(value, int) and value >= vocab:
            with contextlib.suppress(Exception):
                setattr(config, key, vocab - 1)
