"""Saved tensors after backward, .grad/.data assignment checks, gradient shape errors, a 0-d gather index and the create_graph warning, as PyTorch's test_autograd.py exercises them.

Each scenario runs against retrograd and real PyTorch
what it returns (values, types, names)
or raises (exception type and message) must agree.
"""

from __future__ import annotations

import warnings
from typing import Any

import pytest

import retrograd
from scenarios import L, outcome, run


def s_second_backward(torch):
    a = torch.ones(2, requires_grad=True)
    y = (a * a).sum()
    y.backward()
    y.backward()

def s_second_backward_nosave(torch):
    a = torch.ones(2, requires_grad=True)
    y = (a * 2).sum()
    y.backward()
    y.backward()
    return L(a.grad)

def s_detach_inplace(torch):
    a = torch.ones(2, requires_grad=True)
    b = a * 1
    y = b * b
    b.detach().add_(1)
    y.sum().backward()

def s_data_inplace(torch):
    a = torch.ones(2, requires_grad=True)
    b = a * 1
    y = b * b
    b.data.add_(1)
    y.sum().backward()
    return L(a.grad)

def s_del_grad(torch):
    a = torch.ones(2, requires_grad=True)
    (a * 2).sum().backward()
    del a.grad
    return a.grad

def s_grad_set_size(torch):
    a = torch.ones(2, requires_grad=True)
    a.grad = torch.ones(3)

def s_grad_set_type(torch):
    a = torch.ones(2, requires_grad=True)
    a.grad = torch.ones(2, dtype=torch.float64)

def s_grad_set_int(torch):
    a = torch.ones(2, requires_grad=True)
    a.grad = torch.ones(2, dtype=torch.int64)

def s_grad_set_nontensor(torch):
    a = torch.ones(2, requires_grad=True)
    a.grad = [1., 2.]

def s_grad_set_self(torch):
    a = torch.ones(2, requires_grad=True)
    a.grad = a

def s_grad_set_ok(torch):
    a = torch.ones(2, requires_grad=True)
    a.grad = torch.full((2,), 3.)
    (a * 2).sum().backward()
    return L(a.grad)

def s_data_set_size(torch):
    a = torch.ones(2, requires_grad=True)
    a.data = torch.ones(3, 2)
    return a.shape, a.requires_grad, a.is_leaf

def s_data_set_dtype(torch):
    a = torch.ones(2, requires_grad=True)
    a.data = torch.ones(3, dtype=torch.float64)
    return a.dtype, a.requires_grad

def s_data_set_int(torch):
    a = torch.ones(2, requires_grad=True)
    a.data = torch.ones(3, dtype=torch.int64)
    return a.dtype, a.requires_grad

def s_data_set_nontensor(torch):
    a = torch.ones(2, requires_grad=True)
    a.data = [1., 2.]

def s_data_set_grad_mismatch(torch):
    a = torch.ones(2, requires_grad=True)
    (a * 2).sum().backward()
    a.data = torch.ones(3)
    return L(a.grad), a.shape

def s_data_set_then_backward(torch):
    a = torch.ones(2, requires_grad=True)
    b = a * a
    a.data = torch.full((2,), 3.)
    b.sum().backward()
    return L(a.grad)

def s_data_version(torch):
    a = torch.ones(2, requires_grad=True)
    d = a.data
    d.add_(1)
    return a._version, d._version, L(a)

def s_data_set_requires_grad_tensor(torch):
    a = torch.ones(2)
    a.data = torch.ones(2, requires_grad=True)
    return a.requires_grad

def m_shape_backward(torch):
    a = torch.ones(3, requires_grad=True)
    (a * 2).backward(torch.ones(2))

def m_shape_grad(torch):
    a = torch.ones(3, requires_grad=True)
    torch.autograd.grad(a * 2, a, grad_outputs=torch.ones(2))

def m_shape_broadcastable(torch):
    a = torch.ones(3, requires_grad=True)
    (a * 2).backward(torch.ones(1))

def m_gather_0d(torch):
    a = torch.arange(4.).requires_grad_()
    y = a.gather(0, torch.tensor(2))
    y.backward()
    return L(y), y.shape, L(a.grad)

def m_gather_0d_src(torch):
    a = torch.tensor(3.0, requires_grad=True)
    y = a.gather(0, torch.tensor(0))
    y.backward()
    return L(y), y.shape, L(a.grad)

def m_gather_0d_2d(torch):
    a = torch.arange(4.).reshape(2, 2).requires_grad_()
    return outcome(lambda: a.gather(0, torch.tensor(1)))


SCENARIOS = [s_second_backward, s_second_backward_nosave, s_detach_inplace, s_data_inplace, s_del_grad, s_grad_set_size, s_grad_set_type, s_grad_set_int, s_grad_set_nontensor, s_grad_set_self, s_grad_set_ok, s_data_set_size, s_data_set_dtype, s_data_set_int, s_data_set_nontensor, s_data_set_grad_mismatch, s_data_set_then_backward, s_data_version, s_data_set_requires_grad_tensor, m_shape_backward, m_shape_grad, m_shape_broadcastable, m_gather_0d, m_gather_0d_src, m_gather_0d_2d]


@pytest.mark.parametrize("scenario", SCENARIOS, ids=[s.__name__ for s in SCENARIOS])
def test_matches_pytorch(scenario: Any, torch: Any) -> None:
    assert run(scenario, retrograd) == run(scenario, torch)


def test_backward_create_graph_warns(torch: Any) -> None:
    # PyTorch warns once per process unless warn_always is on; its own test turns it on.
    previous = torch.is_warn_always_enabled()
    torch.set_warn_always(True)
    retrograd.set_warn_always(True)
    try:
        for lib in (retrograd, torch):
            b = lib.tensor([1.0, 2.0, 3.0], dtype=lib.float64, requires_grad=True)
            c = b * b
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                c.backward(lib.ones_like(c), create_graph=True)
            texts = [str(w.message) for w in caught if w.category is UserWarning]
            assert any(t.startswith("Using backward() with create_graph=True will create a reference cycle")
                       for t in texts), lib
            if lib is torch:
                torch_text = next(t for t in texts if "create_graph" in t)
            else:
                ours = next(t for t in texts if "create_graph" in t)
            b.grad = None
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                lib.autograd.grad(c, b, lib.ones_like(c), create_graph=True)
            assert not any("create_graph" in str(w.message) for w in caught)
        assert torch_text.startswith(ours)  # PyTorch appends where in its C++ it was triggered
    finally:
        torch.set_warn_always(previous)
        retrograd.set_warn_always(False)


def test_create_graph_warning_is_once_per_process_unless_warn_always(torch: Any, monkeypatch: Any) -> None:
    from retrograd.autograd import warn_state

    def count(lib: Any) -> int:
        x = lib.ones(2, requires_grad=True)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")  # whatever the filters say
            for _ in range(3):
                (x * x).sum().backward(create_graph=True)
        return sum("create_graph=True will create a reference cycle" in str(w.message) for w in caught)

    monkeypatch.setattr(warn_state, "_WARNED", set())  # a fresh process, as far as this warning goes
    assert count(retrograd) == 1
    assert count(retrograd) == 0
    for lib in (retrograd, torch):
        lib.set_warn_always(True)
        try:
            assert count(lib) == 3
        finally:
            lib.set_warn_always(False)
