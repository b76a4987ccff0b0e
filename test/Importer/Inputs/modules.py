"""Small modules for mw-import's tests (--module FILE:FACTORY)."""

import torch


class Mlp(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = torch.nn.Linear(8, 16)
        self.fc2 = torch.nn.Linear(16, 4)

    def forward(self, x, labels):
        h = torch.relu(self.fc1(x))
        return torch.nn.functional.cross_entropy(self.fc2(h), labels)


def mlp():
    return Mlp(), (torch.randn(3, 8), torch.tensor([0, 1, 3]))


class Cumsum(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.w = torch.nn.Parameter(torch.randn(4, 4))

    def forward(self, x):
        return torch.cumsum(x @ self.w, dim=1)


def unmapped():
    return Cumsum(), (torch.randn(2, 4),)


class Linear(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = torch.nn.Linear(4, 4)

    def forward(self, x):
        return self.proj(x)


def dynamic():
    batch = torch.export.Dim("batch", min=2, max=64)
    return {"module": Linear(), "inputs": (torch.randn(8, 4),),
            "dynamic_shapes": ({0: batch},)}
