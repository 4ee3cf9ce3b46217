"""A short tour of retrograd: build a graph, walk it, backpropagate, see it freed.

Run: python examples/tour.py
"""

import retrograd as torch

x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
w = torch.tensor([0.5, -1.0, 2.0], requires_grad=True)
b = torch.tensor([0.1, 0.1, 0.1])  # does not require grad: an untracked input

z = x * w + b
s = z.sum()
print("s =", s)


def walk(node, depth=0):
    """Print the grad_fn chain, one node per line, following next_functions."""
    stack = [(node, depth, 0)]
    while stack:
        fn, level, input_nr = stack.pop()
        label = "None (untracked input)" if fn is None else fn.name()
        if fn is not None and fn.name() == "AccumulateGrad":
            label += f"  -> leaf {fn.variable.tolist()}"
        print("  " * level + f"[{input_nr}] {label}")
        if fn is not None:
            for child, nr in reversed(fn.next_functions):
                stack.append((child, level + 1, nr))


print("\nThe graph, from s.grad_fn down to the leaves:")
walk(s.grad_fn)

s.backward()
print("\nds/dx =", x.grad, "  (= w)")
print("ds/dw =", w.grad, "  (= x)")

try:
    s.backward()
except RuntimeError as err:
    print("\nA second backward fails, the graph was freed:\n ", str(err)[:95], "...")

with torch.no_grad():
    y = x * 2
print("\nUnder no_grad nothing is recorded:", y.requires_grad, y.grad_fn)

(g,) = torch.autograd.grad((x**3).sum(), x, create_graph=True)
(gg,) = torch.autograd.grad(g.sum(), x)
print("d/dx x^3 =", g.detach(), "; d2/dx2 x^3 =", gg)
