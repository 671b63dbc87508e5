"""Methods of a bytes value in compiled code (GM531).

Dynamo folds str methods and `bytes.decode` as constants but has no rule for other bytes methods
("Unsupported method call", measured on torch 2.13). Encoding, decoding, `len`, `list` and `+` of
bytes trace; so does a tokenizer's `encode`, which names no codec, and whose result's methods are
not bytes methods (Dia's text preparation)."""

import torch


class Tokenizer:
    def encode(self, text):
        return [ord(c) for c in text]


@torch.compile
def prepare(x, text):
    byte_text = text.encode("utf-8")
    replaced = byte_text.replace(b"[S1]", b"\x01").replace(b"[S2]", b"\x02")  # expect: GM531
    return x + len(list(replaced))


@torch.compile
def upper_literal(x, text):
    return x + len(b"abc".upper())  # expect: GM531


@torch.compile
def split_encoded(x, text):
    parts = text.encode(encoding="ascii").split(b" ")  # expect: GM531
    return x + len(parts)


@torch.compile
def decode_and_str_methods(x, text):
    byte_text = text.encode("utf-8")
    decoded = byte_text.decode("utf-8").replace("[S1]", "\x01")
    return x + len(decoded) + len(byte_text + b"z")


@torch.compile
def tokenizer_ids(x, text):
    ids = Tokenizer().encode("hello there")
    ids.count(1)
    tokens = Tokenizer().encode(text)
    tokens.index(tokens[0])
    return x + len(tokens)


@torch.compile
def rebound_name(x, text):
    data = text.encode("utf-8")
    data = text
    return x + len(data.replace("a", "b"))


def sample():
    x = torch.randn(4)
    fns = (prepare, upper_literal, split_encoded, decode_and_str_methods, tokenizer_ids, rebound_name)
    return [(fn, (x, "[S1] hi there"), {}) for fn in fns]
