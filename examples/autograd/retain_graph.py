"""Lesson 5: retain_graph=True keeps the graph for another backward.

By default backward() frees the graph's saved tensors. When the same graph must be
back-propagated more than once (two losses sharing a trunk, several heads, RL's reuse of one
forward), pass retain_graph=True to every backward but the last; memory is the price.

Run: python examples/autograd/retain_graph.py
"""
import retrograd as torch  # swap for: import torch

x = torch.tensor([0.5, 1.0, 1.5], requires_grad=True)
trunk = (x * x).exp()  # shared by two losses
loss_a = trunk.sum()
loss_b = (trunk * 2).mean()

loss_a.backward(retain_graph=True)  # keep trunk's graph: loss_b still needs it
print("after loss_a:", x.grad)
loss_b.backward()  # the last one may free the graph
print("after loss_b (accumulated):", x.grad)

# The same loss twice: with retain_graph the second pass runs and .grad doubles.
x.grad = None
y = (x * 3).sin().sum()
y.backward(retain_graph=True)
once = x.grad.clone()
y.backward()
print("twice == 2 * once:", torch.allclose(x.grad, 2 * once))

# Without it, the second pass fails: the first freed what the graph saved.
x.grad = None
y = (x * 3).sin().sum()
y.backward()
try:
    y.backward()
except RuntimeError as e:
    print(type(e).__name__ + ":", str(e).splitlines()[0])

# A graph that saved nothing has nothing to free: a second pass runs even without retain_graph.
x.grad = None
s = (x + 1).sum()  # add and sum need no saved tensor for their backward
s.backward()
s.backward()
print("x.grad after two passes of a graph with nothing saved:", x.grad)
