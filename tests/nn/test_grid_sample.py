"""``nn.functional.grid_sample`` and ``torch.grid_sampler{,_2d,_3d}`` against real PyTorch: every
mode x padding x align_corners, 4-D and 5-D, values and gradients for the input AND the grid
(including grid points on and far beyond the borders, where the clipping and reflection slopes
change), float32, empty sizes, grad_fn names and saved attributes, errors and warnings.
Smooth-sample gradcheck/gradgradcheck are the op database's (tests/opdb/conv.py)."""

from __future__ import annotations

import itertools
import warnings
from typing import Any

import numpy as np
import pytest

import retrograd as rg
from conftest import outcome

MODES = ("bilinear", "nearest", "bicubic")
PADDINGS = ("zeros", "border", "reflection")

# grid points on the borders (+-1, where align_corners=True lands on pixel centres), beyond them
# (clipped, reflected more than once) and inside
EDGE_POINTS = [-1.0, 1.0, 0.0, 0.5, -1.0, 1.0, 1.7, -2.3, 3.25, -5.0, 7.5, 1e6, -1e6, 0.999, -0.999, 0.25]


def _grid(rng: np.random.Generator, shape: tuple[int, ...]) -> np.ndarray:
    g = rng.uniform(-1.4, 1.4, size=shape)
    flat = g.reshape(-1)
    flat[:len(EDGE_POINTS)] = EDGE_POINTS[:flat.size]
    return g


def _run(lib: Any, x: np.ndarray, g: np.ndarray, w: np.ndarray, **kwargs: Any) -> tuple[Any, ...]:
    xt = lib.tensor(x, requires_grad=True)
    gt = lib.tensor(g, requires_grad=True)
    y = lib.nn.functional.grid_sample(xt, gt, **kwargs)
    (y * lib.tensor(w)).sum().backward()
    return y.detach().numpy(), xt.grad.numpy(), gt.grad.numpy(), type(y.grad_fn).__name__, str(y.dtype)


CASES = [(nd, m, p, a) for nd in (2, 3) for m, p, a in itertools.product(MODES, PADDINGS, (False, True))
         if not (nd == 3 and m == "bicubic")]


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize(("nd", "mode", "padding_mode", "align_corners"), CASES)
def test_values_and_both_gradients_match_torch(torch: Any, nd: int, mode: str, padding_mode: str,
                                                align_corners: bool, dtype: str) -> None:
    rng = np.random.default_rng(nd * 100 + len(mode) * 10 + len(padding_mode) + align_corners)
    spatial = (3, 4) if nd == 2 else (2, 3, 4)
    out = (2, 5) if nd == 2 else (2, 2, 3)
    x = rng.normal(size=(2, 3) + spatial).astype(dtype)
    g = _grid(rng, (2,) + out + (nd,)).astype(dtype)
    w = rng.normal(size=(2, 3) + out).astype(dtype)
    kwargs = {"mode": mode, "padding_mode": padding_mode, "align_corners": align_corners}
    ours, theirs = _run(rg, x, g, w, **kwargs), _run(torch, x, g, w, **kwargs)
    assert ours[3:] == theirs[3:]
    tol = {"rtol": 1e-9, "atol": 1e-10} if dtype == "float64" else {"rtol": 1e-4, "atol": 1e-4}
    for a, b in zip(ours[:3], theirs[:3], strict=True):
        assert a.dtype == b.dtype
        np.testing.assert_allclose(a, b, **tol)


@pytest.mark.parametrize(("mode", "padding_mode"), list(itertools.product(MODES, PADDINGS)))
def test_unit_sized_input_dims_and_empty_sizes_match_torch(torch: Any, mode: str, padding_mode: str) -> None:
    rng = np.random.default_rng(3)
    shapes = [((1, 2, 1, 4), (1, 2, 3, 2)), ((1, 2, 1, 1), (1, 2, 3, 2)), ((0, 2, 3, 4), (0, 2, 3, 2)),
              ((1, 2, 3, 4), (1, 0, 3, 2)), ((1, 0, 3, 4), (1, 2, 3, 2))]
    for align_corners in (False, True):
        for xs, gs in shapes:
            x, g = rng.normal(size=xs), rng.uniform(-3, 3, size=gs)
            w = rng.normal(size=(xs[0], xs[1]) + gs[1:3])
            kwargs = {"mode": mode, "padding_mode": padding_mode, "align_corners": align_corners}
            ours, theirs = _run(rg, x, g, w, **kwargs), _run(torch, x, g, w, **kwargs)
            for a, b in zip(ours[:3], theirs[:3], strict=True):
                assert a.shape == b.shape
                np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12)


def test_double_backward_matches_torch(torch: Any) -> None:
    rng = np.random.default_rng(5)
    x, g = rng.normal(size=(1, 2, 3, 4)), rng.uniform(-1.2, 1.2, size=(1, 2, 3, 2))
    for mode, padding_mode in itertools.product(("bilinear", "bicubic"), PADDINGS):
        results = []
        for lib in (rg, torch):
            xt, gt = lib.tensor(x, requires_grad=True), lib.tensor(g, requires_grad=True)
            y = lib.nn.functional.grid_sample(xt, gt, mode=mode, padding_mode=padding_mode, align_corners=False)
            gx, gg = lib.autograd.grad((y ** 2).sum(), (xt, gt), create_graph=True)
            hx, hg = lib.autograd.grad((gx ** 2).sum() + (gg ** 3).sum(), (xt, gt))
            results.append([t.detach().numpy() for t in (gx, gg, hx, hg)])
        for a, b in zip(*results, strict=True):
            np.testing.assert_allclose(a, b, rtol=1e-9, atol=1e-10)


def test_gradcheck_and_gradgradcheck_every_mode_in_float64() -> None:
    rng = np.random.default_rng(11)
    for mode, padding_mode, align_corners in itertools.product(MODES, PADDINGS, (False, True)):
        x = rg.tensor(rng.normal(size=(1, 2, 3, 3)), requires_grad=True)
        g = rg.tensor(rng.uniform(-1.3, 1.3, size=(1, 2, 2, 2)), requires_grad=True)

        def fn(a: Any, b: Any, mode: str = mode, padding_mode: str = padding_mode,
               align_corners: bool = align_corners) -> Any:
            return rg.nn.functional.grid_sample(a, b, mode=mode, padding_mode=padding_mode,
                                                align_corners=align_corners)

        assert rg.autograd.gradcheck(fn, (x, g))
        assert rg.autograd.gradgradcheck(fn, (x, g))
    x3 = rg.tensor(rng.normal(size=(1, 1, 2, 3, 2)), requires_grad=True)
    g3 = rg.tensor(rng.uniform(-1.3, 1.3, size=(1, 2, 1, 2, 3)), requires_grad=True)
    for padding_mode in PADDINGS:
        assert rg.autograd.gradgradcheck(
            lambda a, b, p=padding_mode: rg.nn.functional.grid_sample(a, b, padding_mode=p, align_corners=True),
            (x3, g3))


def test_grad_fn_and_saved_attributes_match_torch(torch: Any) -> None:
    x = np.arange(24.0).reshape(1, 2, 3, 4)
    g = np.full((1, 1, 2, 2), 0.25)
    found = []
    for lib in (rg, torch):
        y = lib.grid_sampler(lib.tensor(x, requires_grad=True), lib.tensor(g, requires_grad=True), 2, 1, True)
        fn = y.grad_fn
        found.append((type(fn).__name__, fn._saved_interpolation_mode, fn._saved_padding_mode,
                      fn._saved_align_corners, fn._saved_input.tolist(), fn._saved_grid.tolist(),
                      [type(n).__name__ for n, _ in fn.next_functions]))
    assert found[0] == found[1]
    y3 = rg.grid_sampler_3d(rg.ones(1, 1, 2, 2, 2, requires_grad=True), rg.zeros(1, 1, 1, 1, 3), 0, 0, False)
    assert type(y3.grad_fn).__name__ == type(torch.grid_sampler_3d(
        torch.ones(1, 1, 2, 2, 2, requires_grad=True), torch.zeros(1, 1, 1, 1, 3), 0, 0, False).grad_fn).__name__


def test_torch_spellings_match_torch(torch: Any) -> None:
    rng = np.random.default_rng(2)
    x, g = rng.normal(size=(2, 2, 3, 4)), rng.uniform(-1.5, 1.5, size=(2, 3, 2, 2))
    x3, g3 = rng.normal(size=(1, 2, 2, 3, 4)), rng.uniform(-1.5, 1.5, size=(1, 2, 3, 2, 3))
    for name, (a, b) in [("grid_sampler", (x, g)), ("grid_sampler", (x3, g3)), ("grid_sampler_2d", (x, g)),
                         ("grid_sampler_3d", (x3, g3))]:
        for mode, padding_mode, align in itertools.product((0, 1), (0, 1, 2), (False, True)):
            ours = getattr(rg, name)(rg.tensor(a), rg.tensor(b), mode, padding_mode, align).numpy()
            theirs = getattr(torch, name)(torch.tensor(a), torch.tensor(b), mode, padding_mode, align).numpy()
            np.testing.assert_allclose(ours, theirs, rtol=1e-10, atol=1e-12)


F = "nn.functional.grid_sample"
ERRORS = [
    ("batch", lambda L: L.nn.functional.grid_sample(L.ones(1, 2, 3, 4), L.zeros(2, 2, 3, 2), align_corners=False)),
    ("last dim", lambda L: L.nn.functional.grid_sample(L.ones(1, 2, 3, 4), L.zeros(1, 2, 3, 3), align_corners=False)),
    ("unbatched", lambda L: L.nn.functional.grid_sample(L.ones(2, 3, 4), L.zeros(2, 3, 2), align_corners=False)),
    ("3-D input", lambda L: L.nn.functional.grid_sample(L.ones(1, 2, 3), L.zeros(1, 3, 1), align_corners=False)),
    ("grid dtype", lambda L: L.nn.functional.grid_sample(L.ones(1, 2, 3, 4), L.zeros(1, 2, 3, 2, dtype=L.float64),
                                                         align_corners=False)),
    ("integer grid", lambda L: L.nn.functional.grid_sample(L.ones(1, 2, 3, 4), L.zeros(1, 2, 3, 2, dtype=L.int64),
                                                           align_corners=False)),
    ("integer input", lambda L: L.nn.functional.grid_sample(L.ones(1, 2, 3, 4, dtype=L.int64), L.zeros(1, 2, 3, 2),
                                                            align_corners=False)),
    ("bicubic 3-D", lambda L: L.nn.functional.grid_sample(L.ones(1, 2, 3, 4, 5), L.zeros(1, 2, 3, 4, 3),
                                                          mode="bicubic", align_corners=False)),
    ("empty spatial", lambda L: L.nn.functional.grid_sample(L.ones(1, 2, 0, 4), L.zeros(1, 2, 3, 2),
                                                            align_corners=False)),
    ("mode", lambda L: L.nn.functional.grid_sample(L.ones(1, 2, 3, 4), L.zeros(1, 2, 3, 2), mode="area")),
    ("padding", lambda L: L.nn.functional.grid_sample(L.ones(1, 2, 3, 4), L.zeros(1, 2, 3, 2), padding_mode="x")),
    ("2d of 5-D", lambda L: L.grid_sampler_2d(L.ones(1, 2, 3, 4, 5), L.zeros(1, 2, 3, 4, 3), 0, 0, False)),
    ("3d of 4-D", lambda L: L.grid_sampler_3d(L.ones(1, 2, 3, 4), L.zeros(1, 2, 3, 2), 0, 0, False)),
    ("3d bicubic", lambda L: L.grid_sampler_3d(L.ones(1, 2, 3, 4, 5), L.zeros(1, 2, 3, 4, 3), 2, 0, False)),
    ("ok", lambda L: L.nn.functional.grid_sample(L.ones(1, 2, 3, 4), L.zeros(1, 2, 3, 2), align_corners=True)),
]


@pytest.mark.parametrize(("label", "call"), ERRORS, ids=[e[0] for e in ERRORS])
def test_errors_match_torch(torch: Any, label: str, call: Any) -> None:
    assert outcome(lambda: call(rg)) == outcome(lambda: call(torch))


def test_default_align_corners_warns_as_torch(torch: Any) -> None:
    caught = []
    for lib in (rg, torch):
        with warnings.catch_warnings(record=True) as seen:
            warnings.simplefilter("always")
            lib.nn.functional.grid_sample(lib.ones(1, 1, 2, 2), lib.zeros(1, 1, 1, 2))
        caught.append([(w.category, str(w.message)) for w in seen])
    assert caught[0] == caught[1] and len(caught[0]) == 1


def test_out_of_range_mode_enums_are_refused() -> None:
    # PyTorch does not check them (a bad value samples with an undefined mode); a clear error here
    with pytest.raises(RuntimeError, match="interpolation_mode"):
        rg.grid_sampler(rg.ones(1, 1, 2, 2), rg.zeros(1, 1, 1, 2), 3, 0, False)
    with pytest.raises(RuntimeError, match="padding_mode"):
        rg.grid_sampler(rg.ones(1, 1, 2, 2), rg.zeros(1, 1, 1, 2), 0, 3, False)


def test_spatial_transformer_with_affine_grid_matches_hand_math() -> None:
    # a half-pixel shift to the right with align_corners=True is the mean of neighbours
    x = rg.tensor([[[[0.0, 2.0, 4.0], [0.0, 2.0, 4.0]]]])
    theta = rg.tensor([[[1.0, 0.0, 0.5], [0.0, 1.0, 0.0]]])
    grid = rg.nn.functional.affine_grid(theta, (1, 1, 2, 3), align_corners=True)
    out = rg.nn.functional.grid_sample(x, grid, padding_mode="border", align_corners=True)
    assert out.tolist() == [[[[1.0, 3.0, 4.0], [1.0, 3.0, 4.0]]]]
