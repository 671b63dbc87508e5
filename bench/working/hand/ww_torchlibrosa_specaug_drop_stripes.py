"""Hand rewrite of cases/ww_torchlibrosa_specaug_drop_stripes.py.

torchlibrosa SpecAugmentation (DropStripes) inside a PANNs Cnn14-style audio tagger: time and
frequency stripes are zeroed on the GPU inside the model's training forward.

Source: https://github.com/qiuqiangkong/torchlibrosa/blob/d4e8add6c9ee49ae531c78a4901e4fdcc88c746a/torchlibrosa/augmentation.py
        (DropStripes, SpecAugmentation; kept as in the source)
        https://github.com/qiuqiangkong/audioset_tagging_cnn/blob/master/pytorch/models.py
        (Cnn14.forward: bn0 over mel bins, `if self.training: x = self.spec_augmenter(x)`, conv
        blocks, mean/max pooling, fc)
The Cnn14 is reduced to bn0, the spec augmenter, one ConvBlock and the classifier, and takes the
log-mel spectrogram (batch, 1, time_steps, mel_bins) as input (the STFT / log-mel extractors are
left out). make() returns the model in training mode, where SpecAugmentation runs.

Breaks: DropStripes.transform_slice draws the stripe width as a 0-d tensor
(`distance = torch.randint(...)[0]`) and then calls
`torch.randint(low=0, high=total_width - distance, size=(1,))` with a tensor bound, which needs
its value as a Python int (dynamo: "Data dependent operator"). The break sits inside the
`for _ in range(self.stripes_num)` loop, so dynamo runs the rest of transform_slice eagerly,
including `e[:, bgn : bgn + distance, :] = 0` (slice bounds that are tensors too).

HAND: the draw with a tensor bound moves into a torch.library custom op (ORDERED effect) that
runs the same `torch.randint(low=0, high=int(high), size=(1,))` on the default generator at run
time, so dynamo keeps it in the graph in program order and the random stream is the same; the
stripe assignment becomes `e.masked_fill_(stripe, 0)` with
`stripe = (arange >= bgn) & (arange < bgn + distance)` along the stripe dimension (the same
elements zeroed in place, the same gradient).
"""

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch._library.custom_ops import OPDEFS
from torch._library.effects import EffectType


def _randint_below(high: torch.Tensor) -> torch.Tensor:
    # the source's draw, with the bound read at run time
    return torch.randint(low=0, high=int(high), size=(1,))


if "ww_torchlibrosa::randint_below" in OPDEFS:
    randint_below = OPDEFS["ww_torchlibrosa::randint_below"]
else:
    randint_below = torch.library.custom_op("ww_torchlibrosa::randint_below", mutates_args=())(_randint_below)
    randint_below.register_fake(lambda high: high.new_empty((1,), dtype=torch.int64))
    randint_below.register_effect(EffectType.ORDERED)


class DropStripes(nn.Module):
    def __init__(self, dim, drop_width, stripes_num):
        """Drop stripes.

        Args:
          dim: int, dimension along which to drop
          drop_width: int, maximum width of stripes to drop
          stripes_num: int, how many stripes to drop
        """
        super(DropStripes, self).__init__()

        assert dim in [2, 3]    # dim 2: time; dim 3: frequency

        self.dim = dim
        self.drop_width = drop_width
        self.stripes_num = stripes_num

    def forward(self, input):
        """input: (batch_size, channels, time_steps, freq_bins)"""

        assert input.ndimension() == 4

        if self.training is False:
            return input

        else:
            batch_size = input.shape[0]
            total_width = input.shape[self.dim]

            for n in range(batch_size):
                self.transform_slice(input[n], total_width)

            return input

    def transform_slice(self, e, total_width):
        """e: (channels, time_steps, freq_bins)"""

        for _ in range(self.stripes_num):
            distance = torch.randint(low=0, high=self.drop_width, size=(1,))[0]
            bgn = randint_below(total_width - distance)[0]

            idx = torch.arange(total_width, device=e.device)
            stripe = (idx >= bgn) & (idx < bgn + distance)
            if self.dim == 2:
                e.masked_fill_(stripe.view(1, -1, 1), 0)
            elif self.dim == 3:
                e.masked_fill_(stripe.view(1, 1, -1), 0)


class SpecAugmentation(nn.Module):
    def __init__(self, time_drop_width, time_stripes_num, freq_drop_width,
        freq_stripes_num):
        super(SpecAugmentation, self).__init__()

        self.time_dropper = DropStripes(dim=2, drop_width=time_drop_width,
            stripes_num=time_stripes_num)

        self.freq_dropper = DropStripes(dim=3, drop_width=freq_drop_width,
            stripes_num=freq_stripes_num)

    def forward(self, input):
        x = self.time_dropper(input)
        x = self.freq_dropper(x)
        return x


class ConvBlock(nn.Module):
    def __init__(self, in_channels, out_channels):
        super(ConvBlock, self).__init__()
        self.conv1 = nn.Conv2d(in_channels, out_channels, kernel_size=(3, 3), stride=(1, 1), padding=(1, 1), bias=False)
        self.conv2 = nn.Conv2d(out_channels, out_channels, kernel_size=(3, 3), stride=(1, 1), padding=(1, 1), bias=False)
        self.bn1 = nn.BatchNorm2d(out_channels)
        self.bn2 = nn.BatchNorm2d(out_channels)

    def forward(self, input, pool_size=(2, 2), pool_type='avg'):
        x = input
        x = F.relu_(self.bn1(self.conv1(x)))
        x = F.relu_(self.bn2(self.conv2(x)))
        if pool_type == 'avg':
            x = F.avg_pool2d(x, kernel_size=pool_size)
        else:
            raise Exception('Incorrect argument!')
        return x


class Cnn14Reduced(nn.Module):
    def __init__(self, mel_bins=16, classes_num=5):
        super().__init__()
        # Spec augmenter
        self.spec_augmenter = SpecAugmentation(time_drop_width=8, time_stripes_num=2,
            freq_drop_width=4, freq_stripes_num=2)
        self.bn0 = nn.BatchNorm2d(mel_bins)
        self.conv_block1 = ConvBlock(in_channels=1, out_channels=4)
        self.fc1 = nn.Linear(4, 8, bias=True)
        self.fc_audioset = nn.Linear(8, classes_num, bias=True)

    def forward(self, x):
        """Input: log-mel (batch_size, 1, time_steps, mel_bins)"""
        x = x.transpose(1, 3)
        x = self.bn0(x)
        x = x.transpose(1, 3)

        if self.training:
            x = self.spec_augmenter(x)

        x = self.conv_block1(x, pool_size=(2, 2), pool_type='avg')
        x = torch.mean(x, dim=3)

        (x1, _) = torch.max(x, dim=2)
        x2 = torch.mean(x, dim=2)
        x = x1 + x2
        x = F.relu_(self.fc1(x))
        clipwise_output = torch.sigmoid(self.fc_audioset(x))
        return clipwise_output


KIND = "tensor-valued randint bound and slice bounds"
GRAD = True


def make():
    torch.manual_seed(0)
    model = Cnn14Reduced()
    model.train()
    return model


def inputs():
    g = torch.Generator().manual_seed(0)
    shapes = [(2, 24), (1, 32), (3, 20), (2, 16), (4, 12), (1, 40), (2, 28), (3, 10)]
    return [(torch.randn(b, 1, t, 16, generator=g),) for b, t in shapes]
