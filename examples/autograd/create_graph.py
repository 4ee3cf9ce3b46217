"""Lesson 6: create_graph=True makes the gradient itself differentiable (double backward).

With create_graph=True, the backward pass is recorded like any forward: the gradients it returns
have a grad_fn, so a loss built from them can be back-propagated again. The WGAN-GP gradient
penalty is the classic use: it penalises the critic's input-gradient norm for straying from 1.

Run: python examples/autograd/create_graph.py
"""
import retrograd as torch  # swap for: import torch

# d/dx x^3 = 3x^2, and d/dx of that = 6x.
x = torch.tensor([1.0, 2.0], requires_grad=True)
y = (x ** 3).sum()
(g,) = torch.autograd.grad(y, x, create_graph=True)
print("first derivative 3x^2:", g, "| has grad_fn:", g.grad_fn is not None)
g.sum().backward()
print("second derivative 6x:", x.grad)

# Without create_graph the gradient is a plain tensor: no graph to go through again.
(g_plain,) = torch.autograd.grad((x ** 3).sum(), x)
print("without create_graph: requires_grad =", g_plain.requires_grad)

# The WGAN-GP gradient penalty, with a tiny linear-tanh critic and fixed values.
critic_w = torch.tensor([[0.6], [-0.8], [0.3]], requires_grad=True)


def critic(inp):
    return (inp @ critic_w).tanh()


real = torch.tensor([[1.0, 0.0, 2.0], [0.5, -1.0, 1.0]])
fake = torch.tensor([[0.0, 1.0, -1.0], [2.0, 0.5, 0.0]])
eps = torch.tensor([[0.25], [0.75]])  # usually torch.rand(batch, 1): fixed here to print values
mixed = (eps * real + (1 - eps) * fake).requires_grad_(True)  # points between real and fake
scores = critic(mixed)
(grad_mixed,) = torch.autograd.grad(scores, mixed, grad_outputs=torch.ones_like(scores), create_graph=True)
penalty = ((grad_mixed.norm(2, dim=1) - 1) ** 2).mean()
print("gradient norms per sample:", grad_mixed.norm(2, dim=1).detach())
print("penalty:", round(penalty.item(), 4), "| grad_fn:", type(penalty.grad_fn).__name__)

# The penalty's gradient reaches the critic's weights through the recorded backward pass.
penalty.backward()
print("critic_w.grad from the penalty:", critic_w.grad.flatten())
