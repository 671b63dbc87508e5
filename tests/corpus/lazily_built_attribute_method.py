"""An attribute `__init__` sets to None and another method fills with an instance of a class of the
file (GPyTorch's kernels cache their `Distance` so): a call through it runs that class's method,
where branching on the tensor it is handed breaks. Built before compiling, dynamo inlines the
method and breaks there."""
import torch


class Distance(torch.nn.Module):
    def sq_dist(self, x, y, postprocess):
        d = (x - y).pow(2).sum(-1)
        return d.exp() if postprocess else d  # expect: GM102


class Kernel(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.distance = None

    def build(self):
        if self.distance is None:
            self.distance = Distance()

    def forward(self, x, y):
        postprocess = torch.tensor(True)
        return self.distance.sq_dist(x, y, postprocess) + 1


def sample():
    kernel = Kernel()
    kernel.build()
    return torch.compile(kernel), (torch.randn(4, 3), torch.randn(4, 3)), {}
