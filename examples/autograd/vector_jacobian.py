"""Lesson 7: backward computes vector-Jacobian products.

For y = f(x), backward(gradient=v) computes v^T J (J the Jacobian dy/dx) without ever building J.
A scalar loss uses v = 1 implicitly; a non-scalar output needs v given explicitly.
autograd.grad does the same with grad_outputs=v, returning the product instead of adding it to .grad.

Run: python examples/autograd/vector_jacobian.py
"""
import retrograd as torch  # swap for: import torch


def f(x):
    return torch.stack([x[0] * x[1], x[1] ** 2, x[0] + 3 * x[2]])


x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
y = f(x)

# A non-scalar output has no implicit v: backward() refuses.
try:
    y.backward()
except RuntimeError as e:
    print(type(e).__name__ + ":", str(e).splitlines()[0])

v = torch.tensor([1.0, 0.5, -1.0])
y.backward(gradient=v, retain_graph=True)
print("x.grad = v^T J via backward(gradient=v):", x.grad)

(vjp,) = torch.autograd.grad(y, x, grad_outputs=v)
print("the same via autograd.grad(grad_outputs=v):", vjp)

# The full Jacobian, and the product computed the long way.
J = torch.autograd.functional.jacobian(f, x.detach())
print("Jacobian shape:", tuple(J.shape))
print(J)
print("v @ J:", v @ J)
print("matches backward:", torch.allclose(v @ J, x.grad))

# Each row of J is one VJP with a one-hot v.
rows = [torch.autograd.grad(f(x), x, grad_outputs=torch.eye(3)[i])[0] for i in range(3)]
print("rows from one-hot VJPs == J:", torch.allclose(torch.stack(rows), J))
