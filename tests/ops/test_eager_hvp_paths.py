"""The shortcuts the MLP Hessian-vector product takes (issue #8's HVP row): ``threshold_backward``
with its constants as 0-d arrays (and 0-d operands on the select), ``expand`` of new leading dims
made directly, and the reductions' rules calling ``expand``'s path. Each against PyTorch: values
bit for bit, strides, errors, and the second order through them."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import retrograd as rg
from conftest import outcome

BITS = {2: np.uint16, 4: np.uint32, 8: np.uint64}


@pytest.mark.parametrize("dtype", ["float16", "float32", "float64"])
@pytest.mark.parametrize("value", [-1.0, 0.0, -0.0, 2.0, float("nan")])
@pytest.mark.parametrize("grad", [1.5, -0.0, float("inf"), float("nan")])
def test_relu_backward_of_a_0d_tensor_bits_match_pytorch(torch: Any, dtype: str, value: float, grad: float) -> None:
    def run(lib: Any) -> np.ndarray:
        x = lib.tensor(value, dtype=getattr(lib, dtype), requires_grad=True)
        lib.relu(x).backward(lib.tensor(grad, dtype=getattr(lib, dtype)))
        return np.asarray(x.grad.numpy())

    ours, ref = run(rg), run(torch)
    assert ours.shape == ref.shape == ()
    assert ours.view(BITS[ours.itemsize]) == ref.view(BITS[ref.itemsize])


@pytest.mark.parametrize("dtype", ["float32", "int32", "int64", "uint8", "bool"])
def test_threshold_backward_of_other_output_dtypes_matches_pytorch(torch: Any, dtype: str) -> None:
    # The cached 0-d zero is made per output dtype: a comparison of an integer or bool output
    # selects as PyTorch's does.
    from retrograd.ops.elementwise import threshold_backward

    out = np.array([[-2, 0, 3], [1, 0, -1]]).astype(dtype)
    grad = np.array([[1.5, -0.0, np.inf], [np.nan, 2.0, -3.0]], np.float32)
    ours = threshold_backward(rg.tensor(grad), rg.tensor(out)).numpy()
    if dtype == "bool":  # PyTorch's kernel takes no bool output; its definition: grad where not out <= 0
        ref = np.where(out <= 0, np.float32(0), grad)
    else:
        ref = torch.ops.aten.threshold_backward(torch.tensor(grad), torch.tensor(out), 0).numpy()
    np.testing.assert_array_equal(ours.view(np.uint32), ref.view(np.uint32))


@pytest.mark.parametrize(("shape", "size"), [
    ((10,), (64, 10)), ((3,), (0, 3)), ((4,), (4,)), ((2, 3), (2, 2, 3)),
])
def test_expand_of_new_leading_dims_matches_pytorch(torch: Any, shape: tuple[int, ...], size: tuple[int, ...]) -> None:
    data = np.arange(int(np.prod(shape)), dtype=np.float64).reshape(shape)
    ours, ref = rg.tensor(data).expand(size), torch.tensor(data).expand(size)
    assert tuple(ours.shape) == tuple(ref.shape)
    assert ours.stride() == ref.stride()
    np.testing.assert_array_equal(ours.numpy(), ref.numpy())
    assert ours._base is not None  # a view, sharing the version counter
    assert ours._version == 0


@pytest.mark.parametrize(("shape", "size"), [
    ((10,), (-1, 10)), ((10,), (4, -1)), ((10,), (4, 9)), ((2, 3), (3,)), ((0,), (2, 0)),
    ((0,), (-1, 0)),
])
def test_expand_errors_and_minus_one_match_pytorch(torch: Any, shape: tuple[int, ...], size: tuple[int, ...]) -> None:
    data = np.zeros(shape)
    assert outcome(lambda: rg.tensor(data).expand(size)) == outcome(lambda: torch.tensor(data).expand(size))
    if outcome(lambda: torch.tensor(data).expand(size))[0] == "ok":
        assert tuple(rg.tensor(data).expand(size).shape) == tuple(torch.tensor(data).expand(size).shape)


def test_expand_of_a_non_contiguous_tensor_matches_pytorch(torch: Any) -> None:
    data = np.arange(6.0).reshape(2, 3)
    ours, ref = rg.tensor(data).t().expand(4, 3, 2), torch.tensor(data).t().expand(4, 3, 2)
    np.testing.assert_array_equal(ours.numpy(), ref.numpy())


def test_sum_backward_views_and_second_order_match_pytorch(torch: Any) -> None:
    # sum()'s and sum_to_size's rules expand the incoming gradient: the gradient is a view, and
    # with create_graph it is recorded (ExpandBackward0) and differentiable again.
    data = np.random.default_rng(0).standard_normal((3, 4))

    def run(lib: Any) -> tuple[Any, ...]:
        x = lib.tensor(data, requires_grad=True)
        b = lib.tensor(data[0], requires_grad=True)
        y = ((x + b) ** 2).sum()
        gx, gb = lib.autograd.grad(y, (x, b), create_graph=True)
        names = (type(y.grad_fn).__name__, type(gx.grad_fn).__name__)
        (hx,) = lib.autograd.grad((gx * gx).sum() + (gb ** 3).sum(), x)
        return names, gx.detach().numpy(), gb.detach().numpy(), hx.numpy()

    ours, ref = run(rg), run(torch)
    assert ours[0] == ref[0]
    for a, b in zip(ours[1:], ref[1:]):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-12)



@pytest.mark.parametrize("dtype", ["float32", "float64", "complex128", "int64", "float16"])
def test_mm_of_matrices_matches_pytorch_and_its_checked_path(torch: Any, dtype: str) -> None:
    # ``_mm`` multiplies two well-formed matrices of one dtype at once (every product a backward
    # rule makes); half goes on through the opmath path. The same values as the checked path,
    # transposed operands (as the rules pass them) included, and PyTorch's within rounding.
    from retrograd.ops.linalg import _in_opmath, _mm

    rng = np.random.default_rng(0)
    a = (rng.standard_normal((5, 3)) * 4).astype(dtype)
    b = (rng.standard_normal((4, 3)) * 4).astype(dtype).T  # a transposed view, as ``mat2.t()``
    ours = _mm(a, b)
    assert ours.dtype == a.dtype and ours.shape == (5, 4)
    np.testing.assert_array_equal(ours, _in_opmath(np.matmul, a, b))
    ref = torch.mm(torch.tensor(a), torch.tensor(b)).numpy()
    tol = 1e-2 if dtype == "float16" else 1e-5
    np.testing.assert_allclose(ours.astype(np.complex128), ref.astype(np.complex128), rtol=tol, atol=tol)


def test_mm_second_order_through_rules_matches_pytorch(torch: Any) -> None:
    # mm's rules call mm on transposed views; the Hessian-vector product through them (grad with
    # create_graph, dot with v, grad again) matches PyTorch's, with the same node names.
    rng = np.random.default_rng(1)
    x_np, w_np, v_np = rng.standard_normal((6, 4)), rng.standard_normal((5, 4)), rng.standard_normal((5, 4))

    def run(lib: Any) -> tuple[Any, ...]:
        x = lib.tensor(x_np, requires_grad=True)
        w = lib.tensor(w_np, requires_grad=True)
        loss = (x.mm(w.t()).tanh() ** 2).sum()
        gx, gw = lib.autograd.grad(loss, (x, w), create_graph=True)
        names = (type(gx.grad_fn).__name__, type(gw.grad_fn).__name__)
        hx, hw = lib.autograd.grad((gw * lib.tensor(v_np)).sum(), (x, w))
        return names, gx.detach().numpy(), gw.detach().numpy(), hx.numpy(), hw.numpy()

    ours, ref = run(rg), run(torch)
    assert ours[0] == ref[0]
    for a, b in zip(ours[1:], ref[1:]):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-12)
