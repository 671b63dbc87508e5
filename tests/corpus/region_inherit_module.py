"""A class inheriting from an in-file nn.Module subclass: the inherited helper runs under the child's forward (GM301)."""
import torch
from torch import nn


class Base(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)

    def project(self, x):
        print("project")  # expect: GM301
        return self.fc(x)


class Child(Base):
    def forward(self, x):
        return self.project(x).relu()


def sample():
    return Child(), (torch.randn(2, 4),), {}
