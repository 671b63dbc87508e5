"""A break that skips the frame inside one arm of an `if` the analysis cannot decide: the rest of
that arm is latent (dynamo runs it eagerly once the loop's break is met), but code after the `if`
is not, since the other arm is traced on and reaches it (ultralytics' `preprocess`: a count test
in a loop under `else:`, then a slice by the count)."""
import torch


@torch.compile
def pack(targets, batch_size):
    if batch_size == 0:
        out = targets * 0
    else:
        out = torch.zeros(batch_size, 3)
        for j in range(batch_size):
            matches = targets[:, 0] == j
            if matches.any():  # expect: GM101
                out[j, :1] = targets[matches, 1:2].sum()  # expect: GM402
        print("packed", batch_size)  # expect: GM301
    print("done")  # expect: GM301
    return out


def sample():
    targets = torch.tensor([[0.0, 1.0, 2.0], [1.0, 3.0, 4.0], [0.0, 5.0, 6.0]])
    return [(pack, (targets, 0), {}), (pack, (targets, 2), {})]
