"""A small PyTorch training program with the usual import lines, run unchanged by
tests/test_install_as_torch.py under real PyTorch and under retrograd.install_as_torch()."""

import json

import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.optim as optim
from torch.optim.lr_scheduler import StepLR
from torch.utils.data import DataLoader, TensorDataset


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(4, 16)
        self.fc2 = nn.Linear(16, 3)

    def forward(self, x):
        return F.log_softmax(self.fc2(F.relu(self.fc1(x))), dim=1)


def main():
    torch.manual_seed(1)
    use_accel = torch.accelerator.is_available()
    device = torch.accelerator.current_accelerator() if use_accel else torch.device("cpu")
    torch.backends.cudnn.benchmark = False
    torch.backends.cudnn.deterministic = True
    torch.set_num_threads(1)
    x = torch.sin(torch.arange(240, dtype=torch.float32).reshape(60, 4) * 0.37)
    y = (torch.arange(60) * 7) % 3
    loader = DataLoader(TensorDataset(x, y), batch_size=10, shuffle=False)
    model = Net().to(device)
    with torch.no_grad():  # weights from a formula, so both libraries start alike
        for i, p in enumerate(model.parameters()):
            p.copy_(torch.cos(torch.arange(p.numel(), dtype=torch.float32) * 0.1 + i).reshape(p.shape) * 0.3)
    optimizer = optim.Adadelta(model.parameters(), lr=1.0)
    scheduler = StepLR(optimizer, step_size=1, gamma=0.7)
    losses = []
    for _epoch in range(3):
        model.train()
        for data, target in loader:
            data, target = data.to(device), target.to(device)
            optimizer.zero_grad()
            loss = F.nll_loss(model(data), target)
            loss.backward()
            optimizer.step()
            losses.append(loss.item())
        scheduler.step()
    model.eval()
    with torch.no_grad():
        output = model(x)
        test_loss = F.nll_loss(output, y, reduction="sum").item()
        correct = output.argmax(dim=1, keepdim=True).eq(y.view_as(output.argmax(dim=1, keepdim=True))).sum().item()
    torch.testing.assert_close(output.exp().sum(1), torch.ones(60))
    print(json.dumps({"losses": losses, "test_loss": test_loss, "correct": correct,
                      "lr": scheduler.get_last_lr(), "torch": torch.__name__}))


if __name__ == "__main__":
    main()
