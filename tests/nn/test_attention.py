"""``nn.MultiheadAttention``, ``F.multi_head_attention_forward`` and ``F.scaled_dot_product_attention``
against real PyTorch: torch's weights are loaded into retrograd's module (``state_dict`` round trip)
and outputs, attention weights and every input and parameter gradient are compared in float64 to
1e-6 over the option grid (bias, add_bias_kv, add_zero_attn, kdim/vdim, batch_first), the input
identities (self-attention, key is value, three tensors), batched and unbatched input, boolean
and float masks (2-D and 3-D ``attn_mask``, ``key_padding_mask``, both, ``is_causal``), and
``need_weights`` / ``average_attn_weights``. Then PyTorch's errors and warnings, gradcheck and
gradgradcheck of a tiny layer, and dropout in train mode."""

from __future__ import annotations

import itertools
import warnings
from typing import Any

import numpy as np
import pytest

import retrograd as rg
from conftest import outcome

F = rg.nn.functional


def to_rg(t: Any) -> rg.Tensor:
    return rg.tensor(t.detach().numpy(), requires_grad=t.requires_grad)


def assert_close(ours: Any, theirs: Any, tol: float = 1e-6) -> None:
    a = ours.detach().numpy() if isinstance(ours, rg.Tensor) else np.asarray(ours)
    b = theirs.detach().numpy()
    assert a.shape == b.shape and a.dtype == b.dtype
    np.testing.assert_allclose(a, b, rtol=tol, atol=tol, equal_nan=True)


def copy_module(torch: Any, tm: Any, ours: rg.nn.Module) -> None:
    """torch's state_dict into ours: same keys in the same order, shapes and dtypes."""
    state = tm.state_dict()
    assert list(ours.state_dict()) == list(state)
    ours.load_state_dict({k: rg.tensor(v.numpy()) for k, v in state.items()})
    for (name, p), (tname, tp) in zip(ours.named_parameters(), tm.named_parameters(), strict=True):
        assert name == tname and tuple(p.shape) == tuple(tp.shape) and p.dtype.__repr__() == repr(tp.dtype)


def check_backward(torch: Any, ours: tuple[Any, ...], theirs: tuple[Any, ...], rg_leaves: list[Any],
                   torch_leaves: list[Any]) -> None:
    """Backward of a weighted sum of all outputs; every leaf gradient compared."""
    rg_total: Any = 0
    torch_total: Any = 0
    gen = np.random.default_rng(7)
    for o, t in zip(ours, theirs, strict=True):
        if t is None:
            assert o is None
            continue
        w = gen.standard_normal(tuple(t.shape))
        # NaN rows (fully masked, need_weights) have no gradient to compare: weigh them out.
        w = np.where(np.isnan(t.detach().numpy()), 0.0, w)
        rg_total = rg_total + (rg.nan_to_num(o) * rg.tensor(w)).sum()
        torch_total = torch_total + (torch.nan_to_num(t) * torch.tensor(w)).sum()
    rg_total.backward()
    torch_total.backward()
    for a, b in zip(rg_leaves, torch_leaves, strict=True):
        if b.grad is None:
            assert a.grad is None
        else:
            assert_close(a.grad, b.grad)


def make_pair(torch: Any, e: int = 8, h: int = 2, **kw: Any) -> tuple[Any, rg.nn.MultiheadAttention]:
    tm = torch.nn.MultiheadAttention(e, h, dtype=torch.float64, **kw)
    with torch.no_grad():  # non-zero biases, so that a mixed-up bias shows
        for p in tm.parameters():
            p.add_(torch.randn(p.shape, dtype=torch.float64) * 0.1)
    ours = rg.nn.MultiheadAttention(e, h, dtype=rg.float64, **kw)
    copy_module(torch, tm, ours)
    return tm, ours


def make_mask(torch: Any, kind: str, shape: tuple[int, ...], gen: np.random.Generator) -> Any:
    if kind == "none":
        return None
    masked = gen.random(shape) < 0.3
    masked[..., 0] = False  # every row keeps a position (fully masked rows are tested apart)
    if kind == "bool":
        return torch.tensor(masked)
    return torch.tensor(np.where(masked, -np.inf, gen.standard_normal(shape)))


OPTIONS = [
    {}, {"bias": False}, {"add_bias_kv": True}, {"add_zero_attn": True}, {"kdim": 3, "vdim": 5},
    {"batch_first": True}, {"add_bias_kv": True, "add_zero_attn": True, "kdim": 6, "vdim": 4, "batch_first": True},
]


# With kdim/vdim unlike embed_dim, query, key and value are necessarily three tensors.
GRID = [(o, i) for o in OPTIONS for i in ("self", "kv", "distinct") if "kdim" not in o or i == "distinct"]


@pytest.mark.parametrize(("options", "identity"), GRID, ids=lambda v: ",".join(v) or "default" if isinstance(v, dict)
                         else v)
@pytest.mark.parametrize("batched", [True, False])
def test_mha_parity_option_grid(torch: Any, options: dict[str, Any], identity: str, batched: bool) -> None:
    torch.manual_seed(0)
    tm, ours = make_pair(torch, **options)
    gen = np.random.default_rng(1)
    n, lq, lk = 3, 4, 5
    bf = options.get("batch_first", False)

    def inp(length: int, dim: int) -> Any:
        shape = ((n, length, dim) if bf else (length, n, dim)) if batched else (length, dim)
        return torch.tensor(gen.standard_normal(shape), requires_grad=True)

    kdim, vdim = options.get("kdim", 8), options.get("vdim", 8)
    if identity == "self":
        q = k = v = inp(lq, 8)
        lk = lq
    elif identity == "kv":
        q, k = inp(lq, 8), inp(lk, 8)
        v = k
    else:
        q, k, v = inp(lq, 8), inp(lk, kdim), inp(lk, vdim)
    tensors = {id(t): t for t in (q, k, v)}
    mapped = {i: to_rg(t) for i, t in tensors.items()}
    rq, rk, rv = mapped[id(q)], mapped[id(k)], mapped[id(v)]
    cases = [("none", "none", 2), ("bool", "none", 2), ("float", "none", 2), ("bool", "none", 3),
             ("float", "none", 3), ("none", "bool", 2), ("none", "float", 2), ("bool", "bool", 2),
             ("float", "float", 3)]
    for (attn_kind, pad_kind, rank), need_weights, average in itertools.product(
            cases, [True, False], [True, False]):
        if not need_weights and not average:
            continue
        rows = (n if batched else 1) * 2
        attn = make_mask(torch, attn_kind, (lq, lk) if rank == 2 else (rows, lq, lk), gen)
        padding = make_mask(torch, pad_kind, (n, lk) if batched else (lk,), gen)
        kw = {"need_weights": need_weights, "average_attn_weights": average}
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            theirs = tm(q, k, v, key_padding_mask=padding, attn_mask=attn, **kw)
            mine = ours(rq, rk, rv, key_padding_mask=None if padding is None else to_rg(padding),
                        attn_mask=None if attn is None else to_rg(attn), **kw)
        for o, t in zip(mine, theirs, strict=True):
            if t is None:
                assert o is None
            else:
                assert_close(o, t)
        leaves_rg = list(mapped.values()) + list(ours.parameters())
        leaves_t = list(tensors.values()) + list(tm.parameters())
        check_backward(torch, mine, theirs, leaves_rg, leaves_t)
        for t in leaves_t:
            t.grad = None
        for t in leaves_rg:
            t.grad = None


@pytest.mark.parametrize("need_weights", [True, False])
@pytest.mark.parametrize("with_padding", [True, False])
def test_mha_is_causal_hint(torch: Any, need_weights: bool, with_padding: bool) -> None:
    torch.manual_seed(0)
    tm, ours = make_pair(torch, batch_first=True)
    x = torch.randn(2, 5, 8, dtype=torch.float64, requires_grad=True)
    rx = to_rg(x)
    mask = torch.nn.Transformer.generate_square_subsequent_mask(5, dtype=torch.float64)
    padding = torch.tensor([[0.0] * 5, [0.0, 0.0, 0.0, -np.inf, -np.inf]], dtype=torch.float64) if with_padding \
        else None
    theirs = tm(x, x, x, attn_mask=mask, key_padding_mask=padding, need_weights=need_weights, is_causal=True)
    mine = ours(rx, rx, rx, attn_mask=to_rg(mask), key_padding_mask=None if padding is None else to_rg(padding),
                need_weights=need_weights, is_causal=True)
    assert_close(mine[0], theirs[0])
    check_backward(torch, mine, theirs, [rx, *ours.parameters()], [x, *tm.parameters()])


@pytest.mark.parametrize("need_weights", [True, False])
def test_mha_fully_masked_rows_as_pytorch(torch: Any, need_weights: bool) -> None:
    # need_weights: softmax of a row of -inf is NaN; without: PyTorch's kernel, matched as it is.
    torch.manual_seed(0)
    tm, ours = make_pair(torch)
    x = torch.randn(3, 2, 8, dtype=torch.float64)
    padding = torch.tensor([[True, True, True], [False, True, False]])
    theirs = tm(x, x, x, key_padding_mask=padding, need_weights=need_weights)
    rx = to_rg(x)
    mine = ours(rx, rx, rx, key_padding_mask=to_rg(padding), need_weights=need_weights)
    assert_close(mine[0], theirs[0])
    if need_weights:
        assert_close(mine[1], theirs[1])


@pytest.mark.parametrize("need_weights", [True, False])
def test_mha_eval_no_grad_matches_pytorch_fast_path(torch: Any, need_weights: bool) -> None:
    # batch_first self-attention in eval mode without gradient is PyTorch's fused kernel.
    torch.manual_seed(0)
    tm, ours = make_pair(torch, batch_first=True, dropout=0.2)
    tm.eval()
    ours.eval()
    x = torch.randn(3, 5, 8, dtype=torch.float64)
    padding = torch.tensor([[False] * 5, [False] * 3 + [True] * 2, [False, True] * 2 + [False]])
    for pad in (None, padding):
        with torch.no_grad():
            theirs = tm(x, x, x, key_padding_mask=pad, need_weights=need_weights)
        rx = to_rg(x)
        with rg.no_grad():
            mine = ours(rx, rx, rx, key_padding_mask=None if pad is None else to_rg(pad), need_weights=need_weights)
        assert_close(mine[0], theirs[0])
        if need_weights:
            assert_close(mine[1], theirs[1])


def test_mha_state_dict_names_and_init(torch: Any) -> None:
    for kw in ({}, {"kdim": 3, "vdim": 5, "bias": False}, {"add_bias_kv": True}):
        tm = torch.nn.MultiheadAttention(8, 2, **kw)
        ours = rg.nn.MultiheadAttention(8, 2, **kw)
        assert [(k, tuple(v.shape)) for k, v in ours.state_dict().items()] == \
               [(k, tuple(v.shape)) for k, v in tm.state_dict().items()]
        assert type(ours.out_proj).__name__ == type(tm.out_proj).__name__ == "NonDynamicallyQuantizableLinear"
        assert repr(ours) == repr(tm)
        # Default initialisation: zero biases, xavier-uniform bounds on the projections.
        if ours.in_proj_bias is not None:
            assert not ours.in_proj_bias.detach().numpy().any()
            assert not ours.out_proj.bias.detach().numpy().any()
        if ours.in_proj_weight is not None:
            bound = np.sqrt(6.0 / (8 + 24))
            assert np.abs(ours.in_proj_weight.detach().numpy()).max() <= bound
        for name in ("bias_k", "bias_v"):
            assert (getattr(ours, name) is None) == (getattr(tm, name) is None)


def test_mha_merge_masks(torch: Any) -> None:
    tm = torch.nn.MultiheadAttention(4, 2, batch_first=True)
    ours = rg.nn.MultiheadAttention(4, 2, batch_first=True)
    gen = np.random.default_rng(0)
    attn2, attn3, pad = gen.standard_normal((3, 3)), gen.standard_normal((4, 3, 3)), gen.standard_normal((2, 3))
    q = np.zeros((2, 3, 4))
    for a, p in itertools.product((None, attn2, attn3), (None, pad)):
        ta, tp = (None if x is None else torch.tensor(x) for x in (a, p))
        ra, rp = (None if x is None else rg.tensor(x) for x in (a, p))
        tmask, tkind = tm.merge_masks(ta, tp, torch.tensor(q))
        mask, kind = ours.merge_masks(ra, rp, rg.tensor(q))
        assert kind == tkind
        if tmask is None:
            assert mask is None
        else:
            assert_close(mask, tmask)


def test_mha_errors_as_pytorch(torch: Any) -> None:
    def both(build: Any, call: Any) -> None:
        assert outcome(lambda: call(build(rg), rg)) == outcome(lambda: call(build(torch), torch))

    def mha(lib: Any, **kw: Any) -> Any:
        return lib.nn.MultiheadAttention(8, 2, **kw)

    x3, x2, x4 = (3, 2, 8), (3, 8), (1, 3, 2, 8)
    cases = [
        (lambda lib: lib.nn.MultiheadAttention(0, 2), None),
        (lambda lib: lib.nn.MultiheadAttention(8, 0), None),
        (lambda lib: lib.nn.MultiheadAttention(8, 3), None),
        (mha, lambda m, lib: m(lib.zeros(x4), lib.zeros(x4), lib.zeros(x4))),
        (mha, lambda m, lib: m(lib.zeros(x3), lib.zeros(x2), lib.zeros(x3))),
        (mha, lambda m, lib: m(lib.zeros(x2), lib.zeros(x3), lib.zeros(x2))),
        (mha, lambda m, lib: m(lib.zeros(x3), lib.zeros(x3), lib.zeros(x3), key_padding_mask=lib.zeros(3, dtype=lib.bool))),
        (mha, lambda m, lib: m(lib.zeros(x2), lib.zeros(x2), lib.zeros(x2), key_padding_mask=lib.zeros(2, 3, dtype=lib.bool))),
        (mha, lambda m, lib: m(lib.zeros(x3), lib.zeros(x3), lib.zeros(x3), attn_mask=lib.zeros(3))),
        (mha, lambda m, lib: m(lib.zeros(x2), lib.zeros(x2), lib.zeros(x2), attn_mask=lib.zeros(1, 2, 3, 3))),
        (mha, lambda m, lib: m(lib.zeros(x2), lib.zeros(x2), lib.zeros(x2), attn_mask=lib.zeros(4, 3, 3))),
        (mha, lambda m, lib: m(lib.zeros(x3), lib.zeros(x3), lib.zeros(x3), attn_mask=lib.zeros(3, 4))),
        (mha, lambda m, lib: m(lib.zeros(x3), lib.zeros(x3), lib.zeros(x3), attn_mask=lib.zeros(5, 3, 3))),
        (mha, lambda m, lib: m(lib.zeros(x3), lib.zeros(x3), lib.zeros(x3), attn_mask=lib.zeros(3, 3, dtype=lib.int64))),
        (mha, lambda m, lib: m(lib.zeros(x3), lib.zeros(x3), lib.zeros(x3),
                               key_padding_mask=lib.zeros(2, 3, dtype=lib.int32))),
        (mha, lambda m, lib: m(lib.zeros(x3), lib.zeros(x3), lib.zeros(x3), key_padding_mask=lib.zeros(2, 4))),
        (mha, lambda m, lib: m(lib.zeros(x3), lib.zeros(x3), lib.zeros(x3), key_padding_mask=lib.zeros(3, 3))),
        (mha, lambda m, lib: m(lib.zeros(x3), lib.zeros(x3), lib.zeros(x3), is_causal=True)),
        (mha, lambda m, lib: m(lib.zeros(3, 2, 6), lib.zeros(3, 2, 6), lib.zeros(3, 2, 6))),
        (mha, lambda m, lib: m(lib.zeros(x3), lib.zeros(4, 2, 8), lib.zeros(x3))),
        (lambda lib: mha(lib, kdim=4, vdim=4), lambda m, lib: m(lib.zeros(x3), lib.zeros(3, 2, 4),
                                                                 lib.zeros(4, 2, 4))),
        (lambda lib: mha(lib, kdim=4, vdim=4), lambda m, lib: m(lib.zeros(x3), lib.zeros(3, 2, 5),
                                                                 lib.zeros(3, 2, 4))),
    ]
    for build, call in cases:
        both(build, (lambda m, lib: None) if call is None else call)


def test_functional_mha_direct_and_static_kv(torch: Any) -> None:
    """The functional form itself: separate projection weights, static_k/static_v, its errors."""
    gen = np.random.default_rng(3)
    e, h, n, lq, s = 8, 2, 2, 3, 4

    def arr(*shape: int) -> np.ndarray:
        return gen.standard_normal(shape)

    base = {"query": arr(lq, n, e), "key": arr(s, n, e), "value": arr(s, n, e), "in_proj_weight": arr(3 * e, e),
            "in_proj_bias": arr(3 * e), "out_proj_weight": arr(e, e), "out_proj_bias": arr(e),
            "static_k": arr(n * h, s + 1, e // h), "static_v": arr(n * h, s + 1, e // h),
            "q_proj_weight": arr(e, e), "k_proj_weight": arr(e, e), "v_proj_weight": arr(e, e)}
    for static, separate in itertools.product([False, True], [False, True]):
        t = {k: torch.tensor(v, requires_grad=True) for k, v in base.items()}
        r = {k: to_rg(v) for k, v in t.items()}

        def call(lib: Any, d: dict[str, Any]) -> Any:
            return lib.nn.functional.multi_head_attention_forward(
                d["query"], d["key"], d["value"], e, h, d["in_proj_weight"], d["in_proj_bias"], None, None, False,
                0.0, d["out_proj_weight"], d["out_proj_bias"], training=True, need_weights=True,
                use_separate_proj_weight=separate, q_proj_weight=d["q_proj_weight"],
                k_proj_weight=d["k_proj_weight"], v_proj_weight=d["v_proj_weight"],
                static_k=d["static_k"] if static else None, static_v=d["static_v"] if static else None,
                average_attn_weights=False)

        theirs, mine = call(torch, t), call(rg, r)
        for o, tt in zip(mine, theirs, strict=True):
            assert_close(o, tt)
        check_backward(torch, mine, theirs, list(r.values()), list(t.values()))
    # errors of the functional form: missing weights, wrong static_k/static_v, half of bias_k/bias_v
    cases = [
        {"w": False},
        {"separate": True},
        {"static_k": (n * h + 1, s, e // h)},
        {"static_v": (n * h, s, e // h + 1)},
        {"bias_k": True},
    ]
    for case in cases:
        results = []
        for lib in (torch, rg):
            d = {k: lib.tensor(v) for k, v in base.items()}
            kw: dict[str, Any] = {"training": False, "use_separate_proj_weight": case.get("separate", False)}
            for name in ("static_k", "static_v"):
                if name in case:
                    kw[name] = lib.zeros(*case[name], dtype=lib.float64)
            bias_k = lib.zeros(1, 1, e, dtype=lib.float64) if case.get("bias_k") else None
            w = None if case.get("w") is False else d["in_proj_weight"]
            results.append(outcome(lambda lib=lib, d=d, kw=kw, bias_k=bias_k, w=w:
                                   lib.nn.functional.multi_head_attention_forward(
                                       d["query"], d["key"], d["value"], e, h, w, d["in_proj_bias"], bias_k, None,
                                       False, 0.0, d["out_proj_weight"], d["out_proj_bias"], **kw)))
        assert results[0] == results[1] != ("ok", ""), case


def test_mask_type_mismatch_warns_as_pytorch(torch: Any) -> None:
    # PyTorch warns in the module and again in the functional form when the masks still differ there.
    seen = []
    for lib in (torch, rg):
        caught_all = []
        for dtype, need_weights in itertools.product((lib.float32, lib.float64), (True, False)):
            m = lib.nn.MultiheadAttention(8, 2, dtype=dtype)
            x = lib.zeros(3, 2, 8, dtype=dtype)
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                m(x, x, x, key_padding_mask=lib.zeros(2, 3, dtype=lib.bool), attn_mask=lib.zeros(3, 3),
                  need_weights=need_weights)
            caught_all.append([str(w.message) for w in caught])
        seen.append(caught_all)
    assert seen[0] == seen[1]
    assert seen[0][0] == ["Support for mismatched key_padding_mask and attn_mask is deprecated. Use same type for "
                          "both instead."]


def test_mha_gradcheck_and_gradgradcheck() -> None:
    gen = np.random.default_rng(0)
    m = rg.nn.MultiheadAttention(4, 2, add_bias_kv=True, dtype=rg.float64)
    params = list(m.parameters())
    q = rg.tensor(gen.standard_normal((3, 2, 4)), requires_grad=True)
    k = rg.tensor(gen.standard_normal((2, 2, 4)), requires_grad=True)
    mask = rg.tensor([[False, True], [False, False], [True, False]])

    def fn(q: rg.Tensor, k: rg.Tensor, *ps: rg.Tensor) -> tuple[rg.Tensor, rg.Tensor]:
        state = dict(zip([n for n, _ in m.named_parameters()], ps, strict=True))
        out, w = F.multi_head_attention_forward(
            q, k, k, 4, 2, state["in_proj_weight"], state["in_proj_bias"], state["bias_k"], state["bias_v"], True,
            0.0, state["out_proj.weight"], state["out_proj.bias"], attn_mask=mask)
        assert w is not None
        return out, w

    inputs = (q, k, *[p.detach().requires_grad_() for p in params])
    assert rg.autograd.gradcheck(fn, inputs)
    assert rg.autograd.gradgradcheck(fn, inputs)


def test_mha_dropout_in_train_mode() -> None:
    m = rg.nn.MultiheadAttention(8, 2, dropout=0.5, dtype=rg.float64)
    x = rg.randn(6, 3, 8, dtype=rg.float64)
    m.eval()
    out_eval, w_eval = m(x, x, x, average_attn_weights=False)
    out_eval2, _ = m(x, x, x)
    assert np.array_equal(out_eval.detach().numpy(), out_eval2.detach().numpy())  # eval: no dropout
    m.train()
    rg.manual_seed(5)
    out_a, w_a = m(x, x, x, average_attn_weights=False)
    rg.manual_seed(5)
    out_b, w_b = m(x, x, x, average_attn_weights=False)
    assert np.array_equal(out_a.detach().numpy(), out_b.detach().numpy())  # seeded: reproducible
    assert not np.allclose(out_a.detach().numpy(), out_eval.detach().numpy())
    # Each returned weight is dropped (0) or kept and scaled by 1 / (1 - p), as PyTorch's.
    wa, we = w_a.detach().numpy(), w_eval.detach().numpy()
    kept = wa != 0
    np.testing.assert_allclose(wa[kept], we[kept] * 2.0, rtol=1e-12)
    assert 0.3 < kept.mean() < 0.7
    # Without need_weights the dropout goes through scaled_dot_product_attention: still random, still seeded.
    rg.manual_seed(9)
    o1, _ = m(x, x, x, need_weights=False)
    rg.manual_seed(9)
    o2, _ = m(x, x, x, need_weights=False)
    assert np.array_equal(o1.detach().numpy(), o2.detach().numpy())
    assert not np.allclose(o1.detach().numpy(), out_eval.detach().numpy())


# -- scaled_dot_product_attention ----------------------------------------------------------------


@pytest.mark.parametrize("mask_kind", ["none", "bool", "float", "causal", "bool_broadcast"])
@pytest.mark.parametrize("scale", [None, 0.3])
@pytest.mark.parametrize("gqa", [False, True])
def test_sdpa_parity(torch: Any, mask_kind: str, scale: float | None, gqa: bool) -> None:
    gen = np.random.default_rng(0)
    hq, hk = (4, 2) if gqa else (2, 2)
    q = torch.tensor(gen.standard_normal((2, hq, 5, 3)), requires_grad=True)
    k = torch.tensor(gen.standard_normal((2, hk, 6, 3)), requires_grad=True)
    v = torch.tensor(gen.standard_normal((2, hk, 6, 4)), requires_grad=True)
    mask: Any = None
    if mask_kind == "bool":
        keep = gen.random((2, hq, 5, 6)) < 0.7
        keep[..., 0] = True
        mask = torch.tensor(keep)
    elif mask_kind == "bool_broadcast":
        keep = gen.random((5, 6)) < 0.7
        keep[:, 0] = True
        mask = torch.tensor(keep)
    elif mask_kind == "float":
        mask = torch.tensor(gen.standard_normal((5, 6)))
    kw = {"attn_mask": mask, "is_causal": mask_kind == "causal", "scale": scale, "enable_gqa": gqa}
    theirs = torch.nn.functional.scaled_dot_product_attention(q, k, v, **kw)
    rq, rk, rv = to_rg(q), to_rg(k), to_rg(v)
    mine = F.scaled_dot_product_attention(rq, rk, rv, **{**kw, "attn_mask": None if mask is None else to_rg(mask)})
    assert_close(mine, theirs)
    check_backward(torch, (mine,), (theirs,), [rq, rk, rv], [q, k, v])


def test_sdpa_fully_masked_row_and_errors(torch: Any) -> None:
    gen = np.random.default_rng(1)
    q, k, v = (gen.standard_normal((1, 3, 4)) for _ in range(3))
    keep = np.ones((3, 3), dtype=bool)
    keep[1] = False
    theirs = torch.nn.functional.scaled_dot_product_attention(*(torch.tensor(a) for a in (q, k, v)),
                                                              attn_mask=torch.tensor(keep))
    mine = F.scaled_dot_product_attention(*(rg.tensor(a) for a in (q, k, v)), attn_mask=rg.tensor(keep))
    assert_close(mine, theirs)
    for lib in (torch, rg):
        t = lib.zeros(1, 3, 4)
        assert outcome(lambda lib=lib, t=t: lib.nn.functional.scaled_dot_product_attention(
            t, t, t, attn_mask=lib.zeros(3, 3), is_causal=True))[0] == "RuntimeError"


def test_sdpa_dropout_seeded() -> None:
    q = rg.randn(2, 2, 8, 4, dtype=rg.float64)
    rg.manual_seed(3)
    a = F.scaled_dot_product_attention(q, q, q, dropout_p=0.5)
    rg.manual_seed(3)
    b = F.scaled_dot_product_attention(q, q, q, dropout_p=0.5)
    c = F.scaled_dot_product_attention(q, q, q)
    assert np.array_equal(a.numpy(), b.numpy())
    assert not np.allclose(a.numpy(), c.numpy())


def test_grad_fn_names_as_pytorch(torch: Any) -> None:
    def names(lib: Any) -> list[Any]:
        lib.manual_seed(0)
        out: list[Any] = []
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            for batch_first, batched, need_weights, average in itertools.product(*[(False, True)] * 4):
                m = lib.nn.MultiheadAttention(8, 2, batch_first=batch_first)
                x = lib.randn(3, 2, 8) if batched else lib.randn(3, 8)
                o, w = m(x, x, x, need_weights=need_weights, average_attn_weights=average)
                out.append((type(o.grad_fn).__name__, None if w is None else type(w.grad_fn).__name__))
            for norm_first in (False, True):
                enc = lib.nn.TransformerEncoderLayer(8, 2, 16, batch_first=True, norm_first=norm_first)
                dec = lib.nn.TransformerDecoderLayer(8, 2, 16, norm_first=norm_first)
                out.append(type(enc(lib.randn(2, 3, 8)).grad_fn).__name__)
                out.append(type(dec(lib.randn(3, 2, 8), lib.randn(4, 2, 8)).grad_fn).__name__)
        return out

    assert names(rg) == names(torch)
