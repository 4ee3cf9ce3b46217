"""Tensor basics: factories, dtypes and promotion, attributes, repr, NumPy interop, flag errors."""

from __future__ import annotations

import itertools
from typing import Any

import numpy as np
import pytest

import retrograd as rg


def test_factories_and_inferred_dtypes(torch: Any) -> None:
    cases = [
        lambda lib: lib.tensor([1.0, 2.0]),
        lambda lib: lib.tensor([[1, 2], [3, 4]]),
        lambda lib: lib.tensor([True, False]),
        lambda lib: lib.tensor(3.5),
        lambda lib: lib.tensor([1, 2.5]),
        lambda lib: lib.tensor(np.array([1.0, 2.0])),
        lambda lib: lib.tensor(np.array([1, 2], dtype=np.int32)),
        lambda lib: lib.tensor([1, 2], dtype=lib.float64),
        lambda lib: lib.zeros(2, 3),
        lambda lib: lib.ones((2,), dtype=lib.int32),
        lambda lib: lib.full((2, 2), 7),
        lambda lib: lib.full((2,), 1.5),
        lambda lib: lib.arange(5),
        lambda lib: lib.arange(1, 2, 0.25),
        lambda lib: lib.arange(0, 5.0),
        lambda lib: lib.linspace(0, 1, 5),
        lambda lib: lib.eye(3, 2),
        lambda lib: lib.zeros_like(lib.tensor([1, 2])),
        lambda lib: lib.ones_like(lib.tensor([1.0]), dtype=lib.float64),
        lambda lib: lib.full_like(lib.tensor([1.0, 2.0]), 3),
        lambda lib: lib.empty(0, 2),
    ]
    for make in cases:
        ours, theirs = make(rg), make(torch)
        assert str(ours.dtype) == str(theirs.dtype)
        assert list(ours.shape) == list(theirs.shape)
        if ours.numel():
            np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=1e-6)


def test_from_numpy_shares_memory_and_tensor_copies() -> None:
    a = np.zeros(3)
    shared, copied = rg.from_numpy(a), rg.tensor(a)
    a[0] = 5
    assert shared[0].item() == 5.0 and copied[0].item() == 0.0
    assert rg.as_tensor(a).numpy() is a
    with pytest.raises(TypeError, match="can't convert np.ndarray of type"):
        rg.from_numpy(np.array(["a"]))


_DTYPES = ["bool", "uint8", "int32", "int64", "float16", "float32", "float64"]


@pytest.mark.parametrize(("left", "right"), list(itertools.product(_DTYPES, _DTYPES)))
def test_tensor_tensor_promotion(torch: Any, left: str, right: str) -> None:
    for shape_l, shape_r in [((2,), (2,)), ((2,), ()), ((), (2,))]:
        a_np = np.ones(shape_l, dtype=left)
        b_np = np.ones(shape_r, dtype=right)
        ours = rg.tensor(a_np) * rg.tensor(b_np)
        theirs = torch.tensor(a_np) * torch.tensor(b_np)
        assert str(ours.dtype) == str(theirs.dtype), (left, right, shape_l, shape_r)


@pytest.mark.parametrize("dtype", _DTYPES)
@pytest.mark.parametrize("scalar", [True, 2, 2.5])
def test_tensor_scalar_promotion(torch: Any, dtype: str, scalar: Any) -> None:
    a = np.ones(2, dtype=dtype)
    if dtype == "bool" and scalar is True:
        return
    for op in (lambda t: t + scalar, lambda t: scalar * t, lambda t: t / scalar):
        assert str(op(rg.tensor(a)).dtype) == str(op(torch.tensor(a)).dtype)


def test_default_dtype_switch() -> None:
    rg.set_default_dtype(rg.float64)
    try:
        assert rg.tensor([1.5]).dtype == rg.float64
        assert (rg.tensor([1, 2]) * 0.5).dtype == rg.float64
    finally:
        rg.set_default_dtype(rg.float32)
    assert rg.tensor([1.5]).dtype == rg.float32


def test_casts() -> None:
    x = rg.tensor([1.7, -2.2])
    assert x.long().tolist() == [1, -2]
    assert x.int().dtype == rg.int32 and x.double().dtype == rg.float64
    assert x.bool().tolist() == [True, True]
    assert x.to(rg.float32) is x
    assert x.type_as(rg.tensor([1])).dtype == rg.int64


def test_attributes() -> None:
    x = rg.zeros(2, 3, 4)
    assert x.shape == (2, 3, 4) and x.size() == (2, 3, 4) and x.size(-1) == 4
    assert x.dim() == x.ndim == 3 and x.numel() == 24
    assert str(x.device) == "cpu" and x.is_leaf and not x.requires_grad
    assert repr(x.shape) == "torch.Size([2, 3, 4])"
    assert x.T.shape == (4, 3, 2) and x.mT.shape == (2, 4, 3)
    assert len(x) == 2 and [t.shape for t in x] == [(3, 4), (3, 4)]
    with pytest.raises(TypeError, match="len\\(\\) of a 0-d tensor"):
        len(rg.tensor(1.0))
    with pytest.raises(IndexError, match=r"Dimension out of range \(expected to be in range of \[-3, 2\], but got 3\)"):
        x.size(3)


def test_item_tolist_numpy() -> None:
    x = rg.tensor([[1.5]])
    assert x.item() == 1.5 and type(x.item()) is float
    assert type(rg.tensor([3]).item()) is int
    assert rg.tensor([[1, 2]]).tolist() == [[1, 2]]
    with pytest.raises(RuntimeError, match="a Tensor with 2 elements cannot be converted to Scalar"):
        rg.tensor([1.0, 2.0]).item()
    y = rg.ones(2, requires_grad=True)
    with pytest.raises(RuntimeError, match="Can't call numpy\\(\\) on Tensor that requires grad"):
        y.numpy()
    assert y.detach().numpy().tolist() == [1.0, 1.0]
    assert np.asarray(rg.tensor([1, 2])).tolist() == [1, 2]
    with pytest.raises(RuntimeError, match="Boolean value of Tensor with more than one value is ambiguous"):
        bool(rg.tensor([1.0, 2.0]))


def test_numpy_arrays_mix_with_tensors() -> None:
    t = rg.tensor([1.0, 2.0])
    out = np.array([2.0, 3.0]) * t
    assert isinstance(out, rg.Tensor) and out.tolist() == [2.0, 6.0]
    assert (t + np.float64(1.0)).dtype == rg.float32


@pytest.mark.parametrize(
    "make",
    [
        lambda lib: lib.tensor([1.0, 2.0], requires_grad=True),
        lambda lib: lib.tensor([1.0, 2.0], requires_grad=True) * 2,
        lambda lib: lib.tensor([[1.5, 2.25], [3.0, -4.125]]),
        lambda lib: lib.tensor([1, 2, 3]),
        lambda lib: lib.tensor([True, False]),
        lambda lib: lib.tensor(0.5),
        lambda lib: lib.tensor(3.0),
        lambda lib: lib.tensor([1.0, 2.0], dtype=lib.float64),
        lambda lib: lib.tensor([1, 2], dtype=lib.int32),
        lambda lib: lib.zeros(0),
        lambda lib: lib.zeros(2, 2, 2),
        lambda lib: lib.tensor([0.0001234, 5.0]),
    ],
)
def test_repr_matches_torch(torch: Any, make: Any) -> None:
    assert repr(make(rg)) == repr(make(torch))


def test_requires_grad_flag_rules() -> None:
    with pytest.raises(RuntimeError, match="only Tensors of floating point dtype can require gradients"):
        rg.tensor([1, 2]).requires_grad_()
    with pytest.raises(RuntimeError, match="Only Tensors of floating point and complex dtype can require gradients"):
        rg.tensor([1, 2], requires_grad=True)
    with pytest.raises(TypeError, match='zeros\\(\\) missing 1 required positional arguments: "size"'):
        rg.zeros()
    y = rg.ones(2, requires_grad=True) * 2
    with pytest.raises(RuntimeError, match="you can only change requires_grad flags of leaf variables"):
        y.requires_grad = False
    x = rg.ones(2)
    assert x.requires_grad_() is x and x.requires_grad


def test_detach_and_data_share_storage() -> None:
    x = rg.tensor([1.0, 2.0], requires_grad=True)
    d = x.detach()
    d[0] = 9.0
    assert x[0].item() == 9.0 and d.is_leaf and not d.requires_grad
    x.data.mul_(2)
    assert x.tolist() == [18.0, 4.0]


def test_grad_setter_checks() -> None:
    x = rg.ones(2, requires_grad=True)
    with pytest.raises(RuntimeError, match="attempting to assign a gradient of size"):
        x.grad = rg.ones(3)
    x.grad = rg.zeros(2)
    assert x.grad.tolist() == [0.0, 0.0]


def test_random_generators_are_seeded() -> None:
    rg.manual_seed(3)
    a = rg.randn(4)
    rg.manual_seed(3)
    b = rg.randn(4)
    assert rg.equal(a, b) and a.dtype == rg.float32
    g = rg.Generator().manual_seed(1)
    assert rg.rand(3, generator=g).shape == (3,)
    r = rg.randint(0, 5, (100,))
    assert r.dtype == rg.int64 and int(r.min()) >= 0 and int(r.max()) < 5
    n = rg.normal(2.0, 0.5, (1000,))
    assert abs(n.mean().item() - 2.0) < 0.1
    assert rg.randn_like(rg.zeros(2, dtype=rg.float64)).dtype == rg.float64


def test_size_slices_are_sizes() -> None:
    shape = rg.zeros(2, 3, 4).shape
    assert repr(shape[1:]) == "torch.Size([3, 4])" and shape[0] == 2 and shape.numel() == 24


def test_return_types_repr_matches_torch(torch: Any) -> None:
    data = [[2.0, 1.0], [1.0, 3.0]]
    for make in (lambda lib: lib.tensor([3.0, 1.0]).max(0), lambda lib: lib.linalg.slogdet(lib.tensor(data)),
                 lambda lib: lib.tensor([3.0, 1.0, 2.0]).sort()):
        assert repr(make(rg)) == repr(make(torch))


def test_cpu_only_device_handling() -> None:
    assert not rg.cuda.is_available() and rg.cuda.device_count() == 0
    assert rg.ones(2).to("cpu").tolist() == [1.0, 1.0]
    with pytest.raises(RuntimeError, match="CPU only"):
        rg.ones(1).to("cuda")
    with pytest.raises(RuntimeError, match="CPU only"):
        rg.ones(1).cuda()
