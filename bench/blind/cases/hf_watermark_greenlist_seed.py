"""HF transformers `WatermarkLogitsProcessor` (Kirchenbauer et al. green/red-list watermark): for each
row the previous token seeds a `torch.Generator`, a random permutation of the vocabulary gives the
"green list", and the green tokens' logits get a bias.

Source: https://github.com/huggingface/transformers/blob/main/src/transformers/generation/logits_process.py
(`WatermarkLogitsProcessor.__init__`, `set_seed`, `_get_greenlist_ids`, `__call__`; the fixed hash table
is reduced from 1_000_003 to 1009 entries).

Breaks: `logger.warning(...)` when the context is too short; the per-row Python loop calls
`input_seq[-1].item()` to build the seed and `self.rng.manual_seed(...)` / `torch.randperm(...,
generator=self.rng)` on a `torch.Generator`.

HAND: none — the green list is drawn from a `torch.Generator` re-seeded from the token value, a host-side
RNG stream that compiled code cannot reproduce without reading the token back.
"""

import logging

import torch

logger = logging.getLogger(__name__)


class WatermarkLogitsProcessor:
    def __init__(
        self,
        vocab_size,
        device,
        greenlist_ratio: float = 0.25,
        bias: float = 2.0,
        hashing_key: int = 15485863,
        seeding_scheme: str = "lefthash",
        context_width: int = 1,
    ):
        if seeding_scheme not in ["selfhash", "lefthash"]:
            raise ValueError(f"seeding_scheme has to be one of [`selfhash`, `lefthash`], but found {seeding_scheme}")
        if greenlist_ratio >= 1.0 or greenlist_ratio <= 0.0:
            raise ValueError(
                f"greenlist_ratio has be in range between 0.0 and 1.0, exclusively. but found {greenlist_ratio}"
            )

        self.vocab_size = vocab_size
        self.greenlist_size = int(self.vocab_size * greenlist_ratio)
        self.bias = bias
        self.seeding_scheme = seeding_scheme
        self.rng = torch.Generator(device=device)
        self.hash_key = hashing_key
        self.context_width = context_width

        self.rng.manual_seed(hashing_key)
        self.table_size = 1009
        self.fixed_table = torch.randperm(self.table_size, generator=self.rng, device=device)

    def set_seed(self, input_seq: torch.LongTensor):
        input_seq = input_seq[-self.context_width :]
        if self.seeding_scheme == "selfhash":
            a = self.fixed_table[input_seq % self.table_size] + 1
            b = self.fixed_table[input_seq[-1] % self.table_size] + 1
            seed = (self.hash_key * a * b).min().item()
        else:
            seed = self.hash_key * input_seq[-1].item()
        self.rng.manual_seed(seed % (2**64 - 1))

    def _get_greenlist_ids(self, input_seq: torch.LongTensor) -> torch.LongTensor:
        self.set_seed(input_seq)
        vocab_permutation = torch.randperm(self.vocab_size, device=input_seq.device, generator=self.rng)
        greenlist_ids = vocab_permutation[: self.greenlist_size]
        return greenlist_ids

    def _score_rejection_sampling(self, input_seq: torch.LongTensor, scores: torch.FloatTensor) -> torch.LongTensor:
        """
        Generate greenlist based on current candidate next token. Reject and move on if necessary.
        Runs for a fixed number of steps only for efficiency, since the methods is not batched.
        """
        final_greenlist = []
        _, greedy_predictions = scores.sort(dim=-1, descending=True)

        # 40 is an arbitrary number chosen to save compute and not run for long (taken from orig repo)
        for i in range(40):
            greenlist_ids = self._get_greenlist_ids(torch.cat([input_seq, greedy_predictions[i, None]], dim=-1))
            if greedy_predictions[i] in greenlist_ids:
                final_greenlist.append(greedy_predictions[i])
        return torch.tensor(final_greenlist, device=input_seq.device)

    def __call__(self, input_ids: torch.LongTensor, scores: torch.FloatTensor) -> torch.FloatTensor:
        if input_ids.shape[-1] < self.context_width:
            logger.warning(
                f"`input_ids` should have at least `{self.context_width}` tokens but has {input_ids.shape[-1]}. "
                "The seeding will be skipped for this generation step!"
            )
            return scores

        scores_processed = scores.clone()
        for b_idx, input_seq in enumerate(input_ids):
            if self.seeding_scheme == "selfhash":
                greenlist_ids = self._score_rejection_sampling(input_seq, scores[b_idx])
            else:
                greenlist_ids = self._get_greenlist_ids(input_seq)
            scores_processed[b_idx, greenlist_ids] = scores_processed[b_idx, greenlist_ids] + self.bias

        return scores_processed


def make():
    return WatermarkLogitsProcessor(vocab_size=17, device="cpu", greenlist_ratio=0.25, bias=2.0,
                                    seeding_scheme="lefthash", context_width=2)


def inputs():
    g = torch.Generator().manual_seed(0)
    cases = []
    for batch, length in [(2, 3), (1, 1), (3, 4), (2, 0), (1, 5), (4, 2), (2, 1), (3, 6)]:
        cases.append((torch.randint(0, 17, (batch, length), generator=g), torch.randn(batch, 17, generator=g)))
    return cases


KIND = "item-generator-logging"
