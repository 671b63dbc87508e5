"""Hand rewrite of cases/wn_ptforecasting_tft_interpret_output.py: the NaN padding width is the
static `max_encoder_length - encoder_attention.size(-1)` (equal to the source's
`max_encoder_length - encoder_lengths.max()` on forward()'s output), and `integer_histogram` with a
given range counts with `scatter_add_` instead of `torch.unique`."""
from types import SimpleNamespace

import torch

KIND = "unique-dynamic-size"


def integer_histogram(
    data: torch.LongTensor, min: None | int = None, max: None | int = None
) -> torch.Tensor:
    """
    Create histogram of integers in predefined range.
    """
    if min is None or max is None:
        # (a histogram range taken from the data has a data-dependent size: as in the source)
        uniques, counts = torch.unique(data, return_counts=True)
        if min is None:
            min = uniques.min()
        if max is None:
            max = uniques.max()
        hist = torch.zeros(max - min + 1, dtype=torch.long, device=data.device).scatter(
            dim=0, index=uniques - min, src=counts
        )
        return hist
    # with the range given: count every value directly (same counts for data in [min, max])
    flat = data.reshape(-1)
    hist = torch.zeros(max - min + 1, dtype=torch.long, device=data.device).scatter_add_(
        0, flat - min, torch.ones_like(flat, dtype=torch.long)
    )
    return hist


def create_mask(
    size: int, lengths: torch.LongTensor, inverse: bool = False
) -> torch.BoolTensor:
    """
    Create boolean masks of shape len(lengths) x size.

    An entry at (i, j) is True if lengths[i] > j.
    """

    if inverse:  # return where values are
        return torch.arange(size, device=lengths.device).unsqueeze(
            0
        ) < lengths.unsqueeze(-1)
    else:  # return where no values are
        return torch.arange(size, device=lengths.device).unsqueeze(
            0
        ) >= lengths.unsqueeze(-1)


def masked_op(
    tensor: torch.Tensor, op: str = "mean", dim: int = 0, mask: torch.Tensor = None
) -> torch.Tensor:
    """
    Calculate operation on masked tensor.
    """  # noqa : E501
    if mask is None:
        mask = ~torch.isnan(tensor)
    masked = tensor.masked_fill(~mask, 0.0)
    summed = masked.sum(dim=dim)
    if op == "mean":
        return summed / mask.sum(dim=dim)  # Find the average
    elif op == "sum":
        return summed
    else:
        raise ValueError(f"unknown operation {op}")


class TemporalFusionTransformer:
    """Stand-in for the model: the hyperparameter `interpret_output` reads."""

    def __init__(self, max_encoder_length):
        self.hparams = SimpleNamespace(max_encoder_length=max_encoder_length)

    def interpret_output(
        self,
        out: dict[str, torch.Tensor],
        reduction: str = "none",
        attention_prediction_horizon: int = 0,
    ) -> dict[str, torch.Tensor]:
        """
        interpret output of model
        """  # noqa: E501
        # take attention and concatenate if a list to proper attention object
        batch_size = len(out["decoder_attention"])
        if isinstance(out["decoder_attention"], list | tuple):
            raise NotImplementedError("list path of predict(mode='raw') not part of this case")
        else:
            decoder_attention = out["decoder_attention"].clone()
            decoder_mask = create_mask(
                out["decoder_attention"].size(1), out["decoder_lengths"]
            )
            decoder_attention[
                decoder_mask[..., None, None].expand_as(decoder_attention)
            ] = float("nan")

        if isinstance(out["encoder_attention"], tuple | list):
            raise NotImplementedError("list path of predict(mode='raw') not part of this case")
        else:
            # roll encoder attention (so start last encoder value is on the right)
            encoder_attention = out["encoder_attention"].clone()
            shifts = encoder_attention.size(3) - out["encoder_lengths"]
            new_index = (
                torch.arange(
                    encoder_attention.size(3), device=encoder_attention.device
                )[None, None, None].expand_as(encoder_attention)
                - shifts[:, None, None, None]
            ) % encoder_attention.size(3)
            encoder_attention = torch.gather(encoder_attention, dim=3, index=new_index)
            # expand encoder_attention to full size
            if encoder_attention.size(-1) < self.hparams.max_encoder_length:
                encoder_attention = torch.concat(
                    [
                        torch.full(
                            (
                                *encoder_attention.shape[:-1],
                                # forward() cut the encoder attention at encoder_lengths.max()
                                self.hparams.max_encoder_length
                                - encoder_attention.size(-1),
                            ),
                            float("nan"),
                            dtype=encoder_attention.dtype,
                            device=encoder_attention.device,
                        ),
                        encoder_attention,
                    ],
                    dim=-1,
                )

        # combine attention vector
        attention = torch.concat([encoder_attention, decoder_attention], dim=-1)
        attention[attention < 1e-5] = float("nan")

        # histogram of decode and encode lengths
        encoder_length_histogram = integer_histogram(
            out["encoder_lengths"], min=0, max=self.hparams.max_encoder_length
        )
        decoder_length_histogram = integer_histogram(
            out["decoder_lengths"], min=1, max=out["decoder_variables"].size(1)
        )

        # mask where decoder and encoder where not applied
        # when averaging variable selection weights
        encoder_variables = out["encoder_variables"].squeeze(-2).clone()
        encode_mask = create_mask(encoder_variables.size(1), out["encoder_lengths"])
        encoder_variables = encoder_variables.masked_fill(
            encode_mask.unsqueeze(-1), 0.0
        ).sum(dim=1)
        encoder_variables /= (
            out["encoder_lengths"]
            .where(out["encoder_lengths"] > 0, torch.ones_like(out["encoder_lengths"]))
            .unsqueeze(-1)
        )

        decoder_variables = out["decoder_variables"].squeeze(-2).clone()
        decode_mask = create_mask(decoder_variables.size(1), out["decoder_lengths"])
        decoder_variables = decoder_variables.masked_fill(
            decode_mask.unsqueeze(-1), 0.0
        ).sum(dim=1)
        decoder_variables /= out["decoder_lengths"].unsqueeze(-1)

        # static variables need no masking
        static_variables = out["static_variables"].squeeze(1)
        # attention is batch x time x heads x time_to_attend
        # average over heads + only keep prediction attention and
        # attention on observed timesteps
        attention = masked_op(
            attention[
                :,
                attention_prediction_horizon,
                :,
                : self.hparams.max_encoder_length + attention_prediction_horizon,
            ],
            op="mean",
            dim=1,
        )

        if reduction != "none":  # if to average over batches
            static_variables = static_variables.sum(dim=0)
            encoder_variables = encoder_variables.sum(dim=0)
            decoder_variables = decoder_variables.sum(dim=0)

            attention = masked_op(attention, dim=0, op=reduction)
        else:
            attention = attention / masked_op(attention, dim=1, op="sum").unsqueeze(
                -1
            )  # renormalize

        interpretation = dict(
            attention=attention.masked_fill(torch.isnan(attention), 0.0),
            static_variables=static_variables,
            encoder_variables=encoder_variables,
            decoder_variables=decoder_variables,
            encoder_length_histogram=encoder_length_histogram,
            decoder_length_histogram=decoder_length_histogram,
        )
        return interpretation


MAX_ENCODER_LENGTH = 5
DEC = 3
HEADS = 2


def make():
    torch.manual_seed(0)
    return TemporalFusionTransformer(MAX_ENCODER_LENGTH).interpret_output


def _out(g, encoder_lengths, decoder_lengths, n_enc_vars=3, n_dec_vars=2, n_static=2):
    """The dict `forward()` returns, for the given lengths (as TFT builds it)."""
    enc = torch.tensor(encoder_lengths)
    dec = torch.tensor(decoder_lengths)
    B = len(encoder_lengths)
    max_enc = int(enc.max())  # forward(): max_encoder_length = int(encoder_lengths.max())
    w = torch.rand(B, DEC, HEADS, max_enc + DEC, generator=g) + 0.05
    enc_valid = torch.arange(max_enc)[None, :] < enc[:, None]
    w[..., :max_enc] = w[..., :max_enc] * enc_valid[:, None, None, :]
    causal = torch.arange(DEC)[None, :] <= torch.arange(DEC)[:, None]
    w[..., max_enc:] = w[..., max_enc:] * causal[None, :, None, :]
    w = w / w.sum(-1, keepdim=True)
    sm = lambda *s: torch.softmax(torch.randn(*s, generator=g), dim=-1)
    return {
        "encoder_attention": w[..., :max_enc],
        "decoder_attention": w[..., max_enc:],
        "encoder_lengths": enc,
        "decoder_lengths": dec,
        "encoder_variables": sm(B, max_enc, 1, n_enc_vars),
        "decoder_variables": sm(B, DEC, 1, n_dec_vars),
        "static_variables": sm(B, 1, n_static),
    }


def inputs():
    g = torch.Generator().manual_seed(6)
    return [
        (_out(g, [5, 3], [3, 3]),),                      # a full-length encoder: no NaN padding
        (_out(g, [4, 2, 3], [3, 3, 3]),),                # padded to max_encoder_length
        (_out(g, [2, 2], [3, 2]), "sum"),
        (_out(g, [5, 1, 4], [3, 1, 2]), "mean"),
        (_out(g, [3], [3]), "none", 1),                  # attention of the second horizon
        (_out(g, [5, 5], [3, 3]), "sum", 2),
        (_out(g, [1, 3, 2, 3], [3, 3, 3, 1]), "mean", 1),
        (_out(g, [4, 4], [2, 3]),),
        (_out(g, [0, 3], [3, 3]), "sum"),                # an empty encoder
    ]
