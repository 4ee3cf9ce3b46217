"""Lesson 1: the graph is a chain of grad_fn nodes.

Every op on a tensor that requires grad records a backward node in the result's ``grad_fn``;
each node points, through ``next_functions``, at the nodes that made its inputs. Walking from the
loss along ``next_functions`` visits exactly the path ``backward()`` will take.

Run: python examples/autograd/grad_fn_chain.py
"""
import retrograd as torch  # swap for: import torch

x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
w = torch.tensor([0.5, -1.0, 2.0], requires_grad=True)
b = torch.tensor([1.0, 1.0, 1.0])  # no requires_grad: used by the forward, never tracked

y = x * w  # MulBackward0
u = y + b  # AddBackward0
z = u.sum()  # SumBackward0

# Walk the chain by hand: each node's first input leads one op back.
node = z.grad_fn
print("z.grad_fn:", node, "| name():", node.name())
node = node.next_functions[0][0]
print("next:     ", type(node).__name__)
node = node.next_functions[0][0]
print("next:     ", type(node).__name__)

# The add's second input is b: it needs no gradient, so its edge leads nowhere (None).
print("add's inputs:", [None if fn is None else type(fn).__name__ for fn, _ in z.grad_fn.next_functions[0][0].next_functions])

# Printed raw, each edge is a (node, input_nr) pair: input_nr says which output of that node.
print("mul's next_functions:", node.next_functions)

# The mul's inputs are leaves: the chain ends in AccumulateGrad nodes, one per leaf, whose
# only job is to add the incoming gradient into that leaf's .grad.
for fn, _ in node.next_functions:
    print("mul input:", type(fn).__name__, "-> leaf is x:", fn.variable is x, "| leaf is w:", fn.variable is w)

# The same walk, automated: every node reachable from the loss, each once.
seen, order, stack = set(), [], [z.grad_fn]
while stack:
    fn = stack.pop()
    if fn is None or fn in seen:
        continue
    seen.add(fn)
    order.append(type(fn).__name__)
    stack.extend(nxt for nxt, _ in fn.next_functions)
print("all nodes:", order)

# backward() follows that chain: only the tracked leaves receive a gradient.
z.backward()
print("x.grad:", x.grad)  # dz/dx = w
print("w.grad:", w.grad)  # dz/dw = x
print("b.grad:", b.grad)  # never tracked: None
