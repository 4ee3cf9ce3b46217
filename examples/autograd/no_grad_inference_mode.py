"""Lesson 8: no_grad versus inference_mode.

Both stop recording: results have no grad_fn and need no gradient. no_grad's results are ordinary
tensors that can later take part in autograd. inference_mode goes further: its results are
inference tensors, cheaper (no version counter, no view tracking) but never allowed into a graph
that records them, nor written in place outside inference mode.

Run: python examples/autograd/no_grad_inference_mode.py
"""
import retrograd as torch  # swap for: import torch

w = torch.tensor([1.0, -2.0, 3.0], requires_grad=True)

with torch.no_grad():
    a = w * 2
with torch.inference_mode():
    b = w * 2

print(f"{'':<16}{'requires_grad':<15}{'grad_fn':<9}{'is_leaf':<9}is_inference")
for name, t in [("w * 2", w * 2), ("no_grad", a), ("inference_mode", b)]:
    print(f"{name:<16}{t.requires_grad!s:<15}{t.grad_fn is not None!s:<9}{t.is_leaf!s:<9}{t.is_inference()}")

print("grad enabled inside no_grad:", end=" ")
with torch.no_grad():
    print(torch.is_grad_enabled())
print("inside inference_mode:", end=" ")
with torch.inference_mode():
    print(torch.is_grad_enabled(), torch.is_inference_mode_enabled())

# A no_grad result is an ordinary tensor: it can join a graph later.
loss = (a * w).sum()
loss.backward()
print("no_grad result used in a graph -> ok, w.grad:", w.grad)

# An inference tensor cannot be saved for backward...
try:
    (b * w).sum().backward()
except RuntimeError as e:
    print("inference tensor saved for backward ->", type(e).__name__ + ":", str(e).splitlines()[0])

# ...nor updated in place outside inference mode.
c = b.clone()  # (the way out, below; taken first: PyTorch writes b before raising)
try:
    b.add_(1)
except RuntimeError as e:
    print("in-place on an inference tensor ->", type(e).__name__ + ":", str(e).splitlines()[0])

# The way out: clone() outside inference mode makes an ordinary tensor.
print("b.clone() is an inference tensor:", c.is_inference())
c.add_(1)
print("clone updated in place -> ok:", c)

# Decorator form: the whole function runs without recording.
@torch.no_grad()
def predict(inp):
    return inp * w


print("decorated no_grad: requires_grad =", predict(torch.ones(3)).requires_grad)
