"""k2/icefall RNN-T (transducer) greedy search for one utterance: at each encoder frame the joiner
scores the stateless decoder's output; a non-blank symbol is appended to the hypothesis and the decoder
is re-run on the last `context_size` symbols, a blank advances to the next frame.

Source: https://github.com/k2-fsa/icefall/blob/master/egs/librispeech/ASR/pruned_transducer_stateless2/beam_search.py
(`greedy_search`, with the stateless `Decoder` and `Joiner` of the same recipe reduced to a few layers).

Breaks: `y = logits.argmax().item()` in the decoding loop (the symbol then decides whether the decoder is
re-run from `torch.tensor([hyp[-context_size:]])` or the frame index advances).

HAND: none — the result is a Python list of symbol ids whose length (and the number of decoder calls)
depends on the argmax of every step, so the symbols must be read back to the host one by one.
"""

import torch
import torch.nn as nn
import torch.nn.functional as F


class Decoder(nn.Module):
    """Stateless decoder: embedding + a depthwise conv over the last `context_size` symbols."""

    def __init__(self, vocab_size, decoder_dim, blank_id, context_size):
        super().__init__()
        self.embedding = nn.Embedding(vocab_size, decoder_dim, padding_idx=blank_id)
        self.blank_id = blank_id
        self.context_size = context_size
        self.vocab_size = vocab_size
        if context_size > 1:
            self.conv = nn.Conv1d(decoder_dim, decoder_dim, kernel_size=context_size, padding=0,
                                  groups=decoder_dim, bias=False)

    def forward(self, y, need_pad=True):
        y = y.to(torch.int64)
        # this stuff about clamp() is a temporary fix for a mismatch
        # at utterance start, we use negative ids in beam_search.py
        embedding_out = self.embedding(y.clamp(min=0)) * (y >= 0).unsqueeze(-1)
        if self.context_size > 1:
            embedding_out = embedding_out.permute(0, 2, 1)
            if need_pad is True:
                embedding_out = F.pad(embedding_out, pad=(self.context_size - 1, 0))
            else:
                # During inference time, there is no need to do extra padding
                # as we only need one output
                assert embedding_out.size(-1) == self.context_size
            embedding_out = self.conv(embedding_out)
            embedding_out = embedding_out.permute(0, 2, 1)
        embedding_out = F.relu(embedding_out)
        return embedding_out


class Joiner(nn.Module):
    def __init__(self, encoder_dim, decoder_dim, joiner_dim, vocab_size):
        super().__init__()
        self.encoder_proj = nn.Linear(encoder_dim, joiner_dim)
        self.decoder_proj = nn.Linear(decoder_dim, joiner_dim)
        self.output_linear = nn.Linear(joiner_dim, vocab_size)

    def forward(self, encoder_out, decoder_out, project_input=True):
        assert encoder_out.ndim == decoder_out.ndim == 4
        if project_input:
            logit = self.encoder_proj(encoder_out) + self.decoder_proj(decoder_out)
        else:
            logit = encoder_out + decoder_out
        logit = self.output_linear(torch.tanh(logit))
        return logit


class Transducer(nn.Module):
    def __init__(self, encoder_dim=6, decoder_dim=5, joiner_dim=7, vocab_size=6, blank_id=0, context_size=2):
        super().__init__()
        self.decoder = Decoder(vocab_size, decoder_dim, blank_id, context_size)
        self.joiner = Joiner(encoder_dim, decoder_dim, joiner_dim, vocab_size)


def greedy_search(model, encoder_out, max_sym_per_frame):
    """Greedy search for a single utterance.
    Args:
      model:
        An instance of `Transducer`.
      encoder_out:
        A tensor of shape (N, T, C) from the encoder. Support only N==1 for now.
      max_sym_per_frame:
        Maximum number of symbols per frame. If it is set to 0, the WER
        would be 100%.
    Returns:
      Return the decoded result.
    """
    assert encoder_out.ndim == 3

    # support only batch_size == 1 for now
    assert encoder_out.size(0) == 1, encoder_out.size(0)

    blank_id = model.decoder.blank_id
    context_size = model.decoder.context_size
    unk_id = getattr(model, "unk_id", blank_id)

    device = next(model.parameters()).device

    decoder_input = torch.tensor(
        [-1] * (context_size - 1) + [blank_id], device=device, dtype=torch.int64
    ).reshape(1, context_size)

    decoder_out = model.decoder(decoder_input, need_pad=False)
    decoder_out = model.joiner.decoder_proj(decoder_out)

    encoder_out = model.joiner.encoder_proj(encoder_out)

    T = encoder_out.size(1)
    t = 0
    hyp = [blank_id] * context_size

    # Maximum symbols per utterance.
    max_sym_per_utt = 1000

    # symbols per frame
    sym_per_frame = 0

    # symbols per utterance decoded so far
    sym_per_utt = 0

    while t < T and sym_per_utt < max_sym_per_utt:
        if sym_per_frame >= max_sym_per_frame:
            sym_per_frame = 0
            t += 1
            continue

        # fmt: off
        current_encoder_out = encoder_out[:, t:t+1, :].unsqueeze(2)
        # fmt: on
        logits = model.joiner(
            current_encoder_out, decoder_out.unsqueeze(1), project_input=False
        )
        # logits is (1, 1, 1, vocab_size)

        y = logits.argmax().item()
        if y not in (blank_id, unk_id):
            hyp.append(y)
            decoder_input = torch.tensor([hyp[-context_size:]], device=device).reshape(
                1, context_size
            )

            decoder_out = model.decoder(decoder_input, need_pad=False)
            decoder_out = model.joiner.decoder_proj(decoder_out)

            sym_per_utt += 1
            sym_per_frame += 1
        else:
            sym_per_frame = 0
            t += 1
    hyp = hyp[context_size:]  # remove blanks

    return hyp


class GreedyDecoding(nn.Module):
    """What decode.py does for `--decoding-method greedy_search --max-sym-per-frame N` on batch size 1."""

    def __init__(self, max_sym_per_frame):
        super().__init__()
        self.model = Transducer()
        self.max_sym_per_frame = max_sym_per_frame
        with torch.no_grad():  # larger embeddings: the untrained joiner then emits non-blank symbols too
            self.model.decoder.embedding.weight.mul_(3.0)

    def forward(self, encoder_out):
        return greedy_search(self.model, encoder_out, self.max_sym_per_frame)


def make():
    torch.manual_seed(0)
    return GreedyDecoding(max_sym_per_frame=2).eval()


def inputs():
    g = torch.Generator().manual_seed(0)
    cases = []
    for T, s in [(3, 1.0), (5, 2.0), (4, 4.0), (6, 0.5), (2, 3.0), (7, 2.5), (1, 1.0), (8, 5.0)]:
        cases.append((torch.randn(1, T, 6, generator=g) * s,))
    return cases


KIND = "item-loop"
