"""GPyTorch's `covar_dist` caches its distance module on the kernel, built in the compiled code
itself: `if not self.distance_module: self.distance_module = Distance(...)`, then
`self.distance_module._sq_dist(...)`, whose conditional expression on a tensor breaks. To resume
the caller after that break dynamo must rebuild the call, and it has no source for a module made
while it traced: it cannot resume, and runs the rest of `forward` eagerly (GM528 at the call)."""
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
        self.distance_module = None

    def forward(self, x):
        postprocess = torch.tensor(True)
        if not self.distance_module:
            self.distance_module = Distance(2.0)
        res = self.distance_module._sq_dist(x, postprocess)  # expect: GM528
        return res + 1


def sample():
    return [(Kernel(), (torch.randn(3),), {})]
