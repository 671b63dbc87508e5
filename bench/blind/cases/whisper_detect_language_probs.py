"""Whisper's language identification: one decoder step from <|startoftranscript|>, suppress every
non-language token, and return the argmax language token plus, per audio, a dict of language-code ->
probability read out with `.item()`.

Source: https://github.com/openai/whisper/blob/main/whisper/decoding.py (detect_language).
Reduced: a tiny stand-in model (Conv1d+GELU "encoder", embedding + mean-pooled audio features
"decoder") and a tokenizer object with four language tokens.

Breaks: `language_token_probs[i, j].item()` inside the dict comprehension (Tensor.item(), one per
language and audio); the comprehension over `range(n_audio)` builds Python floats.

HAND: none — the function returns `language_probs`, Python dicts of Python floats read from the
device, so some device-to-host read stays whatever the rewrite.
"""
from dataclasses import dataclass
from typing import List, Tuple

import numpy as np
import torch
import torch.nn.functional as F
from torch import Tensor, nn


@dataclass
class ModelDimensions:
    n_mels: int = 6
    n_audio_ctx: int = 8
    n_audio_state: int = 10
    n_vocab: int = 12


class TinyWhisper(nn.Module):
    def __init__(self, dims: ModelDimensions):
        super().__init__()
        self.dims = dims
        self.conv = nn.Conv1d(dims.n_mels, dims.n_audio_state, kernel_size=3, padding=1)
        self.token_embedding = nn.Embedding(dims.n_vocab, dims.n_audio_state)
        self.out = nn.Linear(dims.n_audio_state, dims.n_vocab)

    @property
    def is_multilingual(self):
        return True

    def encoder(self, mel: Tensor) -> Tensor:
        return F.gelu(self.conv(mel)).permute(0, 2, 1)  # [n_audio, n_audio_ctx, n_audio_state]

    def logits(self, tokens: Tensor, audio_features: Tensor) -> Tensor:
        x = self.token_embedding(tokens) + audio_features.mean(1, keepdim=True)
        return self.out(torch.tanh(x)) * 4.0


class Tokenizer:
    def __init__(self, language="en"):
        language = language or None  # "" stands for a tokenizer without a language (English-only)
        self.sot = 1
        self.eot = 0
        self.language = language
        self.all_language_tokens = (6, 7, 8, 9)
        self.all_language_codes = ("en", "de", "fr", "es")
        self.language_token = None if language is None else 6 + self.all_language_codes.index(language)
        self.sot_sequence = (self.sot,) if language is None else (self.sot, self.language_token, 10)


def get_tokenizer(multilingual):
    return Tokenizer("en")


@torch.no_grad()
def detect_language(model: "TinyWhisper", mel: Tensor, tokenizer: Tokenizer = None) -> Tuple[Tensor, List[dict]]:
    """
    Detect the spoken language in the audio, and return them as list of strings, along with the ids
    of the most probable language tokens and the probability distribution over all language tokens.
    This is performed outside the main decode loop in order to not interfere with kv-caching.
    """
    if tokenizer is None:
        tokenizer = get_tokenizer(model.is_multilingual)
    if tokenizer.language is None or tokenizer.language_token not in tokenizer.sot_sequence:
        raise ValueError(f"This model doesn't have language tokens so it can't perform lang id")

    single = mel.ndim == 2
    if single:
        mel = mel.unsqueeze(0)

    # skip encoder forward pass if already-encoded audio features were given
    if mel.shape[-2:] != (model.dims.n_audio_ctx, model.dims.n_audio_state):
        mel = model.encoder(mel)

    # forward pass using a single token, startoftranscript
    n_audio = mel.shape[0]
    x = torch.tensor([[tokenizer.sot]] * n_audio).to(mel.device)  # [n_audio, 1]
    logits = model.logits(x, mel)[:, 0]

    # collect detected languages; suppress all non-language tokens
    mask = torch.ones(logits.shape[-1], dtype=torch.bool)
    mask[list(tokenizer.all_language_tokens)] = False
    logits[:, mask] = -np.inf
    language_tokens = logits.argmax(dim=-1)
    language_token_probs = logits.softmax(dim=-1).cpu()
    language_probs = [
        {
            c: language_token_probs[i, j].item()
            for j, c in zip(tokenizer.all_language_tokens, tokenizer.all_language_codes)
        }
        for i in range(n_audio)
    ]

    if single:
        language_tokens = language_tokens[0]
        language_probs = language_probs[0]

    return language_tokens, language_probs


class LanguageDetector(nn.Module):
    """Holds the model (so its parameters are part of the callable) and calls detect_language."""

    def __init__(self):
        super().__init__()
        self.model = TinyWhisper(ModelDimensions())

    def forward(self, mel, language=None):
        tokenizer = None if language is None else Tokenizer(language)
        return detect_language(self.model, mel, tokenizer)


def make():
    torch.manual_seed(0)
    return LanguageDetector()


def inputs():
    g = torch.Generator().manual_seed(0)
    d = ModelDimensions()
    out = []
    for i in range(4):
        out.append((torch.randn(2 + i % 2, d.n_mels, d.n_audio_ctx, generator=g),))   # batched mel
    out.append((torch.randn(d.n_mels, d.n_audio_ctx, generator=g),))                # single mel
    out.append((torch.randn(d.n_mels, 5, generator=g),))                            # single, shorter
    out.append((torch.randn(2, d.n_audio_ctx, d.n_audio_state, generator=g),))      # already encoded
    out.append((torch.randn(3, d.n_mels, d.n_audio_ctx, generator=g) * 3, "fr"))
    out.append((torch.randn(d.n_audio_ctx, d.n_audio_state, generator=g),))         # single, encoded
    return out


def failing_inputs():
    d = ModelDimensions()
    return [(torch.zeros(1, d.n_mels, d.n_audio_ctx), "")]


KIND = "item-loop"
