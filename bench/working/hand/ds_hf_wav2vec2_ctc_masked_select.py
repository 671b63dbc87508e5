"""Hand rewrite of ds_hf_wav2vec2_ctc_masked_select: padded (N, S) CTC targets instead of masked_select;
the vocabulary check is kept."""

import torch
import torch.nn as nn

KIND = "masked-select"
GRAD = True


class Config:
    vocab_size = 6
    pad_token_id = 0
    ctc_loss_reduction = "sum"
    ctc_zero_infinity = False
    conv_kernel = (3, 2)
    conv_stride = (2, 2)
    hidden_size = 8


class Wav2Vec2ForCTC(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.config = config
        self.conv0 = nn.Conv1d(1, config.hidden_size, config.conv_kernel[0], config.conv_stride[0])
        self.conv1 = nn.Conv1d(config.hidden_size, config.hidden_size, config.conv_kernel[1], config.conv_stride[1])
        self.dropout = nn.Dropout(0.0)
        self.lm_head = nn.Linear(config.hidden_size, config.vocab_size)

    def _get_feat_extract_output_lengths(self, input_lengths):
        """
        Computes the output length of the convolutional layers
        """

        def _conv_out_length(input_length, kernel_size, stride):
            # 1D convolutional layer output length formula taken
            # from https://pytorch.org/docs/stable/generated/torch.nn.Conv1d.html
            return torch.div(input_length - kernel_size, stride, rounding_mode="floor") + 1

        for kernel_size, stride in zip(self.config.conv_kernel, self.config.conv_stride):
            input_lengths = _conv_out_length(input_lengths, kernel_size, stride)

        return input_lengths

    def wav2vec2(self, input_values):
        h = nn.functional.gelu(self.conv0(input_values[:, None]))
        h = nn.functional.gelu(self.conv1(h))
        return (h.transpose(1, 2),)

    def forward(self, input_values, attention_mask=None, labels=None):
        if labels is not None and labels.max() >= self.config.vocab_size:
            raise ValueError(f"Label values must be <= vocab_size: {self.config.vocab_size}")

        outputs = self.wav2vec2(input_values)

        hidden_states = outputs[0]
        hidden_states = self.dropout(hidden_states)

        logits = self.lm_head(hidden_states)

        loss = None
        if labels is not None:
            # retrieve loss input_lengths from attention_mask
            attention_mask = (
                attention_mask if attention_mask is not None else torch.ones_like(input_values, dtype=torch.long)
            )
            input_lengths = self._get_feat_extract_output_lengths(attention_mask.sum(-1)).to(torch.long)

            # assuming that padded tokens are filled with -100
            # when not being attended to
            labels_mask = labels >= 0
            target_lengths = labels_mask.sum(-1)
            padded_targets = labels.masked_fill(~labels_mask, 0)

            # ctc_loss doesn't support fp16
            log_probs = nn.functional.log_softmax(logits, dim=-1, dtype=torch.float32).transpose(0, 1)

            with torch.backends.cudnn.flags(enabled=False):
                loss = nn.functional.ctc_loss(
                    log_probs,
                    padded_targets,
                    input_lengths,
                    target_lengths,
                    blank=self.config.pad_token_id,
                    reduction=self.config.ctc_loss_reduction,
                    zero_infinity=self.config.ctc_zero_infinity,
                )

        return loss, logits


def make():
    torch.manual_seed(0)
    return Wav2Vec2ForCTC(Config())


def _batch(g, lens, label_lens, t=64, s=5):
    b = len(lens)
    x = torch.randn(b, t, generator=g)
    mask = (torch.arange(t)[None] < torch.tensor(lens)[:, None]).long()
    x = x * mask
    labels = torch.randint(1, Config.vocab_size, (b, s), generator=g)
    labels = labels.masked_fill(torch.arange(s)[None] >= torch.tensor(label_lens)[:, None], -100)
    return x, mask, labels


def inputs():
    g = torch.Generator().manual_seed(3)
    out = []
    for lens, label_lens in [([64], [5]), ([64, 40], [5, 2]), ([50, 64, 30], [3, 4, 1]), ([64, 64], [0, 5]),
                             ([33, 48], [2, 2]), ([64], [1]), ([60, 20, 44, 64], [4, 1, 3, 5])]:
        out.append(_batch(g, lens, label_lens))
    x, mask, labels = _batch(g, [64, 64], [3, 5])
    out.append((x, None, labels))          # no attention mask: every sample counts in full
    out.append((x, mask, None))            # inference: no labels, no loss
    return out


def failing_inputs():
    g = torch.Generator().manual_seed(4)
    x, mask, labels = _batch(g, [64, 40], [3, 2])
    labels[0, 0] = Config.vocab_size      # out-of-vocabulary label
    return [(x, mask, labels)]
