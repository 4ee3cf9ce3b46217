"""``nn.TransformerEncoderLayer``/``DecoderLayer``, ``TransformerEncoder``/``Decoder`` and
``Transformer`` against real PyTorch: torch's weights are loaded into retrograd's modules
(``state_dict`` round trip) and outputs and every input and parameter gradient are compared in
float64 to 1e-6 over batch_first, norm_first, bias, activations (string, function, module,
callable), masks (bool and float, key padding, causal hints) and unbatched input; eval mode
(PyTorch's fast and nested-tensor paths) gives PyTorch's results; then constructor and shape
errors, the nested-tensor warning, the causal mask and dropout in train mode."""

from __future__ import annotations

import itertools
import warnings
from typing import Any

import numpy as np
import pytest

import retrograd as rg
from conftest import outcome

pytestmark = [pytest.mark.filterwarnings("ignore:Support for mismatched"),
              pytest.mark.filterwarnings("ignore:The PyTorch API of nested tensors")]


def to_rg(t: Any) -> rg.Tensor:
    return rg.tensor(t.detach().numpy(), requires_grad=t.requires_grad)


def assert_close(ours: Any, theirs: Any, tol: float = 1e-6) -> None:
    a, b = ours.detach().numpy(), theirs.detach().numpy()
    assert a.shape == b.shape and a.dtype == b.dtype
    np.testing.assert_allclose(a, b, rtol=tol, atol=tol)


def copy_module(tm: Any, ours: rg.nn.Module) -> None:
    state = tm.state_dict()
    assert list(ours.state_dict()) == list(state)
    ours.load_state_dict({k: rg.tensor(v.numpy()) for k, v in state.items()})


def perturb(torch: Any, tm: Any) -> None:
    # Non-trivial biases and norm affine maps, so that a mixed-up parameter shows.
    with torch.no_grad():
        for p in tm.parameters():
            p.add_(torch.randn(p.shape, dtype=p.dtype) * 0.1)


def compare(torch: Any, tm: Any, ours: rg.nn.Module, t_inputs: list[Any], r_inputs: list[Any],
            kwargs_t: dict[str, Any], kwargs_r: dict[str, Any]) -> None:
    theirs = tm(*t_inputs, **kwargs_t)
    mine = ours(*r_inputs, **kwargs_r)
    assert_close(mine, theirs)
    w = np.random.default_rng(5).standard_normal(tuple(theirs.shape))
    (theirs * torch.tensor(w)).sum().backward()
    (mine * rg.tensor(w)).sum().backward()
    for a, b in zip([*r_inputs, *ours.parameters()], [*t_inputs, *tm.parameters()], strict=True):
        if b.grad is None:
            assert a.grad is None
        else:
            assert_close(a.grad, b.grad)


def mask_pair(torch: Any, kind: str, shape: tuple[int, ...], gen: np.random.Generator) -> tuple[Any, Any]:
    if kind == "none":
        return None, None
    masked = gen.random(shape) < 0.3
    masked[..., 0] = False
    t = torch.tensor(masked) if kind == "bool" else torch.tensor(np.where(masked, -np.inf, 0.0))
    return t, rg.tensor(t.numpy())


ACTIVATIONS = ["relu", "gelu", "fn_gelu", "module_relu", "lambda"]


def activation(lib: Any, name: str) -> Any:
    return {"relu": "relu", "gelu": "gelu", "fn_gelu": lib.nn.functional.gelu, "module_relu": lib.nn.ReLU(),
            "lambda": lambda x: lib.tanh(x) * 2}[name]


def seq_input(torch: Any, gen: np.random.Generator, batch_first: bool, batched: bool, length: int,
              n: int = 2, d: int = 8) -> tuple[Any, Any]:
    shape = ((n, length, d) if batch_first else (length, n, d)) if batched else (length, d)
    t = torch.tensor(gen.standard_normal(shape), requires_grad=True)
    return t, to_rg(t)


@pytest.mark.parametrize("batch_first", [False, True])
@pytest.mark.parametrize("norm_first", [False, True])
@pytest.mark.parametrize("act", ACTIVATIONS)
def test_encoder_layer_parity(torch: Any, batch_first: bool, norm_first: bool, act: str) -> None:
    torch.manual_seed(0)
    gen = np.random.default_rng(0)
    kw = {"dim_feedforward": 16, "dropout": 0.0, "batch_first": batch_first, "norm_first": norm_first}
    tm = torch.nn.TransformerEncoderLayer(8, 2, activation=activation(torch, act), dtype=torch.float64, **kw)
    ours = rg.nn.TransformerEncoderLayer(8, 2, activation=activation(rg, act), dtype=rg.float64, **kw)
    perturb(torch, tm)
    copy_module(tm, ours)
    assert ours.activation_relu_or_gelu == tm.activation_relu_or_gelu
    for batched, (mask_kind, pad_kind), causal in itertools.product(
            [True, False], [("none", "none"), ("bool", "none"), ("float", "none"), ("none", "bool"),
                            ("bool", "bool"), ("float", "float")], [False, True]):
        if causal and mask_kind == "none":
            continue
        x, rx = seq_input(torch, gen, batch_first, batched, 5)
        if causal:
            tmask = torch.nn.Transformer.generate_square_subsequent_mask(5, dtype=torch.float64)
            rmask = rg.tensor(tmask.numpy())
        else:
            tmask, rmask = mask_pair(torch, mask_kind, (5, 5), gen)
        tpad, rpad = mask_pair(torch, pad_kind, (2, 5) if batched else (5,), gen)
        compare(torch, tm, ours, [x], [rx], {"src_mask": tmask, "src_key_padding_mask": tpad, "is_causal": causal},
                {"src_mask": rmask, "src_key_padding_mask": rpad, "is_causal": causal})
        tm.zero_grad()
        ours.zero_grad()


@pytest.mark.parametrize("batch_first", [False, True])
@pytest.mark.parametrize("norm_first", [False, True])
@pytest.mark.parametrize("bias", [True, False])
def test_decoder_layer_parity(torch: Any, batch_first: bool, norm_first: bool, bias: bool) -> None:
    torch.manual_seed(0)
    gen = np.random.default_rng(1)
    kw = {"dim_feedforward": 16, "dropout": 0.0, "batch_first": batch_first, "norm_first": norm_first, "bias": bias}
    tm = torch.nn.TransformerDecoderLayer(8, 2, dtype=torch.float64, **kw)
    ours = rg.nn.TransformerDecoderLayer(8, 2, dtype=rg.float64, **kw)
    perturb(torch, tm)
    copy_module(tm, ours)
    for batched, kinds in itertools.product([True, False], ["none", "bool", "float"]):
        tgt, rtgt = seq_input(torch, gen, batch_first, batched, 4)
        mem, rmem = seq_input(torch, gen, batch_first, batched, 6)
        tmask, rmask = mask_pair(torch, kinds, (4, 4), gen)
        mmask, rmmask = mask_pair(torch, kinds, (4, 6), gen)
        tpad, rpad = mask_pair(torch, kinds, (2, 4) if batched else (4,), gen)
        mpad, rmpad = mask_pair(torch, kinds, (2, 6) if batched else (6,), gen)
        names = ("tgt_mask", "memory_mask", "tgt_key_padding_mask", "memory_key_padding_mask")
        compare(torch, tm, ours, [tgt, mem], [rtgt, rmem], dict(zip(names, (tmask, mmask, tpad, mpad), strict=True)),
                dict(zip(names, (rmask, rmmask, rpad, rmpad), strict=True)))
        tm.zero_grad()
        ours.zero_grad()
    # the causal hint on the decoder's self-attention
    tgt, rtgt = seq_input(torch, gen, batch_first, True, 4)
    mem, rmem = seq_input(torch, gen, batch_first, True, 6)
    causal = torch.nn.Transformer.generate_square_subsequent_mask(4, dtype=torch.float64)
    compare(torch, tm, ours, [tgt, mem], [rtgt, rmem], {"tgt_mask": causal, "tgt_is_causal": True},
            {"tgt_mask": rg.tensor(causal.numpy()), "tgt_is_causal": True})


@pytest.mark.parametrize("batch_first", [False, True])
@pytest.mark.parametrize("norm_first", [False, True])
def test_transformer_parity(torch: Any, batch_first: bool, norm_first: bool) -> None:
    torch.manual_seed(0)
    gen = np.random.default_rng(2)
    kw = {"d_model": 8, "nhead": 2, "num_encoder_layers": 2, "num_decoder_layers": 2, "dim_feedforward": 16,
          "dropout": 0.0, "batch_first": batch_first, "norm_first": norm_first, "activation": "gelu"}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the nested-tensor notice (tested below)
        tm = torch.nn.Transformer(dtype=torch.float64, **kw)
        ours = rg.nn.Transformer(dtype=rg.float64, **kw)
    perturb(torch, tm)
    copy_module(tm, ours)
    src, rsrc = seq_input(torch, gen, batch_first, True, 6)
    tgt, rtgt = seq_input(torch, gen, batch_first, True, 4)
    causal = torch.nn.Transformer.generate_square_subsequent_mask(4, dtype=torch.float64)
    spad, rspad = mask_pair(torch, "bool", (2, 6), gen)
    tpad, rtpad = mask_pair(torch, "bool", (2, 4), gen)
    names = ("tgt_mask", "src_key_padding_mask", "tgt_key_padding_mask", "memory_key_padding_mask")
    compare(torch, tm, ours, [src, tgt], [rsrc, rtgt], dict(zip(names, (causal, spad, tpad, spad), strict=True)),
            dict(zip(names, (rg.tensor(causal.numpy()), rspad, rtpad, rspad), strict=True)))
    # unbatched, no masks
    tm.zero_grad()
    ours.zero_grad()
    src, rsrc = seq_input(torch, gen, batch_first, False, 6)
    tgt, rtgt = seq_input(torch, gen, batch_first, False, 4)
    compare(torch, tm, ours, [src, tgt], [rsrc, rtgt], {}, {})


def test_encoder_and_decoder_stacks_with_norm(torch: Any) -> None:
    torch.manual_seed(0)
    gen = np.random.default_rng(3)
    t_enc = torch.nn.TransformerEncoder(torch.nn.TransformerEncoderLayer(8, 2, 16, 0.0, dtype=torch.float64), 3,
                                        norm=torch.nn.LayerNorm(8, dtype=torch.float64), enable_nested_tensor=False)
    r_enc = rg.nn.TransformerEncoder(rg.nn.TransformerEncoderLayer(8, 2, 16, 0.0, dtype=rg.float64), 3,
                                     norm=rg.nn.LayerNorm(8, dtype=rg.float64), enable_nested_tensor=False)
    t_dec = torch.nn.TransformerDecoder(torch.nn.TransformerDecoderLayer(8, 2, 16, 0.0, dtype=torch.float64), 2,
                                        norm=torch.nn.LayerNorm(8, dtype=torch.float64))
    r_dec = rg.nn.TransformerDecoder(rg.nn.TransformerDecoderLayer(8, 2, 16, 0.0, dtype=rg.float64), 2,
                                     norm=rg.nn.LayerNorm(8, dtype=rg.float64))
    for tm, ours in ((t_enc, r_enc), (t_dec, r_dec)):
        perturb(torch, tm)  # the clones start equal: make the layers differ
        copy_module(tm, ours)
        assert len(ours.layers) == len(tm.layers)
        assert ours.layers[0].linear1.weight is not ours.layers[1].linear1.weight
    x, rx = seq_input(torch, gen, False, True, 5)
    causal = torch.nn.Transformer.generate_square_subsequent_mask(5, dtype=torch.float64)
    rcausal = rg.tensor(causal.numpy())
    # a causal mask without the hint is detected (is_causal=None), and a non-causal one is not
    for tmask, rmask in ((causal, rcausal), (None, None), (causal.T.contiguous(), rg.tensor(causal.T.numpy()))):
        compare(torch, t_enc, r_enc, [x], [rx], {"mask": tmask}, {"mask": rmask})
        t_enc.zero_grad()
        r_enc.zero_grad()
    mem, rmem = seq_input(torch, gen, False, True, 7)
    compare(torch, t_dec, r_dec, [x, mem], [rx, rmem], {"tgt_mask": causal}, {"tgt_mask": rcausal})
    from torch.nn.modules.transformer import _detect_is_causal_mask as t_detect

    from retrograd.nn.modules.transformer import _detect_is_causal_mask
    for m in (causal, causal.T.contiguous(), causal[:4, :4], causal.unsqueeze(0)):
        for hint, size in itertools.product((None, True, False), (None, 5)):
            assert _detect_is_causal_mask(rg.tensor(m.numpy()), hint, size) == t_detect(m, hint, size)


@pytest.mark.parametrize("batch_first", [True, False])
def test_eval_mode_matches_pytorch_fast_paths(torch: Any, batch_first: bool) -> None:
    """In eval mode without gradient PyTorch runs fused kernels and, in TransformerEncoder with a
    key padding mask, nested tensors (padded positions come out 0): same results here."""
    torch.manual_seed(0)
    gen = np.random.default_rng(4)
    kw = {"dim_feedforward": 16, "dropout": 0.1, "batch_first": batch_first}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        tm = torch.nn.TransformerEncoder(torch.nn.TransformerEncoderLayer(8, 2, dtype=torch.float64, **kw), 2,
                                         norm=torch.nn.LayerNorm(8, dtype=torch.float64))
        ours = rg.nn.TransformerEncoder(rg.nn.TransformerEncoderLayer(8, 2, dtype=rg.float64, **kw), 2,
                                        norm=rg.nn.LayerNorm(8, dtype=rg.float64))
    assert ours.use_nested_tensor == tm.use_nested_tensor == batch_first
    perturb(torch, tm)
    copy_module(tm, ours)
    tm.eval()
    ours.eval()
    shape = (3, 6, 8) if batch_first else (6, 3, 8)
    x = gen.standard_normal(shape)
    left_aligned = np.array([[False] * 6, [False] * 4 + [True] * 2, [False] * 2 + [True] * 4])
    # (not padding position 0: with the causal mask that would mask a whole row, where PyTorch's fused
    # kernel gives NaN and its reference path 0; retrograd gives 0)
    not_aligned = np.array([[False] * 6, [False, True] + [False] * 4, [False] * 6])
    for pad, mask in itertools.product((None, left_aligned, not_aligned), (None, "causal")):
        tmask = None if mask is None else torch.nn.Transformer.generate_square_subsequent_mask(6, dtype=torch.float64)
        targs = {"src_key_padding_mask": None if pad is None else torch.tensor(pad), "mask": tmask}
        rargs = {k: None if v is None else rg.tensor(v.numpy()) for k, v in targs.items()}
        with torch.no_grad():
            theirs = tm(torch.tensor(x), **targs)
        with rg.no_grad():
            mine = ours(rg.tensor(x), **rargs)
        assert_close(mine, theirs)
        # a single layer (PyTorch's fused layer kernel)
        with torch.no_grad():
            theirs = tm.layers[0](torch.tensor(x), src_key_padding_mask=targs["src_key_padding_mask"])
        with rg.no_grad():
            mine = ours.layers[0](rg.tensor(x), src_key_padding_mask=rargs["src_key_padding_mask"])
        assert_close(mine, theirs)


def test_generate_square_subsequent_mask(torch: Any) -> None:
    for size, dtype in itertools.product((1, 4), (None, "float64")):
        theirs = torch.nn.Transformer.generate_square_subsequent_mask(
            size, dtype=None if dtype is None else getattr(torch, dtype))
        mine = rg.nn.Transformer.generate_square_subsequent_mask(size, dtype=None if dtype is None else
                                                                 getattr(rg, dtype))
        assert str(mine.dtype) == str(theirs.dtype)
        np.testing.assert_array_equal(mine.numpy(), theirs.numpy())


def test_state_dict_layout_and_repr(torch: Any) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        pairs = [(torch.nn.Transformer(16, 2, 1, 1, 32), rg.nn.Transformer(16, 2, 1, 1, 32)),
                 (torch.nn.TransformerEncoderLayer(8, 2, bias=False), rg.nn.TransformerEncoderLayer(8, 2, bias=False))]
    for tm, ours in pairs:
        assert [(k, tuple(v.shape)) for k, v in ours.state_dict().items()] == \
               [(k, tuple(v.shape)) for k, v in tm.state_dict().items()]
        assert repr(ours) == repr(tm)
    # Transformer starts every matrix xavier-uniform: within sqrt(6 / (fan_in + fan_out))
    model = pairs[0][1]
    for name, p in model.named_parameters():
        if p.dim() > 1:
            bound = np.sqrt(6.0 / (p.shape[0] + p.shape[1]))
            assert np.abs(p.detach().numpy()).max() <= bound, name


def test_errors_and_warnings_as_pytorch(torch: Any) -> None:
    def both(fn: Any) -> None:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            assert outcome(lambda: fn(rg)) == outcome(lambda: fn(torch))

    both(lambda lib: lib.nn.TransformerEncoderLayer(8, 2, activation="tanh"))
    both(lambda lib: lib.nn.TransformerDecoderLayer(8, 2, activation="swish"))
    both(lambda lib: lib.nn.TransformerEncoderLayer(8, 3))
    both(lambda lib: lib.nn.Transformer(8, 2, 1, 1, 16)(lib.zeros(5, 2, 8), lib.zeros(4, 3, 8)))
    both(lambda lib: lib.nn.Transformer(8, 2, 1, 1, 16, batch_first=True)(lib.zeros(2, 5, 8), lib.zeros(3, 4, 8)))
    both(lambda lib: lib.nn.Transformer(8, 2, 1, 1, 16)(lib.zeros(5, 2, 8), lib.zeros(4, 2, 6)))
    both(lambda lib: lib.nn.TransformerEncoderLayer(8, 2)(lib.zeros(5, 2, 8), is_causal=True))
    both(lambda lib: lib.nn.TransformerEncoderLayer(8, 2)(lib.zeros(5, 2, 8), src_mask=lib.zeros(5, 5,
                                                                                                  dtype=lib.int64)))
    both(lambda lib: lib.nn.TransformerEncoderLayer(8, 2)(lib.zeros(5, 2, 8), src_mask=lib.zeros(4, 5)))
    # enable_nested_tensor: PyTorch's notice when the layer rules the nested path out
    for layer_kw, nested in (({}, True), ({"batch_first": True}, True), ({"batch_first": True, "norm_first": True},
                                                                          True), ({}, False)):
        seen = []
        for lib in (torch, rg):
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                enc = lib.nn.TransformerEncoder(lib.nn.TransformerEncoderLayer(8, 2, **layer_kw), 1,
                                                enable_nested_tensor=nested)
            seen.append(([str(w.message) for w in caught], enc.use_nested_tensor))
        assert seen[0] == seen[1]


def test_train_mode_dropout_is_seeded_and_active() -> None:
    layer = rg.nn.TransformerEncoderLayer(8, 2, dim_feedforward=16, dropout=0.3, dtype=rg.float64)
    x = rg.randn(5, 2, 8, dtype=rg.float64)
    rg.manual_seed(11)
    a = layer(x)
    rg.manual_seed(11)
    b = layer(x)
    layer.eval()
    c = layer(x)
    d = layer(x)
    assert np.array_equal(a.detach().numpy(), b.detach().numpy())
    assert not np.allclose(a.detach().numpy(), c.detach().numpy())
    assert np.array_equal(c.detach().numpy(), d.detach().numpy())
    layer.train()
    assert all(m.training for m in layer.modules())
    # the eval result is the dropout-free computation: the same layer built with dropout=0
    plain = rg.nn.TransformerEncoderLayer(8, 2, dim_feedforward=16, dropout=0.0, dtype=rg.float64)
    plain.load_state_dict(layer.state_dict())
    np.testing.assert_allclose(plain(x).detach().numpy(), c.detach().numpy(), rtol=0, atol=1e-12)
