"""In-place writes through views, as PyTorch's test_autograd.py exercises them: views of views, views of multi-output ops, views made in no_grad/inference mode or by a custom Function, and retain_grad() across in-place ops.

Each scenario runs against retrograd and real PyTorch
what it returns (values, types, names)
or raises (exception type and message) must agree.
"""

from __future__ import annotations

import warnings
from typing import Any

import pytest

import retrograd


def L(t: Any) -> Any:  # noqa: N802
    return None if t is None else [round(float(v), 5) for v in t.detach().reshape(-1).tolist()]


def outcome(fn: Any) -> Any:
    try:
        fn()
    except Exception as e:  # noqa: BLE001
        return type(e).__name__, str(e)
    return "ok"


def run(scenario: Any, lib: Any) -> Any:
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            result = scenario(lib)
        messages = [str(w.message) for w in caught if w.category is UserWarning]
        return "ok", repr(result), messages
    except Exception as e:  # noqa: BLE001
        # retrograd may add where a saved tensor was modified: an extension, not part of the contract
        return type(e).__name__, str(e).split(" [retrograd]")[0]


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


SCENARIOS = [v_view_of_view, v_unbind_inplace, v_split_inplace, v_chunk_inplace, v_unbind_nograd_inplace, v_unbind_leaf_nograd_then_base, v_write_makes_base_require_grad, v_write_base_modified, v_nograd_view_inplace_grad, v_nograd_view_of_leaf_inplace_grad, v_nograd_view_inplace_with_grad_input, v_nograd_view_nonreq_inplace, v_inference_view_inplace, v_inference_view_normal_base, v_inference_view_normal_base_grad, v_retain_grad_inplace, v_retain_grad_view_inplace, v_retain_grad_on_view_then_base_inplace, v_retain_grad_view_inplace_on_view, v_nograd_view_base_modified_grad_fn, v_inference_view_base_modified_grad_fn, v_nograd_view_inplace_in_nograd, v_nograd_unbind_then_grad_inplace, v_custom_view_base_modified]


@pytest.mark.parametrize("scenario", SCENARIOS, ids=[s.__name__ for s in SCENARIOS])
def test_matches_pytorch(scenario: Any, torch: Any) -> None:
    assert run(scenario, retrograd) == run(scenario, torch)
