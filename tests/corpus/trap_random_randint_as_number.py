"""random.randint is traced as a 0-d tensor: fine in arithmetic, a data-dependent value elsewhere."""
import random

import torch


@torch.compile
def f(x):
    scaled = x * random.randint(1, 3)
    shift = random.randint(1, 3)
    rolled = scaled.roll(shift)  # expect: GM206
    k = random.uniform(0, 1)
    if k < 0.5:  # expect: GM101
        rolled = rolled + 1
    return rolled
