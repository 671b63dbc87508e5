"""Hand rewrite of cases/wk_dia_prepare_text_bytes_print.py: the speaker tags are replaced on the
`str` before encoding (same bytes), and the verbose print runs at run time inside a
`torch.library.custom_op` with an ORDERED effect (same text)."""
import torch
import torch.nn as nn
from torch._library.effects import EffectType

KIND = "bytes-print"
GRAD = True

_NS = "wk_dia_prepare"
if not hasattr(getattr(torch.ops, _NS), "print_loaded"):

    @torch.library.custom_op(f"{_NS}::print_loaded", mutates_args=())
    def _print_loaded(anchor: torch.Tensor) -> None:
        print("generate: data loaded")

    @_print_loaded.register_fake
    def _(anchor):
        return None

    _print_loaded.register_effect(EffectType.ORDERED)


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

        replaced_bytes = text.replace("[S1]", "\x01").replace("[S2]", "\x02").encode("utf-8")
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
            getattr(torch.ops, _NS).print_loaded(self.embedding.weight)

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
