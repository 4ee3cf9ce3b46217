"""Lesson 4: the four beats of a graph's life.

1. forward: each op builds its node and saves what its backward needs;
2. backward(): the gradient flows to the leaves and the graph's saved tensors are freed;
3. backward() again on the same graph: RuntimeError, the graph was consumed (holding the loss
   tensor does not bring it back);
4. a new forward builds a fresh graph; the leaves kept their .grad, and the next backward adds
   to it (hence zero_grad() in training loops).

Run: python examples/autograd/graph_lifecycle.py [--png DIR]
With --png DIR, the four beats are also drawn to DIR/lifecycle.png (needs graphviz).
"""
import sys

import retrograd as torch  # swap for: import torch

w = torch.tensor([[0.5, -1.0], [1.5, 2.0]], requires_grad=True)
b = torch.tensor([0.1, -0.2], requires_grad=True)
x = torch.tensor([[1.0, 2.0], [3.0, -1.0]])


def forward():
    """A tiny layer and a loss: a fresh graph on every call."""
    return (x @ w + b).tanh().pow(2).sum()


# Beat 1: forward. The loss holds the root of a new graph.
loss = forward()
print("1. forward: loss =", round(loss.item(), 4), "| grad_fn:", type(loss.grad_fn).__name__)
print("   w.grad before backward:", w.grad)

# The nodes hold what their backward needs: tanh saved its output (grad = 1 - tanh^2).
tanh_node = loss.grad_fn.next_functions[0][0].next_functions[0][0]
print("   " + type(tanh_node).__name__, "saved its result:", tanh_node._saved_result.shape)

# Beat 2: backward. The leaves get their gradient; the graph's buffers are released.
loss.backward()
print("2. backward: w.grad =", w.grad)
print("   b.grad =", b.grad)
try:
    print(tanh_node._saved_result)  # raises: backward freed it
except RuntimeError as e:
    print("   the saved result is freed:", type(e).__name__)

# Beat 3: a second backward through the same, consumed graph fails.
try:
    loss.backward()
except RuntimeError as e:
    print("3. backward again:", type(e).__name__ + ":", str(e).splitlines()[0])

# Beat 4: a new forward builds a new graph; its backward accumulates into the kept .grad.
first_w_grad = w.grad.clone()
loss2 = forward()
print("4. new forward: new graph:", loss2.grad_fn is not loss.grad_fn)
loss2.backward()
print("   w.grad accumulated (2x the first):", torch.allclose(w.grad, 2 * first_w_grad))

# Draw the four beats (retrograd's viz runs them again for real, so start from zero).
if "--png" in sys.argv:
    from pathlib import Path

    from retrograd.viz import make_dot_lifecycle

    out_dir = Path(sys.argv[sys.argv.index("--png") + 1])
    out_dir.mkdir(parents=True, exist_ok=True)
    w.grad = None
    b.grad = None
    dot = make_dot_lifecycle(forward(), params={"w": w, "b": b}, forward=forward)
    dot.format = "png"
    path = dot.render(str(out_dir / "lifecycle"), cleanup=True)
    print("drew the four beats:", Path(path).name)
