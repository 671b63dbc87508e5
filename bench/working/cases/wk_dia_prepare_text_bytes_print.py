"""Dia's `_prepare_generation` (compiled with `torch.compile` in `Dia.generate`): the text prompt is
UTF-8 encoded, the speaker tags are replaced by control bytes with `bytes.replace`, the bytes become
the padded token row, and a verbose progress line is printed before the encoder runs.

Source: https://github.com/nari-labs/dia/pull/165 ("Reduce recompilation of `_prepare_generation`
through more graph break fixes": "The python builtin functions `bytes.replace` and `print` cause
graph breaks"), code at https://github.com/nari-labs/dia/blob/main/dia/model.py
(`_prepare_text_input`, `_prepare_generation`). Reduced: the encoder is an embedding and one
linear layer; no audio prompt, no decoder state.

Breaks: `byte_text.replace(b"[S1]", b"\\x01")...` (dynamo cannot trace `bytes.replace`) and
`print("generate: data loaded")` when `verbose` is true.

HAND: the tags are replaced on the `str` before encoding (`text.replace("[S1]", "\\x01")...encode()`),
which gives the same bytes: "[S1]"/"[S2]" are ASCII, and an ASCII byte never occurs inside the
UTF-8 encoding of a non-ASCII character, so the byte occurrences are exactly the encoded string
occurrences; the print moves into a `torch.library.custom_op` with an ORDERED effect (anchored to
the embedding weight, a real graph input) that prints the same line at run time.
"""
import torch
import torch.nn as nn

KIND = "bytes-print"
GRAD = True


class TinyDia(nn.Module):
    def __init__(self, text_length=12, text_pad_value=0, vocab=256, dim=8):
        super().__init__()
        self.text_length = text_length
        self.text_pad_value = text_pad_value
        self.embedding = nn.Embedding(vocab, dim)
        self.encoder = nn.Linear(dim, dim)

    def _prepare_text_input(self, text: str) -> torch.Tensor:
        text_pad_value = self.text_pad_value
        max_len = self.text_length

        byte_text = text.encode("utf-8")
        replaced_bytes = byte_text.replace(b"[S1]", b"\x01").replace(b"[S2]", b"\x02")
        text_tokens = list(replaced_bytes)

        current_len = len(text_tokens)
        src_tokens = torch.full((1, max_len), fill_value=text_pad_value, dtype=torch.long)
        src_tokens[0, :current_len] = torch.tensor(text_tokens[:max_len], dtype=torch.long)
        return src_tokens

    def forward(self, text: str, verbose: bool = False):
        enc_input_cond = self._prepare_text_input(text)
        enc_input_uncond = torch.zeros_like(enc_input_cond)
        enc_input = torch.cat([enc_input_uncond, enc_input_cond], dim=0)

        if verbose:
            print("generate: data loaded")

        encoder_out = torch.tanh(self.encoder(self.embedding(enc_input)))
        return encoder_out, enc_input


def make():
    torch.manual_seed(0)
    return TinyDia()


def inputs():
    return [
        ("[S1] hi there",),
        ("[S1] hello [S2] bye", True),
        ("plain text",),
        ("", False),
        ("[S2][S1]", True),
        ("caf\u00e9 [S1] \u00fcber",),
        ("a much longer prompt that is truncated [S2]", True),
        ("[S3] is not a tag [S1",),
        ("\u65e5\u672c [S2]", False),
    ]
