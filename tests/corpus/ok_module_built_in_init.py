"""The same distance module built in `__init__`: dynamo reads it through `self`, a source it can
rebuild, so after the break inside `_sq_dist` the caller resumes as usual (only the method's own
break)."""
import torch


class Distance(torch.nn.Module):
    def __init__(self, scale):
        super().__init__()
        self.scale = scale

    def _sq_dist(self, x, postprocess):
        res = x * self.scale
        return res.exp() if postprocess else res  # expect: GM102


class Kernel(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.distance_module = Distance(2.0)

    def forward(self, x):
        postprocess = torch.tensor(True)
        if not self.distance_module:
            self.distance_module = Distance(2.0)
        res = self.distance_module._sq_dist(x, postprocess)
        return res + 1


def sample():
    return [(Kernel(), (torch.randn(3),), {})]
