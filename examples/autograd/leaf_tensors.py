"""Lesson 2: leaves and non-leaves.

A leaf is where the graph starts: a tensor the user created, not the result of a recorded op.
backward() writes .grad only into leaves that require grad; an intermediate result's .grad stays
None unless you ask for it with retain_grad().

Run: python examples/autograd/leaf_tensors.py
"""
import retrograd as torch  # swap for: import torch

x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)  # created by the user: leaf
c = torch.tensor([4.0, 5.0, 6.0])  # created by the user, not tracked: also a leaf
y = x * 2  # made by a recorded op: not a leaf
with torch.no_grad():
    z1 = x * 2  # no graph recorded under no_grad: a leaf
z2 = y.detach()  # cut off the graph (shares y's storage): a leaf

print(f"{'tensor':<22}{'is_leaf':<9}{'requires_grad':<15}grad_fn")
for name, t in [("x (requires_grad)", x), ("c (plain)", c), ("y = x * 2", y),
                ("z1 (under no_grad)", z1), ("z2 = y.detach()", z2)]:
    fn = None if t.grad_fn is None else type(t.grad_fn).__name__
    print(f"{name:<22}{t.is_leaf!s:<9}{t.requires_grad!s:<15}{fn}")

y.retain_grad()  # keep this intermediate's gradient too
(y * y).sum().backward()
print("x.grad:", x.grad)  # leaf: filled
print("y.grad:", y.grad)  # non-leaf, but retain_grad() asked for it
print("c.grad:", c.grad)  # leaf that does not require grad: never gets one
z2[0] = 100.0  # detach() shares storage: writing z2 writes y too
print("y after z2[0] = 100:", y)

# An in-place op on a leaf that requires grad is refused: nothing could record it.
try:
    x.add_(1)
except RuntimeError as e:
    print(type(e).__name__ + ":", str(e).splitlines()[0])

# Parameter updates are in-place on leaves: they are done under no_grad, as optimizers do.
with torch.no_grad():
    x -= 0.1 * x.grad
print("x after update:", x, "| still a leaf:", x.is_leaf)
