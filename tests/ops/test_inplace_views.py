"""In-place view ops (t_, transpose_, swapaxes_, swapdims_, squeeze_, unsqueeze_, as_strided_),
in-place comparisons (eq_, ne_, not_equal_), floor_divide_ and heaviside_, and resize_/resize_as_
against PyTorch: values, shapes and strides, grad_fn names, versions, gradients and errors."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import retrograd as rg
from conftest import outcome


def _names(fn: Any) -> Any:
    return None if fn is None else (type(fn).__name__, [None if n is None else type(n).__name__
                                                         for n, _ in fn.next_functions])


def _chain(lib: Any) -> list[Any]:
    """A chain of in-place view ops on one non-leaf tensor, with what each leaves behind."""
    a = lib.tensor(np.arange(6.0).reshape(2, 3) + 1, requires_grad=True)
    b = a * 1
    seen = []
    for step in (lambda: b.t_(), lambda: b.transpose_(0, 1), lambda: b.unsqueeze_(1), lambda: b.squeeze_(1),
                 lambda: b.unsqueeze_(0), lambda: b.squeeze_(), lambda: b.unsqueeze_(-1), lambda: b.squeeze_((0, 2)),
                 lambda: b.swapaxes_(0, 1), lambda: b.swapdims_(1, 0), lambda: b.squeeze_(0),
                 lambda: b.as_strided_((2, 2), (1, 2), 1)):
        returned = step()
        seen.append((returned is b, list(b.shape), b.stride(), _names(b.grad_fn), b._version))
    (b * lib.tensor([[1.0, 2.0], [3.0, 4.0]])).sum().backward()
    seen.append(a.grad.tolist())
    return seen


def test_inplace_view_ops_chain_matches_pytorch(torch: Any) -> None:
    assert _chain(rg) == _chain(torch)


def _on_a_view(lib: Any) -> Any:
    a = lib.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], requires_grad=True)
    c = a * 1
    v = c[0]
    v.unsqueeze_(0)  # the view keeps its base; the base's history is not rewritten
    out = [_names(v.grad_fn), v._base is c, _names(c.grad_fn), c._version, list(v.shape)]
    (v * lib.tensor([1.0, 2.0, 3.0])).sum().backward(retain_graph=True)
    out.append(a.grad.tolist())
    w = c[1]
    c.t_()  # a view of a tensor whose geometry changed is regenerated from it
    out += [_names(w.grad_fn), list(c.shape)]
    a.grad = None
    (w * lib.tensor([1.0, 2.0, 3.0])).sum().backward()
    out.append(a.grad.tolist())
    return out


def test_inplace_view_op_on_a_view_matches_pytorch(torch: Any) -> None:
    assert _on_a_view(rg) == _on_a_view(torch)


def _no_grad(lib: Any) -> Any:
    a = lib.ones(2, 3, requires_grad=True)
    with lib.no_grad():
        d = lib.ones(2, 3)
        d.t_()
        a.t_()  # a leaf may change shape under no_grad
    plain = lib.ones(2, 3)
    plain.unsqueeze_(0)
    e = lib.ones(3).expand(2, 3)
    e.t_()  # no element is written: an expanded tensor is fine
    return d._version, list(a.shape), a.grad_fn, plain._version, plain.grad_fn, e.stride(), list(e.shape)


def test_inplace_view_ops_without_grad_match_pytorch(torch: Any) -> None:
    assert _no_grad(rg) == _no_grad(torch)


def _exp_then_t_(lib: Any) -> None:
    d = (lib.ones(2, 3, requires_grad=True) * 2).exp()
    d.t_()  # exp saved its output: the version check refuses backward
    d.sum().backward()


def _in_no_grad_view(lib: Any) -> None:
    a = lib.ones(2, 3, requires_grad=True)
    with lib.no_grad():
        w = a[0]
    w.unsqueeze_(0)


@pytest.mark.parametrize("case", [
    lambda lib: lib.ones(2, 3, requires_grad=True).t_(),
    lambda lib: lib.ones(2, 3, requires_grad=True).unsqueeze_(0),
    lambda lib: lib.ones(2, 3, requires_grad=True)[0].unsqueeze_(0),
    lambda lib: (lib.ones(2, 3, requires_grad=True) * 2).unbind(0)[0].unsqueeze_(0),
    _in_no_grad_view,
    _exp_then_t_,
    lambda lib: lib.ones(2, 2, 2).t_(),
    lambda lib: lib.ones(3).transpose_(0, 3),
    lambda lib: lib.ones(3).swapaxes_(-2, 0),
    lambda lib: lib.ones(3).unsqueeze_(5),
    lambda lib: lib.ones(3).squeeze_(4),
    lambda lib: lib.ones(1, 3, 1).squeeze_((0, 0)),
    lambda lib: lib.ones(1, 3, 1).squeeze_((0, -3)),
])
def test_inplace_view_op_errors_are_pytorchs(torch: Any, case: Any) -> None:
    mine, ref = outcome(lambda: case(rg)), outcome(lambda: case(torch))
    assert mine[0] != "ok"
    if case is _exp_then_t_:  # (the names of the saved tensor's type differ in the message's middle)
        assert mine[0] == ref[0] and mine[1].split(":")[0] == ref[1].split(":")[0]
    else:
        assert mine == ref


def _inference(lib: Any) -> Any:
    with lib.inference_mode():
        i = lib.ones(2, 3)
    return outcome(lambda: i.t_())


def test_inplace_view_op_on_an_inference_tensor_is_refused_as_pytorch(torch: Any) -> None:
    assert _inference(rg) == _inference(torch)


def _zero_d_and_vectors(lib: Any) -> Any:
    z = lib.tensor(5.0)
    out = [list(z.t_().shape), list(z.unsqueeze_(0).shape), list(z.squeeze_().shape), list(z.squeeze_(0).shape),
           z._version]
    v = lib.ones(3)
    out += [list(v.t_().shape), list(v.transpose_(0, -1).shape), v._version]
    y = lib.ones(1, 3, 1)
    out += [list(y.squeeze_(0).shape), list(y.squeeze_(-1).shape), list(y.squeeze_(0).shape), y._version]
    return out


def test_inplace_view_ops_on_small_tensors_match_pytorch(torch: Any) -> None:
    assert _zero_d_and_vectors(rg) == _zero_d_and_vectors(torch)


def test_inplace_view_ops_gradcheck() -> None:
    x = rg.tensor(np.random.default_rng(0).uniform(-1, 1, (2, 3)), requires_grad=True)

    def fn(x: Any) -> Any:
        y = x * x
        y.t_()
        y.unsqueeze_(1)
        return y.squeeze_(1).transpose_(0, 1) * 3

    assert rg.autograd.gradcheck(fn, (x,))
    assert rg.autograd.gradgradcheck(fn, (x,))


def test_inplace_view_op_saved_attributes(torch: Any) -> None:
    def run(lib: Any) -> Any:
        x = lib.ones(1, 3, 1, requires_grad=True)
        s4 = (x * 1).squeeze_(2).grad_fn
        s5 = (x * 1).squeeze_((0, 2)).grad_fn
        u = (x * 1).unsqueeze_(1).grad_fn
        t = (x * 1).transpose_(0, 1).grad_fn
        return (s4._saved_dim, tuple(s4._saved_self_sym_sizes), tuple(s5._saved_dim), u._saved_dim,
                t._saved_dim0, t._saved_dim1)

    assert run(rg) == run(torch)


# -- in-place comparisons, floor_divide_, heaviside_ ---------------------------------------------


def _comparisons(lib: Any) -> Any:
    a = lib.tensor([0.5, -1.0, 2.0], requires_grad=True)
    out = []
    for name in ("eq_", "ne_", "not_equal_"):
        for other in (0.5, lib.zeros(3), lib.tensor(2.0)):
            x = a.clone()
            returned = getattr(x, name)(other)
            out.append((returned is x, x.tolist(), _names(x.grad_fn), x._version))
    x = a.clone()
    x.ne_(0.5).sum().backward()
    out.append(a.grad.tolist())
    i = lib.tensor([1, 2, 3])
    out.append((i.eq_(2).tolist(), str(i.dtype)))
    b = lib.tensor([True, False])
    out.append(b.ne_(1.5).tolist())
    out.append(lib.tensor([1, 2]).eq_(lib.tensor([1.0, 2.0])).tolist())
    out.append(lib.tensor([1.0, 2.0]).not_equal_(np.float64(2.0)).tolist())
    return out


def test_inplace_comparisons_match_pytorch(torch: Any) -> None:
    assert _comparisons(rg) == _comparisons(torch)


def _edges_present(fn: Any) -> Any:
    # (PyTorch's NotImplemented nodes list only the inputs that require grad; retrograd's, out
    # of place too, keep a (None, 0) edge for the others: compared without those)
    name, edges = _names(fn)
    return name, [e for e in edges if e is not None]


def _floor_divide_and_heaviside(lib: Any) -> Any:
    a = lib.tensor([0.5, -1.5, 2.0], requires_grad=True)
    out = []
    for other in (2, lib.ones(3) * 0.5):
        x = a.clone()
        x.floor_divide_(other)
        out.append((x.tolist(), _edges_present(x.grad_fn), x._version, outcome(lambda x=x: x.sum().backward())))
    x = a.clone()
    x.heaviside_(lib.tensor(0.5))
    out.append((x.tolist(), _edges_present(x.grad_fn), outcome(lambda: x.sum().backward())))
    y = lib.tensor([5, 7, -3])
    out.append((y.floor_divide_(2).tolist(), y._version))
    out.append(lib.tensor([5.0, -7.0]).floor_divide_(0).tolist())
    out.append(lib.tensor([-1.0, 0.0, 2.0]).heaviside_(lib.tensor([0.5])).tolist())
    out.append(lib.tensor([-1, 0, 2]).heaviside_(lib.tensor(3)).tolist())
    return out


def test_floor_divide_and_heaviside_in_place_match_pytorch(torch: Any) -> None:
    assert _floor_divide_and_heaviside(rg) == _floor_divide_and_heaviside(torch)


@pytest.mark.parametrize("case", [
    lambda lib: lib.ones(1).eq_(lib.ones(3)),
    lambda lib: lib.ones(3).ne_(lib.ones(2)),
    lambda lib: lib.ones(3).eq_("a"),
    lambda lib: lib.ones(3, requires_grad=True).ne_(1),
    lambda lib: lib.tensor([5, 7]).floor_divide_(2.5),
    lambda lib: lib.tensor([5, 7]).floor_divide_(0),
    lambda lib: lib.tensor([True]).floor_divide_(True),
    lambda lib: lib.tensor([-1.0, 0, 2]).heaviside_(lib.tensor([0.5], dtype=lib.float64)),
    lambda lib: lib.tensor([-1.0, 0, 2]).heaviside_(0.5),
    lambda lib: lib.ones(1).heaviside_(lib.ones(3)),
])
def test_inplace_comparison_errors_are_pytorchs(torch: Any, case: Any) -> None:
    mine, ref = outcome(lambda: case(rg)), outcome(lambda: case(torch))
    assert mine[0] != "ok"
    assert mine == ref


# -- resize_, resize_as_, resize, resize_as ----------------------------------------------------------


def _resizes(lib: Any) -> Any:
    out = []
    x = lib.arange(6.0)
    returned = x.resize_(2, 2)
    out.append((returned is x, x.tolist(), x._version, x.stride()))
    x.resize_((3, 2))
    out.append((x.tolist(), x._version))
    x.resize_(3, 2)  # the same sizes: nothing happens, no new version
    out.append(x._version)
    base = lib.arange(6.0)
    y = base[1:3]
    y.resize_(4)  # contiguous from its storage offset: reaches the base's later elements
    out.append((y.tolist(), base.tolist(), y.storage_offset()))
    x = lib.arange(6.0)
    x.resize_(2, 3).t_()
    x.resize_(3, 2)
    out.append((x.tolist(), x.stride()))
    x = lib.arange(6.0)
    x.resize_(8)
    out.append((list(x.shape), x[:6].tolist()))
    x = lib.arange(6.0)
    out.append((x.resize_(0).tolist(), x.resize_(2).tolist(), list(x.resize_([]).shape)))
    x = lib.arange(4.0)
    out.append((x.resize_as_(lib.ones(2, 2)).tolist(), x._version, lib.resize_as_(lib.ones(3), lib.ones(1)).tolist()))
    return out


def test_resize_in_place_matches_pytorch(torch: Any) -> None:
    assert _resizes(rg) == _resizes(torch)


def _legacy_resize(lib: Any) -> Any:
    a = lib.arange(6.0, requires_grad=True)
    with pytest.warns(UserWarning, match="non-inplace resize is deprecated"):
        r = a.resize(2, 3)
    out = [_names(r.grad_fn), r._base is a, r.stride()]
    r.backward(lib.arange(6.0).view(2, 3))
    out.append(a.grad.tolist())
    b = lib.arange(6.0).view(2, 3).t()
    with pytest.warns(UserWarning, match="non-inplace resize is deprecated"):
        r = b.resize(6)
    out += [r.tolist(), r._base is b]
    with pytest.warns(UserWarning, match="non-inplace resize_as is deprecated"):
        r = a.resize_as(lib.ones(3, 2))
    out += [_names(r.grad_fn), list(r.shape)]
    return out


def test_legacy_resize_matches_pytorch(torch: Any) -> None:
    assert _legacy_resize(rg) == _legacy_resize(torch)


@pytest.mark.parametrize("case", [
    lambda lib: lib.ones(2, requires_grad=True).resize_(3),
    lambda lib: (lib.ones(2, requires_grad=True) * 2).resize_(3),
    lambda lib: lib.ones(2).resize_(-1),
    lambda lib: lib.ones(2).resize_(-2, 3),
    lambda lib: lib.ones(2).resize_(2.0),
    lambda lib: lib.ones(2).resize_((2.0,)),
    lambda lib: lib.ones(2).resize_(2, 1.0),
    lambda lib: lib.ones(2).resize_as_(3),
    lambda lib: lib.ones(2, requires_grad=True).resize_as_(lib.ones(3)),
])
def test_resize_errors_are_pytorchs(torch: Any, case: Any) -> None:
    mine, ref = outcome(lambda: case(rg)), outcome(lambda: case(torch))
    assert mine[0] != "ok"
    assert mine == ref


@pytest.mark.filterwarnings("ignore:non-inplace")
@pytest.mark.parametrize("case", [
    lambda lib: lib.ones(3).resize(2),
    lambda lib: lib.ones(2, 3).resize(4, 2),
    lambda lib: lib.ones(3).resize_as(lib.ones(2)),
])
def test_legacy_resize_errors_are_pytorchs(torch: Any, case: Any) -> None:
    mine, ref = outcome(lambda: case(rg)), outcome(lambda: case(torch))
    assert mine[0] != "ok"
    assert mine == ref


def test_resize_under_no_grad_still_refuses_a_tensor_that_requires_grad(torch: Any) -> None:
    def run(lib: Any) -> Any:
        with lib.no_grad():
            return outcome(lambda: lib.ones(2, requires_grad=True).resize_(1))

    assert run(rg) == run(torch)
