"""SpeechBrain's DropChunk time-domain augmentation (run on the batch inside the training step):
for every utterance, a random number of random-length chunks at random positions inside its true
length is set to zero.

Source: https://github.com/speechbrain/speechbrain/blob/develop/speechbrain/augment/time_domain.py
(DropChunk kept as written) and
https://github.com/speechbrain/speechbrain/blob/develop/speechbrain/processing/signal_processing.py
(compute_amplitude, reduced to the amp_type="avg", scale="linear" path it is called with).

Breaks: the per-utterance Python loop is driven by random tensors: `if drop_times[i] == 0:` branches
on a random count, `torch.randint(..., size=(drop_times[i],))` sizes a tensor with it,
`start_max = max(0, start_max - length.max())` compares a tensor with an int,
`torch.randint(low=start_min, high=start_max + 1, ...)` needs Python ints,
`for j in range(drop_times[i])` iterates a tensor-valued count, and
`dropped_waveform[i, start[j] : end[j]] = 0.0` slices with 0-d tensors. Dynamo reports the first of
them, in the loop, and then skips the frame: the rest runs eagerly.

HAND: none — the random draws have data-dependent sizes and bounds (`drop_times[i]` values, then
`start_max` from the drawn lengths and the utterance length) from the global generator; any
fixed-size vectorised draw consumes the random stream differently and picks different chunks.
"""
import torch


def compute_amplitude(waveforms, lengths=None, amp_type="avg", scale="linear"):
    if len(waveforms.shape) == 1:
        waveforms = waveforms.unsqueeze(0)

    assert amp_type in ["avg", "rms", "peak"]
    assert scale in ["linear", "dB"]

    if amp_type == "avg":
        if lengths is None:
            out = torch.mean(torch.abs(waveforms), dim=1, keepdim=True)
        else:
            wav_sum = torch.sum(input=torch.abs(waveforms), dim=1, keepdim=True)
            out = wav_sum / lengths
    else:
        raise NotImplementedError

    if scale == "linear":
        return out
    raise NotImplementedError


class DropChunk(torch.nn.Module):
    def __init__(
        self,
        drop_length_low=100,
        drop_length_high=1000,
        drop_count_low=1,
        drop_count_high=3,
        drop_start=0,
        drop_end=None,
        noise_factor=0.0,
    ):
        super().__init__()
        self.drop_length_low = drop_length_low
        self.drop_length_high = drop_length_high
        self.drop_count_low = drop_count_low
        self.drop_count_high = drop_count_high
        self.drop_start = drop_start
        self.drop_end = drop_end
        self.noise_factor = noise_factor

        # Validate low < high
        if drop_length_low > drop_length_high:
            raise ValueError("Low limit must not be more than high limit")
        if drop_count_low > drop_count_high:
            raise ValueError("Low limit must not be more than high limit")

        # Make sure the length doesn't exceed end - start
        if drop_end is not None and drop_end >= 0:
            if drop_start > drop_end:
                raise ValueError("Low limit must not be more than high limit")

            drop_range = drop_end - drop_start
            self.drop_length_low = min(drop_length_low, drop_range)
            self.drop_length_high = min(drop_length_high, drop_range)

    def forward(self, waveforms, lengths):
        # Reading input list
        lengths = (lengths * waveforms.size(1)).long()
        batch_size = waveforms.size(0)
        dropped_waveform = waveforms.clone()

        # Store original amplitude for computing white noise amplitude
        clean_amplitude = compute_amplitude(waveforms, lengths.unsqueeze(1))

        # Pick a number of times to drop
        drop_times = torch.randint(
            low=self.drop_count_low,
            high=self.drop_count_high + 1,
            size=(batch_size,),
        )

        # Iterate batch to set mask
        for i in range(batch_size):
            if drop_times[i] == 0:
                continue

            # Pick lengths
            length = torch.randint(
                low=self.drop_length_low,
                high=self.drop_length_high + 1,
                size=(drop_times[i],),
            )

            # Compute range of starting locations
            start_min = self.drop_start
            if start_min < 0:
                start_min += lengths[i]
            start_max = self.drop_end
            if start_max is None:
                start_max = lengths[i]
            if start_max < 0:
                start_max += lengths[i]
            start_max = max(0, start_max - length.max())

            # Pick starting locations
            start = torch.randint(
                low=start_min, high=start_max + 1, size=(drop_times[i],)
            )

            end = start + length

            # Update waveform
            if not self.noise_factor:
                for j in range(drop_times[i]):
                    dropped_waveform[i, start[j] : end[j]] = 0.0
            else:
                # Uniform distribution of -2 to +2 * avg amplitude should
                # preserve the average for normalization
                noise_max = 2 * clean_amplitude[i] * self.noise_factor
                for j in range(drop_times[i]):
                    # zero-center the noise distribution
                    noise_vec = torch.rand(length[j], device=waveforms.device)
                    noise_vec = 2 * noise_max * noise_vec - noise_max
                    dropped_waveform[i, start[j] : end[j]] = noise_vec

        return dropped_waveform


KIND = "random-loop"
GRAD = True


def make():
    torch.manual_seed(0)
    return DropChunk(drop_length_low=2, drop_length_high=6, drop_count_low=0, drop_count_high=3)


def inputs():
    g = torch.Generator().manual_seed(0)
    out = []
    for k in range(9):
        batch, time = 3 + k % 4, 24 + 4 * (k % 2)  # 5 and 6 utterances draw a zero count
        waveforms = torch.randn(batch, time, generator=g)
        lengths = torch.rand(batch, generator=g) * 0.5 + 0.5
        lengths[0] = 1.0
        out.append((waveforms, lengths))
    return out
