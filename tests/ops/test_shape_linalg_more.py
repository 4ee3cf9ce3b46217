"""Issue #12's shape, linear-algebra and creation ops: what the op database cannot check (errors
against PyTorch's, aliasing and view semantics, identity of returned tensors, warnings)."""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import pytest

import retrograd as rg
from conftest import outcome

M = np.arange(6.0).reshape(2, 3)
V = np.arange(3.0)

SHAPE_ERRORS = {
    "rot90 one dim": lambda lib: lib.rot90(lib.tensor(M), 1, [0]),
    "rot90 same dims": lambda lib: lib.rot90(lib.tensor(M), 1, [0, -2]),
    "rot90 dim out of range": lambda lib: lib.rot90(lib.tensor(M), 1, [0, 5]),
    "rot90 vector": lambda lib: lib.rot90(lib.tensor(V)),
    "rot90 float k": lambda lib: lib.tensor(M).rot90(k=0.5),
    "rot90 int dims": lambda lib: lib.tensor(M).rot90(dims=1),
    "unsafe_split float": lambda lib: lib.tensor(M).unsafe_split(split_size=0.5),
    "unsafe_split_with_sizes sum": lambda lib: lib.unsafe_split_with_sizes(lib.tensor(M), [1, 1], -1),
    "unsafe_split_with_sizes int": lambda lib: lib.tensor(M).unsafe_split_with_sizes(split_sizes=1),
    "unsafe_chunk zero": lambda lib: lib.unsafe_chunk(lib.tensor(V), 0),
    "hstack empty": lambda lib: lib.hstack([]),
    "vstack empty": lambda lib: lib.vstack([]),
    "dstack empty": lambda lib: lib.dstack([]),
    "column_stack empty": lambda lib: lib.column_stack([]),
    "hstack not a tensor": lambda lib: lib.hstack([lib.tensor(V), 1.0]),
    "cartesian_prod none": lambda lib: lib.cartesian_prod(),
    "cartesian_prod matrix": lambda lib: lib.cartesian_prod(lib.tensor(M)),
    "cartesian_prod dtypes": lambda lib: lib.cartesian_prod(lib.tensor(V), lib.tensor([1, 2])),
    "combinations matrix": lambda lib: lib.combinations(lib.tensor(M)),
    "combinations negative r": lambda lib: lib.combinations(lib.tensor(V), -1),
    "H of a vector": lambda lib: lib.tensor(V).H,
    "H of a batch": lambda lib: lib.tensor(M[None]).H,
    "mH of a vector": lambda lib: lib.tensor(V).mH,
    "adjoint of a vector": lambda lib: lib.tensor(V).adjoint(),
}


@pytest.mark.parametrize("name", sorted(SHAPE_ERRORS))
def test_shape_op_errors_match_torch(name: str, torch: Any) -> None:
    call = SHAPE_ERRORS[name]
    theirs = outcome(lambda: call(torch))
    assert theirs[0] != "ok"
    assert outcome(lambda: call(rg)) == theirs


def test_unsafe_split_pieces_alias_the_input_untracked(torch: Any) -> None:
    # PyTorch's "unsafe": pieces share the input's memory but not its version counter or view history.
    for lib in (rg, torch):
        x = lib.tensor(M.copy())
        piece = lib.unsafe_split(x, 1)[0]
        piece.add_(1)
        assert x.tolist() == [[1.0, 2.0, 3.0], [3.0, 4.0, 5.0]]
        assert (x._version, piece._base) == (0, None)


def test_unsafe_chunk_of_empty_dim_gives_chunks_empty_pieces(torch: Any) -> None:
    ours, theirs = rg.unsafe_chunk(rg.ones(0), 3), torch.unsafe_chunk(torch.ones(0), 3)
    assert [p.shape for p in ours] == [p.shape for p in theirs] == [(0,)] * 3


def test_atleast_returns_tensors_that_have_the_dims_as_they_are() -> None:
    x, m = rg.ones(3), rg.ones(2, 3)
    assert rg.atleast_1d(x) is x
    assert rg.atleast_2d(m) is m
    assert rg.atleast_3d(m) is not m
    one, = rg.atleast_1d([x])
    assert one is x


def test_atleast_views_share_memory_with_the_input() -> None:
    x = rg.ones(3, requires_grad=True) * 1
    y = rg.atleast_3d(x)
    assert y.shape == (1, 3, 1) and y._base is x
    y.mul_(2)
    assert x.tolist() == [2.0, 2.0, 2.0]


def test_H_of_0d_warns_and_returns_the_tensor(torch: Any) -> None:
    for lib in (rg, torch):
        x = lib.tensor(2.0)
        with pytest.warns(UserWarning, match="Tensor.H is deprecated on 0-D tensors"):
            assert x.H is x


def test_adjoint_is_a_view_of_the_base() -> None:
    x = rg.tensor(M.copy())
    x.mH[0, 1] = 10.0
    assert x[1, 0].item() == 10.0
    assert rg.adjoint(x)._base is x


def test_rot90_gradient_is_the_inverse_rotation() -> None:
    # hand-derived: rot90 only permutes elements, so d(sum(w * rot90(x)))/dx = rot90(w, -k)
    x = rg.tensor(M.copy(), requires_grad=True)
    w = rg.tensor(np.arange(6.0).reshape(3, 2) + 1)
    (x.rot90() * w).sum().backward()
    assert np.array_equal(x.grad.numpy(), np.rot90(w.numpy(), -1))


def test_combinations_count_and_order() -> None:
    got = rg.combinations(rg.arange(5), 3).tolist()
    import itertools

    assert got == [list(c) for c in itertools.combinations(range(5), 3)]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert rg.combinations(rg.arange(3), 4).shape == (0, 4)


# -- creation functions --------------------------------------------------------------------------
def _described(t: Any) -> tuple[Any, ...]:
    """Values (rounded to float32 noise), shape, dtype name and requires_grad of a tensor."""
    return (np.round(t.detach().numpy().astype(np.float64), 5).tolist(), tuple(t.shape), str(t.dtype),
            t.requires_grad)


def _dtype(lib: Any, kwargs: dict[str, Any]) -> dict[str, Any]:
    return {k: getattr(lib, v) if k == "dtype" else v for k, v in kwargs.items()}


CREATION_CALLS: list[tuple[str, tuple[Any, ...], dict[str, Any]]] = [
    *[(f, args, {}) for f in ("tril_indices", "triu_indices")
      for args in [(3, 3), (3, 4, 1), (3, 4, -1), (0, 3), (4, 2, -2), (2, 5, 10), (-1, 3), (3, -2)]],
    ("tril_indices", (3, 3), {"dtype": "int32"}),
    ("triu_indices", (3, 3), {"dtype": "float32"}),
    ("logspace", (0, 2, 3), {}), ("logspace", (0, 2, 3), {"base": 2}), ("logspace", (0, 2, 3), {"dtype": "int64"}),
    ("logspace", (0, 2, -1), {}), ("logspace", (1, -1, 5), {"dtype": "float64"}), ("logspace", (0, 2, 1), {}),
    ("range", (0, 3), {}), ("range", (0, 1, 0.5), {}), ("range", (0, 3), {"dtype": "int64"}), ("range", (3, 0), {}),
    ("range", (0, 3, 0), {}), ("range", (3, 0, -1), {}), ("range", (0, 1, 0.3), {}), ("range", (5,), {}),
    ("scalar_tensor", (3,), {}), ("scalar_tensor", (True,), {}), ("scalar_tensor", (3,), {"dtype": "int32"}),
    ("scalar_tensor", (2.5,), {"requires_grad": True}),
    *[(f"{w}_window", args, kwargs) for w in ("hann", "hamming", "blackman", "bartlett", "kaiser")
      for args, kwargs in [((0,), {}), ((1,), {}), ((-1,), {}), ((3,), {"dtype": "int64"}),
                           ((3,), {"dtype": "int32"}), ((4, False), {"dtype": "float64", "requires_grad": True}),
                           ((7,), {"dtype": "float64"}), ((6, False), {}), ((5, True), {"dtype": "float64"})]],
    ("hamming_window", (5, True, 0.5, 0.5), {}), ("kaiser_window", (5, False, 3.0), {}),
    ("empty_strided", ((2, 3), (1,)), {}), ("empty_strided", ((2, -3), (1, 2)), {}),
    ("empty_strided", ((2, 3), (-1, 2)), {}),
    ("empty_permuted", ((2, 3, 4), (2, 0)), {}), ("empty_permuted", ((2, 3, 4), (2, 0, 0)), {}),
]


@pytest.mark.parametrize("call", CREATION_CALLS, ids=lambda c: f"{c[0]}{c[1]}{c[2]}")
def test_creation_functions_match_torch(call: tuple[str, tuple[Any, ...], dict[str, Any]], torch: Any) -> None:
    name, args, kwargs = call
    results = []
    for lib in (torch, rg):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                results.append(_described(getattr(lib, name)(*args, **_dtype(lib, kwargs))))
            except Exception as e:  # noqa: BLE001
                results.append((type(e).__name__, str(e)))
    assert results[1] == results[0]


def test_range_warns_as_torch(torch: Any) -> None:
    for lib in (torch, rg):
        with pytest.warns(UserWarning, match=r"torch.range is deprecated .* produces values in \[start, end\)"):
            assert lib.range(0, 2).tolist() == [0.0, 1.0, 2.0]
    import builtins

    assert rg.factories.range is builtins.range if hasattr(rg.factories, "range") else True


@pytest.mark.parametrize("n, increasing", [(None, False), (4, False), (4, True), (1, False), (0, True)])
def test_vander_values_nodes_and_backward_as_torch(n: Any, increasing: bool, torch: Any) -> None:
    # PyTorch writes the cumulative product into the view it reads, so its backward raises the
    # saved-version error whenever N > 1: a differentiable vander has to match that, not compute.
    got = []
    for lib in (torch, rg):
        x = lib.tensor([0.5, -1.5, 2.0], dtype=lib.float64, requires_grad=True)
        y = lib.vander(x, N=n, increasing=increasing)
        node = type(y.grad_fn).__name__
        backward = outcome(lambda: lib.autograd.grad((y * y).sum(), x)) if y.requires_grad else None  # noqa: B023
        got.append((y.detach().numpy().tolist(), node, y.requires_grad, backward))
    assert got[1] == got[0]


def test_vander_integer_inputs_become_int64(torch: Any) -> None:
    for dtype in ("int32", "bool", "uint8"):
        ours = rg.vander(rg.tensor([1, 0, 1], dtype=getattr(rg, dtype)))
        theirs = torch.vander(torch.tensor([1, 0, 1], dtype=getattr(torch, dtype)))
        assert (ours.tolist(), str(ours.dtype)) == (theirs.tolist(), str(theirs.dtype))


@pytest.mark.parametrize("size, stride", [((2, 3), (1, 2)), ((2, 3), (0, 1)), ((2, 3), (3, 1)), ((3,), (2,))])
def test_empty_strided_layout(size: Any, stride: Any, torch: Any) -> None:
    ours, theirs = rg.empty_strided(size, stride), torch.empty_strided(size, stride)
    assert (ours.shape, ours.stride(), ours.dtype) == (theirs.shape, theirs.stride(), rg.float32)
    new = rg.ones(2, dtype=rg.float64).new_empty_strided(size, stride)
    assert (new.stride(), new.dtype) == (stride, rg.float64)
    assert rg.empty_strided(size, stride, dtype=rg.float64, requires_grad=True).requires_grad


def test_empty_permuted_layout(torch: Any) -> None:
    for size, layout in [((2, 3, 4), (2, 0, 1)), ((2, 3), (1, 0)), ((2, 3, 4), (0, 1, 2))]:
        ours, theirs = rg.empty_permuted(size, layout), torch.empty_permuted(size, layout)
        assert (ours.shape, ours.stride()) == (theirs.shape, theirs.stride())


# -- linear algebra ------------------------------------------------------------------------------
_RNG = np.random.default_rng(7)
LM, LA, LB = _RNG.normal(size=(3, 4)), _RNG.normal(size=3), _RNG.normal(size=4)
B1, B2 = _RNG.normal(size=(2, 3, 5)), _RNG.normal(size=(2, 5, 4))
X3, Y3 = _RNG.normal(size=(4, 3)), _RNG.normal(size=(4, 3))

LINALG_ERRORS = {
    "addr 2-d vec1": lambda lib: lib.addr(lib.tensor(LM), lib.tensor(LA).view(3, 1), lib.tensor(LB)),
    "addr 2-d vec2": lambda lib: lib.addr(lib.tensor(LM), lib.tensor(LA), lib.tensor(LB).view(1, 4)),
    "addr input does not expand": lambda lib: lib.addr(lib.tensor(LM[:2]), lib.tensor(LA), lib.tensor(LB)),
    "addr float beta for ints": lambda lib: lib.addr(lib.ones(3, 4, dtype=lib.int32), lib.ones(3, dtype=lib.int32),
                                                     lib.ones(4, dtype=lib.int32), beta=0.5),
    "addr_ of a vector": lambda lib: lib.tensor(LB).addr_(lib.tensor(LA), lib.tensor(LB)),
    "addr_ size mismatch": lambda lib: lib.tensor(LM[:, :1]).addr_(lib.tensor(LA), lib.tensor(LB)),
    "addbmm batches": lambda lib: lib.addbmm(lib.tensor(LM), lib.tensor(B1), lib.tensor(B2[:1])),
    "addbmm inner sizes": lambda lib: lib.addbmm(lib.tensor(LM), lib.tensor(B1), lib.tensor(B2[:, :4])),
    "addbmm self dtype": lambda lib: lib.addbmm(lib.tensor(LM), lib.tensor(B1, dtype=lib.float32),
                                                lib.tensor(B2, dtype=lib.float32)),
    "addbmm batch dtype": lambda lib: lib.addbmm(lib.tensor(LM), lib.tensor(B1), lib.tensor(B2, dtype=lib.float32)),
    "addmv_ broadcast self": lambda lib: lib.tensor(LA[:1]).addmv_(lib.tensor(LM), lib.tensor(LB)),
    "baddbmm_ broadcast self": lambda lib: lib.tensor(LM).baddbmm_(lib.tensor(B1), lib.tensor(B2)),
    "cross length": lambda lib: lib.cross(lib.tensor(X3), lib.tensor(Y3[:, :2]), dim=1),
    "cross dim length": lambda lib: lib.cross(lib.tensor(X3), lib.tensor(Y3), dim=0),
    "cross ndim": lambda lib: lib.cross(lib.tensor(X3), lib.tensor(Y3[0]), dim=1),
    "cross dtype": lambda lib: lib.cross(lib.tensor(X3), lib.tensor(Y3, dtype=lib.float32), dim=1),
    "cross dim range": lambda lib: lib.cross(lib.tensor(X3), lib.tensor(Y3), dim=2),
    "cross no dim of 3": lambda lib: lib.cross(lib.ones(4, 2), lib.ones(4, 2)),
    "chain_matmul none": lambda lib: lib.chain_matmul(),
    "chain_matmul shapes": lambda lib: lib.chain_matmul(lib.tensor(X3), lib.tensor(Y3)),
    "chain_matmul vector": lambda lib: lib.chain_matmul(lib.tensor(X3[0]), lib.tensor(Y3.T)),
    "pinverse vector": lambda lib: lib.pinverse(lib.ones(3)),
    "pinverse integer": lambda lib: lib.pinverse(lib.ones(2, 3, dtype=lib.int64)),
    "matrix_exp not square": lambda lib: lib.matrix_exp(lib.ones(2, 3)),
    "matrix_exp integer": lambda lib: lib.matrix_exp(lib.ones(2, 2, dtype=lib.int64)),
    "matrix_exp vector": lambda lib: lib.matrix_exp(lib.ones(3)),
}


@pytest.mark.parametrize("name", sorted(LINALG_ERRORS))
def test_linalg_op_errors_match_torch(name: str, torch: Any) -> None:
    call = LINALG_ERRORS[name]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        theirs = outcome(lambda: call(torch))
        ours = outcome(lambda: call(rg))
    assert theirs[0] != "ok"
    assert ours == theirs


def test_inplace_products_write_into_self_and_keep_it_on_error(torch: Any) -> None:
    for lib in (rg, torch):
        x = lib.tensor(LA.copy())
        assert x.addmv_(lib.tensor(LM), lib.tensor(LB), beta=0.5) is x
        np.testing.assert_allclose(x.numpy(), 0.5 * LA + LM @ LB)
        y = lib.tensor(LA[:1].copy())
        with pytest.raises(RuntimeError, match="Bad in-place call"):
            y.addmv_(lib.tensor(LM), lib.tensor(LB))
        assert (y.tolist(), y._version) == (LA[:1].tolist(), 0)  # nothing written


def test_cross_default_dim_warns_and_picks_the_first_dim_of_size_3(torch: Any) -> None:
    a, b = _RNG.normal(size=(3, 3, 2)), _RNG.normal(size=(3, 3, 2))
    # (PyTorch warns once per process, so only ours is checked for the warning)
    with pytest.warns(UserWarning, match="Using torch.cross without specifying the dim arg is deprecated"):
        ours = rg.cross(rg.tensor(a), rg.tensor(b)).numpy()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        theirs = torch.cross(torch.tensor(a), torch.tensor(b)).numpy()
    np.testing.assert_allclose(ours, theirs)
    np.testing.assert_allclose(ours, np.cross(a, b, axis=0))


def test_chain_matmul_warns_and_one_matrix_is_a_copy(torch: Any) -> None:
    m = rg.tensor(X3, requires_grad=True)
    with pytest.warns(UserWarning, match="torch.chain_matmul is deprecated"):  # (PyTorch warns once per process)
        one = rg.chain_matmul(m)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        theirs = torch.chain_matmul(torch.tensor(X3, requires_grad=True))
    assert type(one.grad_fn).__name__ == type(theirs.grad_fn).__name__ == "CloneBackward0"
    assert not np.shares_memory(one.detach().numpy(), m.detach().numpy())
    assert np.array_equal(one.detach().numpy(), X3)


def test_matrix_exp_against_closed_forms() -> None:
    # exp of a rotation generator is a rotation; exp of a nilpotent matrix is I + N.
    t = 100.0
    got = rg.matrix_exp(rg.tensor([[0.0, t], [-t, 0.0]], dtype=rg.float64)).numpy()
    np.testing.assert_allclose(got, [[np.cos(t), np.sin(t)], [-np.sin(t), np.cos(t)]], atol=1e-9)
    np.testing.assert_array_equal(rg.matrix_exp(rg.tensor([[0.0, 1.0], [0.0, 0.0]])).numpy(), [[1, 1], [0, 1]])


def test_pinverse_of_rank_deficient_and_rcond(torch: Any) -> None:
    for data, rcond in (([[1.0, 2.0], [2.0, 4.0]], 1e-15), ([[1.0, 0.0], [0.0, 1e-3]], 1e-2)):
        ours = rg.pinverse(rg.tensor(data, dtype=rg.float64), rcond=rcond).numpy()
        theirs = torch.pinverse(torch.tensor(data, dtype=torch.float64), rcond=rcond).numpy()
        np.testing.assert_allclose(ours, theirs, atol=1e-12)


# -- select/slice/diagonal_scatter and Tensor.unfold ---------------------------------------------
SX = _RNG.normal(size=(3, 4))

# (a float where an int is wanted is given by keyword: PyTorch's message for a positional one adds
# "(position N)", which the forms do not know)
SCATTER_ERRORS = {
    "select_scatter src size": lambda lib: lib.select_scatter(lib.tensor(SX), lib.ones(3, dtype=lib.float64), 0, 1),
    "select_scatter index": lambda lib: lib.select_scatter(lib.tensor(SX), lib.ones(4, dtype=lib.float64), 0, 5),
    "select_scatter float index": lambda lib: lib.tensor(SX).select_scatter(lib.ones(4), dim=0, index=0.5),
    "slice_scatter src size": lambda lib: lib.slice_scatter(lib.tensor(SX), lib.ones(3, 3, dtype=lib.float64), 1),
    "slice_scatter float start": lambda lib: lib.tensor(SX).slice_scatter(lib.ones(3, 4), dim=0, start=0.5),
    "diagonal_scatter src size": lambda lib: lib.diagonal_scatter(lib.tensor(SX), lib.ones(4, dtype=lib.float64)),
    "diagonal_scatter same dims": lambda lib: lib.diagonal_scatter(lib.tensor(SX), lib.ones(3), 0, 1, 1),
    "unfold too big": lambda lib: lib.tensor(SX).unfold(1, 5, 1),
    "unfold step 0": lambda lib: lib.tensor(SX).unfold(1, 2, 0),
    "unfold dim": lambda lib: lib.tensor(SX).unfold(2, 2, 1),
    "unfold float size": lambda lib: lib.tensor(SX).unfold(0, size=0.5, step=1),
}


@pytest.mark.parametrize("name", sorted(SCATTER_ERRORS))
def test_scatter_and_unfold_errors_match_torch(name: str, torch: Any) -> None:
    call = SCATTER_ERRORS[name]
    theirs = outcome(lambda: call(torch))
    assert theirs[0] != "ok"
    assert outcome(lambda: call(rg)) == theirs


def test_scatters_do_not_write_into_their_input() -> None:
    x = rg.tensor(SX.copy())
    y = x.select_scatter(rg.zeros(4, dtype=rg.float64), 0, 1)
    z = rg.slice_scatter(x, rg.zeros(3, 2, dtype=rg.float64), 1, 0, None, 2)
    w = rg.diagonal_scatter(x, rg.zeros(3, dtype=rg.float64))
    assert np.array_equal(x.numpy(), SX) and x._version == 0
    assert not y[1].any() and not z[:, ::2].any() and not w.diagonal().any()


def test_unfold_is_a_view_with_pytorch_strides(torch: Any) -> None:
    for lib in (rg, torch):
        x = lib.tensor(SX.copy())
        u = x.unfold(1, 2, 2)
        assert u._base is x and u.stride() == (4, 2, 1) and tuple(u.shape) == (3, 2, 2)
        u[0, 1, 0] = 100.0
        assert x[0, 2].item() == 100.0 and x._version == 1


def test_unfold_gradient_counts_overlapping_windows() -> None:
    # hand-derived: with size 3, step 1 over 4 columns, columns 0..3 lie in 1, 2, 2, 1 windows.
    x = rg.tensor(SX.copy(), requires_grad=True)
    x.unfold(1, 3, 1).sum().backward()
    assert x.grad.tolist() == [[1.0, 2.0, 2.0, 1.0]] * 3


# -- fill_diagonal_ --------------------------------------------------------------------------------
@pytest.mark.parametrize("shape, value, wrap", [((3, 3), 2.0, False), ((7, 3), 1.0, True), ((7, 3), 1.0, False),
                                                ((2, 5), -1.0, True), ((2, 2, 2), 3.0, False), ((3,), 1.0, False),
                                                ((2, 3, 2), 1.0, False)])
def test_fill_diagonal_matches_torch(shape: Any, value: float, wrap: bool, torch: Any) -> None:
    got = []
    for lib in (torch, rg):
        def run() -> Any:
            x = lib.tensor(np.arange(float(np.prod(shape))).reshape(shape), requires_grad=True)
            y = x * 1
            out = y.fill_diagonal_(value, wrap=wrap)
            assert out is y
            (grad,) = lib.autograd.grad((y * y).sum(), x)
            return y.detach().numpy().tolist(), type(y.grad_fn).__name__, grad.numpy().tolist()

        got.append(outcome(run) if len(shape) < 2 or len(set(shape)) > 1 and len(shape) > 2 else run())
    assert got[1] == got[0]


def test_fill_diagonal_on_integers_truncates_like_torch(torch: Any) -> None:
    ours = rg.zeros(2, 2, dtype=rg.int64).fill_diagonal_(1.7)
    theirs = torch.zeros(2, 2, dtype=torch.int64).fill_diagonal_(1.7)
    assert ours.tolist() == theirs.tolist()
