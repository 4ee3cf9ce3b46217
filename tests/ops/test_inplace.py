"""In-place ops and views: version counters, PyTorch's refusals, history rewriting, CopySlices."""

from __future__ import annotations

import numpy as np
import pytest

import retrograd as rg


def test_version_counter_shared_by_views_and_detach() -> None:
    x = rg.tensor([1.0, 2.0, 3.0, 4.0])
    v = x.view(2, 2)
    d = x.detach()
    assert x._version == 0
    x.add_(1)
    v.mul_(2)
    x[0] = 7.0
    d.sub_(1)
    x += 1
    assert x._version == v._version == d._version == 5
    assert x.tolist() == [7.0, 6.0, 8.0, 10.0]
    c = x.clone()
    c.add_(1)
    assert c._version == 1 and x._version == 5


def test_leaf_inplace_refused_in_grad_mode_allowed_in_no_grad() -> None:
    x = rg.tensor([1.0, 2.0], requires_grad=True)
    for fn in (lambda: x.add_(1), lambda: x.zero_(), lambda: x.mul_(2)):
        with pytest.raises(RuntimeError, match="a leaf Variable that requires grad is being used in an in-place operation."):
            fn()
    with pytest.raises(RuntimeError, match="a view of a leaf Variable that requires grad is being used in an in-place"):
        x[0] = 5.0
    assert x._version == 0
    with rg.no_grad():
        x.sub_(1)
    assert x.tolist() == [0.0, 1.0] and x.is_leaf and x._version == 1


def test_inplace_on_nonleaf_rewrites_history(torch: object) -> None:
    def run(lib: object) -> tuple[list[str], list[float]]:
        x = lib.tensor([1.0, 2.0, 3.0], requires_grad=True)  # type: ignore[attr-defined]
        a = x * 2
        names = [type(a.grad_fn).__name__]
        a.add_(1)
        names.append(type(a.grad_fn).__name__)
        a.mul_(lib.tensor([0.5, 2.0, -1.0]))  # type: ignore[attr-defined]
        names.append(type(a.grad_fn).__name__)
        a.exp_()
        names.append(type(a.grad_fn).__name__)
        (a * a).sum().backward()
        return names, x.grad.tolist()

    ours, theirs = run(rg), run(torch)
    assert ours[0] == theirs[0]
    np.testing.assert_allclose(ours[1], theirs[1], rtol=1e-5)


def test_inplace_mul_by_own_alias_is_a_version_error_as_in_torch() -> None:
    x = rg.tensor([1.0, 2.0, 3.0], requires_grad=True)
    a = x * 2
    a.mul_(a.detach())  # saves the alias, then writes the storage it shares
    with pytest.raises(RuntimeError, match=r"is at version 1; expected version 0 instead"):
        a.sum().backward()


def test_inplace_through_view_gives_copyslices_and_right_grads(torch: object) -> None:
    def run(lib: object) -> tuple[str, str, list[float], list[float]]:
        leaf = lib.tensor([1.0, 2.0, 3.0, 4.0], requires_grad=True)  # type: ignore[attr-defined]
        a = leaf * 1
        v = a[1:3]
        v.mul_(10)
        names = (type(a.grad_fn).__name__, type(v.grad_fn).__name__)
        a.sum().backward()
        g1 = leaf.grad.tolist()
        leaf.grad = None
        b = leaf * 2
        b[0] = 0.0
        b[3] = leaf[0] * 7
        b[[1, 2]] = leaf[1:3] ** 2
        (b * lib.tensor([1.0, 2.0, 3.0, 4.0])).sum().backward()  # type: ignore[attr-defined]
        return names[0], names[1], g1, leaf.grad.tolist()

    assert run(rg) == run(torch)


def test_transposed_view_inplace(torch: object) -> None:
    def run(lib: object) -> list[list[float]]:
        leaf = lib.arange(6.0).reshape(2, 3).requires_grad_()  # type: ignore[attr-defined]
        a = leaf * 2
        a.t()[1].mul_(lib.tensor([2.0, 3.0]))  # type: ignore[attr-defined]
        a.pow(2).sum().backward()
        return leaf.grad.tolist()

    np.testing.assert_allclose(run(rg), run(torch), rtol=1e-5)


def test_stale_view_sees_base_history(torch: object) -> None:
    def run(lib: object) -> list[float]:
        x = lib.tensor([1.0, 2.0, 3.0], requires_grad=True)  # type: ignore[attr-defined]
        base = x * 1
        view = base[:2]
        base.mul_(3)  # view's history must follow the base's rewrite
        (view * lib.tensor([1.0, 10.0])).sum().backward()  # type: ignore[attr-defined]
        return x.grad.tolist()

    assert run(rg) == run(torch)


def test_modified_saved_tensor_errors() -> None:
    x = rg.tensor([1.0, 2.0, 3.0], requires_grad=True)
    a = x * 2
    b = a * a
    a.add_(1)
    with pytest.raises(RuntimeError, match=r"\[torch.FloatTensor \[3\]\], which is output 0 of Add, is at version 1; expected version 0"):
        b.sum().backward()
    c = rg.tensor([2.0, 2.0, 2.0])
    p = x * c
    c.add_(1)
    with pytest.raises(RuntimeError, match=r"\[torch.FloatTensor \[3\]\] is at version 1; expected version 0"):
        p.sum().backward()


def test_relu_inplace_keeps_backward_correct() -> None:
    x = rg.tensor([0.5, -1.0, 2.0], requires_grad=True)
    y = x * 2
    y.relu_()
    assert type(y.grad_fn).__name__ == "ReluBackward0"
    y.sum().backward()
    assert x.grad.tolist() == [2.0, 0.0, 2.0]


def test_inplace_errors_on_bad_shapes_dtypes_and_overlap() -> None:
    x = rg.zeros(3)
    with pytest.raises(RuntimeError, match=r"output with shape \[3\] doesn't match the broadcast shape \[2, 3\]"):
        x.add_(rg.ones(2, 3))
    i = rg.tensor([1, 2])
    with pytest.raises(RuntimeError, match="result type Float can't be cast to the desired output type Long"):
        i.add_(1.5)
    e = rg.ones(1).expand(3)
    with pytest.raises(RuntimeError, match="unsupported operation: more than one element of the written-to tensor"):
        e.add_(1)


INPLACE_OPS = {
    "add_": lambda t, lib: t.add_(lib.tensor([1.0, 2.0, 3.0])),
    "sub_": lambda t, lib: t.sub_(0.5),
    "mul_": lambda t, lib: t.mul_(lib.tensor([1.0, -2.0, 3.0])),
    "div_": lambda t, lib: t.div_(4.0),
    "pow_": lambda t, lib: t.pow_(2),
    "neg_": lambda t, lib: t.neg_(),
    "exp_": lambda t, lib: t.exp_(),
    "clamp_": lambda t, lib: t.clamp_(-0.5, 0.5),
    "relu_": lambda t, lib: t.relu_(),
    "sigmoid_": lambda t, lib: t.sigmoid_(),
    "tanh_": lambda t, lib: t.tanh_(),
    "zero_": lambda t, lib: t.zero_(),
    "fill_": lambda t, lib: t.fill_(2.5),
    "copy_": lambda t, lib: t.copy_(lib.tensor([7.0, 8.0, 9.0])),
    "masked_fill_": lambda t, lib: t.masked_fill_(lib.tensor([True, False, True]), 0.25),
    "setitem": lambda t, lib: t.__setitem__(slice(0, 2), 4.0),
    "iadd": lambda t, lib: t.__iadd__(1.0),
    "isub": lambda t, lib: t.__isub__(1.0),
    "imul": lambda t, lib: t.__imul__(3.0),
    "itruediv": lambda t, lib: t.__itruediv__(2.0),
}


@pytest.mark.parametrize("name", sorted(INPLACE_OPS))
def test_inplace_op_matches_torch(torch: object, name: str) -> None:
    def run(lib: object) -> tuple[list[float], int, str, list[float]]:
        x = lib.tensor([0.3, -0.7, 1.2], requires_grad=True)  # type: ignore[attr-defined]
        y = x * 1.5
        before = y._version
        out = INPLACE_OPS[name](y, lib)
        assert out is y or name == "setitem"
        node = type(y.grad_fn).__name__
        (y * lib.tensor([1.0, 2.0, 3.0])).sum().backward()  # type: ignore[attr-defined]
        return y.tolist(), y._version - before, node, x.grad.tolist()

    ours, theirs = run(rg), run(torch)
    np.testing.assert_allclose(ours[0], theirs[0], rtol=1e-6)
    assert ours[1:3] == theirs[1:3]
    np.testing.assert_allclose(ours[3], theirs[3], rtol=1e-5, atol=1e-7)


VIEW_OPS = {
    "view": lambda t: t.view(3, 2),
    "reshape": lambda t: t.reshape(6),
    "flatten": lambda t: t.flatten(),
    "transpose": lambda t: t.transpose(0, 1),
    "permute": lambda t: t.permute(1, 0),
    "t": lambda t: t.t(),
    "expand": lambda t: t.unsqueeze(0).expand(2, 2, 3),
    "squeeze": lambda t: t.unsqueeze(1).squeeze(1),
    "unsqueeze": lambda t: t.unsqueeze(-1),
    "slice": lambda t: t[:, 1:],
    "select": lambda t: t[1],
    "narrow": lambda t: t.narrow(1, 0, 2),
    "detach": lambda t: t.detach(),
    "T": lambda t: t.T,
}


@pytest.mark.parametrize("name", sorted(VIEW_OPS))
def test_views_share_storage_and_version(name: str) -> None:
    base = rg.arange(6.0).reshape(2, 3)
    view = VIEW_OPS[name](base)
    assert np.shares_memory(view.numpy(), base.numpy())
    base.add_(1)
    assert view._version == base._version == 1


def test_inplace_on_empty_tensor_is_allowed() -> None:
    x = rg.zeros(0, 3)
    x.add_(1)
    assert x._version == 1 and x.shape == (0, 3)


@pytest.mark.parametrize("make", [lambda y: y.unbind()[0], lambda y: y.split(2)[0], lambda y: y.chunk(2)[1]])
def test_inplace_on_a_multi_output_view_is_refused(torch: object, make: object) -> None:
    def run(lib: object) -> str:
        y = lib.ones(4, requires_grad=True) * 2  # type: ignore[attr-defined]
        with pytest.raises(RuntimeError) as info:
            make(y).add_(1)  # type: ignore[operator]
        return str(info.value)

    assert run(rg) == run(torch)
    plain = rg.ones(4)
    plain.unbind()[0].add_(1)  # untracked: allowed
    assert plain.tolist() == [2.0, 1.0, 1.0, 1.0]
