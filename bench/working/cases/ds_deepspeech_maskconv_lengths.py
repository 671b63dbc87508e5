"""deepspeech.pytorch MaskConv: zero the padded time steps after every conv layer, per utterance.

Source: https://github.com/SeanNaren/deepspeech.pytorch/blob/master/deepspeech_pytorch/model.py
(`MaskConv.forward`; the conv stack of `DeepSpeech` with time stride 1 so the lengths stay valid).

Breaks: `length.item()` in the per-utterance loop (the frame then runs eagerly: the branch on the
length and `narrow(2, length, ...)` with a length read from the data).

HAND: one broadcast comparison builds the same mask:
`mask = (torch.arange(T) >= lengths[:, None])[:, None, None, :].expand(x.size())`
(positions at or past each utterance's length), then the same `masked_fill`.
"""

import torch
import torch.nn as nn

KIND = "item-loop-mask"
GRAD = True


class MaskConv(nn.Module):
    def __init__(self, seq_module):
        """
        Adds padding to the output of the module based on the given lengths. This is to ensure that the
        results of the model do not change when batch sizes change during inference.
        Input needs to be in the shape of (BxCxDxT)
        :param seq_module: The sequential module containing the conv stack.
        """
        super(MaskConv, self).__init__()
        self.seq_module = seq_module

    def forward(self, x, lengths):
        """
        :param x: The input of size BxCxDxT
        :param lengths: The actual length of each sequence in the batch
        :return: Masked output from the module
        """
        for module in self.seq_module:
            x = module(x)
            mask = torch.BoolTensor(x.size()).fill_(0)
            if x.is_cuda:
                mask = mask.cuda()
            for i, length in enumerate(lengths):
                length = length.item()
                if (mask[i].size(2) - length) > 0:
                    mask[i].narrow(2, length, mask[i].size(2) - length).fill_(1)
            x = x.masked_fill(mask, 0)
        return x, lengths


def make():
    torch.manual_seed(0)
    return MaskConv(nn.Sequential(
        nn.Conv2d(1, 4, kernel_size=(5, 3), stride=(2, 1), padding=(2, 1)),
        nn.BatchNorm2d(4),
        nn.Hardtanh(0, 20, inplace=True),
        nn.Conv2d(4, 4, kernel_size=(3, 3), stride=(2, 1), padding=(1, 1)),
        nn.BatchNorm2d(4),
        nn.Hardtanh(0, 20, inplace=True),
    ))


def inputs():
    g = torch.Generator().manual_seed(12)
    out = []
    for lens, t in [([10], 10), ([10, 6], 10), ([3, 8, 8], 8), ([1], 5), ([12, 12], 12), ([0, 7], 7), ([4, 9, 2, 6], 9), ([5], 9)]:
        x = torch.randn(len(lens), 1, 8, t, generator=g)
        out.append((x, torch.tensor(lens, dtype=torch.int32)))
    return out
