"""Lesson 3: in-place writes and version counters.

Every tensor carries a version counter (``_version``) that each in-place write bumps. When an op
saves a tensor for its backward, it notes the version; if backward finds the version changed,
the saved value is no longer the one the forward used, and it refuses rather than return a wrong
gradient.

Run: python examples/autograd/version_counter.py
"""
import retrograd as torch  # swap for: import torch


def show_error(what, fn):
    """Run fn and print the error it raises: its type and the first line of its message."""
    try:
        fn()
        print(what, "-> ok")
    except RuntimeError as e:
        print(what, "->", type(e).__name__ + ":", str(e).splitlines()[0])


a = torch.tensor([1.0, 2.0, 3.0])
print("fresh tensor, version:", a._version)
a.add_(1)
a.mul_(2)
print("after add_ and mul_, version:", a._version)
a[0] = 0.0  # an indexed write is in-place too
print("after a[0] = ..., version:", a._version)
b = a + 1  # out-of-place: a new tensor, a's version unchanged
print("after b = a + 1, a version:", a._version, "b version:", b._version)

# exp() saves its output for backward (d exp(x)/dx = exp(x)); overwriting that output breaks it.
x = torch.tensor([0.0, 1.0, 2.0], requires_grad=True)
y = x.exp()
print("y saved by ExpBackward0 at version:", y._version)
y.add_(1)
print("y after add_, version:", y._version)
show_error("backward after y.add_(1)", lambda: y.sum().backward())

# Writing a tensor nobody saved is fine: mul by a constant saves nothing of its input.
x = torch.tensor([0.0, 1.0, 2.0], requires_grad=True)
h = x * 2
h.add_(1)  # h is not needed by MulBackward0 (the other factor is a constant)
h.sum().backward()
print("in-place on an unsaved intermediate -> ok, x.grad:", x.grad)

# Views share the counter of their base: a write through a view is a write to the base.
x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
s = x.sigmoid()  # saves its output s
v = s[1:]
v.mul_(0)
print("base version after a write through a view:", s._version)
show_error("backward after writing a view of s", lambda: s.sum().backward())

# detach() shares the version counter with its source: writing the detached tensor is caught.
x = torch.tensor([0.0, 1.0, 2.0], requires_grad=True)
y = x.exp()
y.detach().add_(1)
print("y version after y.detach().add_(1):", y._version)
show_error("backward after writing y.detach()", lambda: y.sum().backward())

# .data does not: the write goes unnoticed and backward silently uses the changed value.
y = x.exp()
y.data.add_(1)
print("y version after y.data.add_(1):", y._version)
show_error("backward after writing y.data", lambda: y.sum().backward())
print("x.grad is exp(x) + 1, not exp(x): silently wrong:", x.grad)

# A leaf that requires grad refuses in-place ops outright (see leaf_tensors.py).
show_error("x.mul_(2) on a leaf", lambda: x.mul_(2))
