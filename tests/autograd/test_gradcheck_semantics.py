"""gradcheck as PyTorch's: nondeterministic backward (nondet_tol), value-dependent output shapes, the check switches, undefined output gradients (check_undefined_grad), raise_exception=False, fast_mode, and PyTorch's messages.

Each scenario runs against retrograd and real PyTorch
what it returns (values, types, names)
or raises (exception type and message) must agree.
"""

from __future__ import annotations

from typing import Any

import pytest

import retrograd
from scenarios import run


def x64(torch, n=3):
    return torch.tensor([0.3, 0.7, 1.1][:n], dtype=torch.float64, requires_grad=True)


def nondet_fn(torch):
    """A backward whose result changes by 1e-4 from one call to the next."""
    class F(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x): return x * 2
        @staticmethod
        def backward(ctx, g):
            F.calls = getattr(F, "calls", 0) + 1
            return g * 2 + 1e-4 * (F.calls % 2)
    return F.apply


def g_nondet(torch):
    return torch.autograd.gradcheck(nondet_fn(torch), (x64(torch),))


def g_nondet_tol(torch):
    return torch.autograd.gradcheck(nondet_fn(torch), (x64(torch),), nondet_tol=1e-3)


def g_nondet_noraise(torch):
    return torch.autograd.gradcheck(nondet_fn(torch), (x64(torch),), raise_exception=False)


def g_mismatch(torch):
    class F(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x): return x * 2
        @staticmethod
        def backward(ctx, g): return g * 3
    return torch.autograd.gradcheck(F.apply, (x64(torch),))


def g_mismatch_noraise(torch):
    class F(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x): return x * 2
        @staticmethod
        def backward(ctx, g): return g * 3
    return torch.autograd.gradcheck(F.apply, (x64(torch),), raise_exception=False)


def g_ok_fast(torch):
    return torch.autograd.gradcheck(lambda t: (t.sin() * t), (x64(torch),), fast_mode=True)


def g_zero_expected(torch):
    class F(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x): return x.detach() * 2
        @staticmethod
        def backward(ctx, g): return g * 2
    return torch.autograd.gradcheck(F.apply, (x64(torch),))


def g_zero_expected2(torch):
    return torch.autograd.gradcheck(lambda t: (t * 0).detach() + 1, (x64(torch),))


def g_value_dependent_shape(torch):
    return torch.autograd.gradcheck(lambda t: t[t > 0.5], (x64(torch),))


def g_value_dependent_shape2(torch):
    return torch.autograd.gradcheck(lambda t: t[t > 0.69999999] * 2, (x64(torch),))


def g_no_backward_ad(torch):
    class F(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x): return x * 2
        @staticmethod
        def backward(ctx, g): return g * 3
    return torch.autograd.gradcheck(F.apply, (x64(torch),), check_backward_ad=False)


def g_undefined_grad(torch):
    class F(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x): return x * 2
        @staticmethod
        def backward(ctx, g): return g * 2
    return torch.autograd.gradcheck(F.apply, (x64(torch),), check_undefined_grad=True)


def g_undefined_grad_bad_off(torch):
    class F(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.set_materialize_grads(False)
            return x * 2
        @staticmethod
        def backward(ctx, g): return g * 2
    return torch.autograd.gradcheck(F.apply, (x64(torch),), check_undefined_grad=False)


def g_batched(torch):
    return torch.autograd.gradcheck(lambda t: t * 2, (x64(torch),), check_batched_grad=True)


def g_reentrant(torch):
    class F(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x): return x * 2
        @staticmethod
        def backward(ctx, g):
            F.calls = getattr(F, "calls", 0) + 1
            return g * 2 + 1e-4 * (F.calls % 2)
    return torch.autograd.gradgradcheck(lambda t: F.apply(t) * t, (x64(torch),))


def g_no_requires(torch):
    return torch.autograd.gradcheck(lambda t: t * 2, (torch.ones(2, dtype=torch.float64),))


def g_float32_warn(torch):
    return torch.autograd.gradcheck(lambda t: t * 2, (torch.ones(2, requires_grad=True),))


def g_two_outputs_mismatch(torch):
    class F(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x, y): return x * 2, x * y
        @staticmethod
        def backward(ctx, g1, g2): return g1 * 2, g2 * 2
    return torch.autograd.gradcheck(F.apply, (x64(torch), x64(torch)))


def g_masked_batched_off(torch):
    return torch.autograd.gradcheck(lambda t: t.sum(), (x64(torch),), check_batched_grad=False, check_undefined_grad=False, check_grad_dtypes=True)


def g_forward_ad_custom_without_jvp(torch):
    class F(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x): return x * 2
        @staticmethod
        def backward(ctx, g): return g * 2
    try:
        torch.autograd.gradcheck(F.apply, (x64(torch),), check_forward_ad=True)
    except NotImplementedError:
        return "NotImplementedError"


def g_fast_mismatch_header(torch):
    class F(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x): return x * 2
        @staticmethod
        def backward(ctx, g): return g * 3
    try:
        torch.autograd.gradcheck(F.apply, (x64(torch),), fast_mode=True)
    except Exception as e:  # noqa: BLE001
        text = str(e)
        return type(e).__name__, text.split("numerical:")[0], "computed \nin fast mode" in text, "Numerical:\n tensor([[2." in text


def g_fast_nondet(torch):
    return torch.autograd.gradcheck(nondet_fn(torch), (x64(torch),), fast_mode=True)


def g_fast_value_dependent_shape(torch):
    return torch.autograd.gradcheck(lambda t: t[t > 0.69999999] * 2, (x64(torch),), fast_mode=True)


def g_fast_noraise(torch):
    class F(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x): return x * 2
        @staticmethod
        def backward(ctx, g): return g * 3
    return torch.autograd.gradcheck(F.apply, (x64(torch),), fast_mode=True, raise_exception=False)


def two_outputs(torch, backward):
    class F(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.set_materialize_grads(False)
            return x * 2, x * 3
    F.backward = staticmethod(backward)
    return F.apply


def g_undefined_raises_runtime(torch):
    def backward(ctx, g1, g2):
        if g1 is None or g2 is None:
            raise RuntimeError("undefined gradient")
        return g1 * 2 + g2 * 3
    return torch.autograd.gradcheck(two_outputs(torch, backward), (x64(torch),))


def g_undefined_raises_runtime_off(torch):
    def backward(ctx, g1, g2):
        if g1 is None or g2 is None:
            raise RuntimeError("undefined gradient")
        return g1 * 2 + g2 * 3
    return torch.autograd.gradcheck(two_outputs(torch, backward), (x64(torch),), check_undefined_grad=False)


def g_undefined_nonzero(torch):
    def backward(ctx, g1, g2):
        if g1 is None or g2 is None:
            return torch.ones(3, dtype=torch.float64)
        return g1 * 2 + g2 * 3
    return torch.autograd.gradcheck(two_outputs(torch, backward), (x64(torch),))


def g_undefined_handled(torch):
    def backward(ctx, g1, g2):
        total = None
        for g, k in ((g1, 2), (g2, 3)):
            if g is not None:
                total = g * k if total is None else total + g * k
        return total
    return torch.autograd.gradcheck(two_outputs(torch, backward), (x64(torch),))


def g_batched_backward_off(torch):
    return torch.autograd.gradcheck(lambda t: t * 2, (x64(torch),), check_batched_grad=True, check_backward_ad=False)


def g_jacobian_mismatch_second_input(torch):
    class F(torch.autograd.Function):
        @staticmethod
        def forward(ctx, k, x, y): return x * k + y
        @staticmethod
        def backward(ctx, g): return None, g * 2, g * 2
    return torch.autograd.gradcheck(F.apply, (2.0, x64(torch, 2), x64(torch, 2)))


def g_undefined_grad_bad(torch):
    class F(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.set_materialize_grads(False)
            return x * 2
        @staticmethod
        def backward(ctx, g): return g * 2
    return torch.autograd.gradcheck(F.apply, (x64(torch),), check_undefined_grad=True)


SCENARIOS = [g_undefined_grad_bad, g_nondet, g_nondet_tol, g_nondet_noraise, g_mismatch, g_mismatch_noraise, g_ok_fast, g_zero_expected, g_zero_expected2, g_value_dependent_shape, g_value_dependent_shape2, g_no_backward_ad, g_undefined_grad, g_undefined_grad_bad_off, g_batched, g_reentrant, g_no_requires, g_float32_warn, g_two_outputs_mismatch, g_masked_batched_off, g_forward_ad_custom_without_jvp, g_fast_mismatch_header, g_fast_nondet, g_fast_value_dependent_shape, g_fast_noraise, g_undefined_raises_runtime, g_undefined_raises_runtime_off, g_undefined_nonzero, g_undefined_handled, g_batched_backward_off, g_jacobian_mismatch_second_input]


@pytest.mark.parametrize("scenario", SCENARIOS, ids=[s.__name__ for s in SCENARIOS])
def test_matches_pytorch(scenario: Any, torch: Any) -> None:
    assert run(scenario, retrograd) == run(scenario, torch)
