"""In-place writes through views, as PyTorch's test_autograd.py exercises them: views of views, views of multi-output ops, views made in no_grad/inference mode or by a custom Function, and retain_grad() across in-place ops.

Each scenario runs against retrograd and real PyTorch
what it returns (values, types, names)
or raises (exception type and message) must agree.
"""

from __future__ import annotations

from typing import Any

import pytest

import retrograd
from scenarios import L, outcome, run


def v_view_of_view(torch):
    a = torch.arange(6.).requires_grad_()
    b = a * 1
    v = b[1:5]
    w = v[1:3]
    w.mul_(10)
    b.backward(torch.arange(6.))
    return L(a.grad), L(b), type(v.grad_fn).__name__, type(w.grad_fn).__name__

def v_unbind_inplace(torch):
    a = torch.ones(2, 3, requires_grad=True)
    b = a * 1
    x, y = b.unbind(0)
    x.mul_(2)

def v_split_inplace(torch):
    a = torch.ones(4, requires_grad=True)
    b = a * 1
    x, y = b.split(2)
    y.add_(1)

def v_chunk_inplace(torch):
    a = torch.ones(4, requires_grad=True)
    b = a * 1
    x, y = b.chunk(2)
    y.add_(1)

def v_unbind_nograd_inplace(torch):
    a = torch.ones(2, 3, requires_grad=True)
    b = a * 1
    x, y = b.unbind(0)
    with torch.no_grad():
        x.mul_(2)
    return L(b)

def v_unbind_leaf_nograd_then_base(torch):
    a = torch.ones(2, 3)
    x, y = a.unbind(0)
    x.mul_(2)
    return L(a)

def v_write_makes_base_require_grad(torch):
    a = torch.zeros(3)
    v = a[:2]
    w = torch.ones(2, requires_grad=True)
    v.copy_(w * 2)
    a.sum().backward()
    return a.requires_grad, type(a.grad_fn).__name__, L(w.grad), a.is_leaf, v.requires_grad

def v_write_base_modified(torch):
    a = torch.ones(4, requires_grad=True)
    b = a.clone()
    v = b[:2]
    b.mul_(3)
    r = type(v.grad_fn).__name__
    (v * torch.tensor([1., 2.])).sum().backward()
    return L(a.grad), r

def v_nograd_view_inplace_grad(torch):
    a = torch.ones(3, requires_grad=True)
    b = a * 1
    with torch.no_grad():
        v = b[:2]
    v.mul_(2)

def v_nograd_view_of_leaf_inplace_grad(torch):
    a = torch.ones(3, requires_grad=True)
    with torch.no_grad():
        v = a[:2]
    v.mul_(2)

def v_nograd_view_inplace_with_grad_input(torch):
    a = torch.ones(3)
    with torch.no_grad():
        v = a[:2]
    w = torch.ones(2, requires_grad=True)
    v.mul_(w)

def v_nograd_view_nonreq_inplace(torch):
    a = torch.ones(3)
    with torch.no_grad():
        v = a[:2]
    v.mul_(2)
    return L(a), v.requires_grad

def v_inference_view_inplace(torch):
    a = torch.ones(3, requires_grad=True)
    a * 1
    with torch.inference_mode():
        c = torch.ones(3)
        v = c[:2]
    v.mul_(2)

def v_inference_view_normal_base(torch):
    b = torch.ones(3)
    with torch.inference_mode():
        v = b[:2]
    return v.is_inference(), outcome(lambda: v.mul_(2)), L(b)

def v_inference_view_normal_base_grad(torch):
    a = torch.ones(3, requires_grad=True)
    b = a * 1
    with torch.inference_mode():
        v = b[:2]
    v.mul_(2)

def v_retain_grad_inplace(torch):
    a = torch.ones(3, requires_grad=True)
    b = a * 2
    b.retain_grad()
    b.mul_(3)
    b.sum().backward()
    return L(b.grad), L(a.grad), b.retains_grad

def v_retain_grad_view_inplace(torch):
    a = torch.ones(3, requires_grad=True)
    b = a * 2
    b.retain_grad()
    b[:2].mul_(3)
    b.sum().backward()
    return L(b.grad), L(a.grad), b.retains_grad

def v_retain_grad_on_view_then_base_inplace(torch):
    a = torch.ones(4, requires_grad=True)
    b = a * 2
    v = b[:2]
    v.retain_grad()
    b.mul_(3)
    (v * torch.tensor([1., 2.])).sum().backward()
    return L(v.grad), L(a.grad), v.retains_grad

def v_retain_grad_view_inplace_on_view(torch):
    a = torch.ones(4, requires_grad=True)
    b = a * 2
    v = b[:2]
    v.retain_grad()
    v.mul_(3)
    (b * torch.arange(4.)).sum().backward()
    return L(v.grad), L(a.grad), v.retains_grad

def v_nograd_view_base_modified_grad_fn(torch):
    a = torch.ones(3, requires_grad=True)
    b = a * 1
    with torch.no_grad():
        v = b[:2]
    b.mul_(2)
    return v.grad_fn

def v_inference_view_base_modified_grad_fn(torch):
    a = torch.ones(3, requires_grad=True)
    b = a * 1
    with torch.inference_mode():
        v = b[:2]
    b.mul_(2)
    return v.grad_fn

def v_nograd_view_inplace_in_nograd(torch):
    a = torch.ones(3, requires_grad=True)
    b = a * 1
    with torch.no_grad():
        v = b[:2]
        v.mul_(2)
    b.sum().backward()
    return L(a.grad), L(b)

def v_nograd_unbind_then_grad_inplace(torch):
    a = torch.ones(2, 2, requires_grad=True)
    b = a * 1
    with torch.no_grad():
        x, y = b.unbind(0)
    x.mul_(2)

def v_custom_view_base_modified(torch):
    class F(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x): return x
        @staticmethod
        def backward(ctx, g): return g
    a = torch.ones(3, requires_grad=True)
    b = a * 1
    y = F.apply(b)
    b.mul_(2)
    y.sum().backward()


def v_python_view_inplace(torch):
    a = (torch.arange(16, dtype=torch.float64) / 7).reshape(4, 4).requires_grad_()
    b = (torch.arange(4, dtype=torch.float64) / 3).reshape(2, 2).requires_grad_()
    class PyAdd(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x, y):
            ctx.mark_dirty(x)
            x.add_(y)
            return x
        @staticmethod
        def backward(ctx, grad):
            return grad, grad
    def func(root, b):
        x = root.clone()
        PyAdd.apply(x.narrow(1, 2, 2).narrow(0, 1, 2), b)
        PyAdd.apply(x.narrow(1, 0, 2).narrow(0, 1, 2), b)
        return x
    go = (torch.arange(16, dtype=torch.float64) / 5).reshape(4, 4).requires_grad_()
    return (torch.autograd.gradcheck(func, [a, b]), torch.autograd.gradgradcheck(func, (a, b), (go,)))

def v_modify_base_makes_view_require_grad(torch):
    r = torch.ones(1, dtype=torch.float64, requires_grad=True)
    seen = []
    def fn(r):
        x = torch.ones(5, dtype=torch.float64)
        v = x.select(0, 1)
        seen.append((v.requires_grad, v.grad_fn))
        x.add_(r)
        seen.append(v.requires_grad)
        return v
    return torch.autograd.gradcheck(fn, [r]), torch.autograd.gradgradcheck(fn, [r]), seen[:2]

def v_narrow_mul_nonreq_base(torch):
    a = torch.tensor([2., 5.], requires_grad=False)
    b = torch.tensor([3.], requires_grad=True)
    res = a.narrow(0, 1, 1).mul_(b)
    res.sum().backward()
    return L(b.grad), a.grad, L(a), a.requires_grad, type(a.grad_fn).__name__

def v_inplace_on_view_then_no_grad(torch):
    a = torch.ones(3, 1, dtype=torch.float64, requires_grad=True)
    b = a * 2
    c = b.view_as(b)
    c[0][0] = 3
    with torch.no_grad():
        c.grad_fn  # noqa: B018  (reading it regenerates the view's history)
    c.sum().backward()
    return L(a.grad)

def v_inplace_on_view_gradcheck(torch):
    a = (torch.arange(16, dtype=torch.float64) / 7).reshape(4, 4).requires_grad_()
    b = (torch.arange(4, dtype=torch.float64) / 3).reshape(2, 2).requires_grad_()
    def func(root, b):
        x = root.clone()
        x.narrow(1, 2, 2).narrow(0, 1, 2).mul_(b)
        x.narrow(1, 0, 2).narrow(0, 1, 2).mul_(b)
        return x
    go = (torch.arange(16, dtype=torch.float64) / 5).reshape(4, 4).requires_grad_()
    return torch.autograd.gradcheck(func, [a, b]), torch.autograd.gradgradcheck(func, (a, b), (go,))

def v_inplace_on_view_of_view_backward(torch):
    root = torch.arange(9., dtype=torch.float64).reshape(3, 3).requires_grad_()
    x = root.clone()
    v1 = x.narrow(0, 0, 1)
    v2 = v1.narrow(1, 1, 1)
    v2.mul_(2)
    x.sum().backward()
    return L(root.grad), type(v1.grad_fn).__name__

def v_inplace_on_view_saved_output(torch):
    a = torch.ones(3, requires_grad=True)
    b = a * 1
    v = b.view_as(b)
    v.exp_()
    v.sum().backward()
    return L(a.grad)

def v_multiple_output_view_of_view(torch):
    a = torch.ones(4, 4, requires_grad=True)
    b = a.clone()
    v = b.view(-1)
    c1, c2 = v.split(8)
    c1.mul_(2)

def v_leaf_view_inplace_nograd_ok(torch):
    a = torch.ones(4, requires_grad=True)
    with torch.no_grad():
        a[:2].mul_(3)
    (a * 1).sum().backward()
    return L(a), L(a.grad)


def v_view_of_custom_view(torch):
    class G(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x): return x[:3]
        @staticmethod
        def backward(ctx, g): return torch.cat([g, torch.zeros(1)])
    a = torch.ones(4, requires_grad=True)
    b = a * 1
    w = G.apply(b)[1:]
    return outcome(lambda: w.mul_(2))

def v_view_of_split_output(torch):
    a = torch.ones(4, requires_grad=True)
    b = a * 1
    c1, c2 = b.split(2)
    return outcome(lambda: c1.view(-1).mul_(2)), outcome(lambda: c2[1:].mul_(2))

def v_split_output_base_modified(torch):
    a = torch.ones(4, requires_grad=True)
    b = a * 1
    c1, c2 = b.split(2)
    w = c1[1:]
    b.mul_(2)
    return outcome(lambda: w.grad_fn), outcome(lambda: c2.grad_fn)

def v_view_of_split_output_nograd_ok(torch):
    a = torch.ones(4, requires_grad=True)
    b = a * 1
    c1, c2 = b.split(2)
    with torch.no_grad():
        c1.view(-1).mul_(2)
    return L(b)


SCENARIOS = [v_view_of_custom_view, v_view_of_split_output, v_split_output_base_modified, v_view_of_split_output_nograd_ok, v_python_view_inplace, v_modify_base_makes_view_require_grad, v_narrow_mul_nonreq_base, v_inplace_on_view_then_no_grad, v_inplace_on_view_gradcheck, v_inplace_on_view_of_view_backward, v_inplace_on_view_saved_output, v_multiple_output_view_of_view, v_leaf_view_inplace_nograd_ok, v_view_of_view, v_unbind_inplace, v_split_inplace, v_chunk_inplace, v_unbind_nograd_inplace, v_unbind_leaf_nograd_then_base, v_write_makes_base_require_grad, v_write_base_modified, v_nograd_view_inplace_grad, v_nograd_view_of_leaf_inplace_grad, v_nograd_view_inplace_with_grad_input, v_nograd_view_nonreq_inplace, v_inference_view_inplace, v_inference_view_normal_base, v_inference_view_normal_base_grad, v_retain_grad_inplace, v_retain_grad_view_inplace, v_retain_grad_on_view_then_base_inplace, v_retain_grad_view_inplace_on_view, v_nograd_view_base_modified_grad_fn, v_inference_view_base_modified_grad_fn, v_nograd_view_inplace_in_nograd, v_nograd_unbind_then_grad_inplace, v_custom_view_base_modified]


@pytest.mark.parametrize("scenario", SCENARIOS, ids=[s.__name__ for s in SCENARIOS])
def test_matches_pytorch(scenario: Any, torch: Any) -> None:
    assert run(scenario, retrograd) == run(scenario, torch)
