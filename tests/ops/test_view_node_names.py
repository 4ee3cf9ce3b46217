"""The nodes ``reshape`` and its forms record, as PyTorch's: a contiguous input gives a view
(``ViewBackward0``), a non-contiguous one that a view can still reach gives ``_reshape_alias``
(``ReshapeAliasBackward0``, a view too, keeping only the input's sizes), and one that must be
copied gives ``clone`` then ``_unsafe_view`` (``UnsafeViewBackward0``, not a view). Compared with
real PyTorch on ``reshape``, ``flatten``, ``view_as`` and ``reshape_as``, with gradients, a
second-order graph, ``vmap`` and forward AD."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import retrograd as rg

# Inputs, from a (4, 6) leaf: contiguous, non-contiguous but viewable in the target shapes below
# (a column slice: each row's elements stay adjacent), and transposed (every target copies).
_INPUTS: dict[str, Callable[[Any], Any]] = {
    "contiguous": lambda x: x * 1,
    "sliced": lambda x: (x * 1)[:, :4],
    "transposed": lambda x: (x * 1).t(),
}

_FORMS: dict[str, Callable[[Any, Any], Any]] = {
    "reshape": lambda lib, a: a.reshape(a.shape[0], -1, 2),
    "reshape_flat": lambda lib, a: a.reshape(-1),
    "flatten": lambda lib, a: a.flatten(),
    "flatten_leading": lambda lib, a: a.unsqueeze(0).flatten(0, 1),
    "view_as": lambda lib, a: a.view_as(lib.empty(tuple(a.shape))),
    "reshape_as": lambda lib, a: a.reshape_as(lib.empty(a.shape[0], 2, a.shape[1] // 2)),
}


def _node_name(fn: Any) -> str:
    return fn.name().removeprefix("torch::autograd::")


def _record(lib: Any, make: Callable[[Any], Any], form: Callable[[Any, Any], Any]) -> tuple[Any, ...]:
    x = lib.tensor(np.arange(24.0).reshape(4, 6), dtype=lib.float64, requires_grad=True)
    out = form(lib, make(x))
    fn = out.grad_fn
    saved = sorted(name for name in dir(fn) if name.startswith("_saved_"))
    sizes = tuple(fn._saved_self_sym_sizes) if "_saved_self_sym_sizes" in saved else None
    is_view = out._base is not None
    weights = lib.tensor(np.linspace(-1.0, 2.0, out.numel()).reshape(tuple(out.shape)), dtype=lib.float64)
    (grad,) = lib.autograd.grad((out * weights).sum(), x)
    return _node_name(fn), _node_name(fn.next_functions[0][0]), saved, sizes, is_view, tuple(out.shape), \
        grad.detach().numpy().tolist()


@pytest.mark.parametrize("form", sorted(_FORMS))
@pytest.mark.parametrize("layout", sorted(_INPUTS))
def test_reshape_forms_record_pytorchs_nodes(torch: Any, layout: str, form: str) -> None:
    ours = _record(rg, _INPUTS[layout], _FORMS[form])
    theirs = _record(torch, _INPUTS[layout], _FORMS[form])
    assert ours == theirs


def test_non_contiguous_viewable_reshape_is_reshape_alias_in_no_grad_too(torch: Any) -> None:
    for lib in (rg, torch):
        x = lib.arange(24.0).reshape(4, 6)[:, :4]
        with lib.no_grad():
            y = x.reshape(4, 2, 2)
        assert y._base is x._base
        x[0, 1] = 100.0  # a view: the write shows through, and bumps the shared version
        assert y[0, 0, 1].item() == 100.0 and y._version == x._version


def test_reshape_alias_gradgradcheck_vmap_and_forward_ad(torch: Any) -> None:
    def f(t: Any) -> Any:
        return (t[:, :4].reshape(4, 2, 2) ** 2).sum(-1)

    x = rg.tensor(np.random.default_rng(0).normal(size=(4, 6)), requires_grad=True)
    assert rg.autograd.gradcheck(f, (x,))
    assert rg.autograd.gradgradcheck(f, (x,))
    ours = rg.func.vmap(f)(rg.stack([x.detach(), 2 * x.detach()]))
    theirs = torch.func.vmap(f)(torch.stack([torch.tensor(x.detach().numpy()), 2 * torch.tensor(x.detach().numpy())]))
    np.testing.assert_allclose(ours.numpy(), theirs.numpy())
    tangent = np.ones((4, 6))
    _, ours_t = rg.func.jvp(f, (x.detach(),), (rg.tensor(tangent),))
    _, theirs_t = torch.func.jvp(f, (torch.tensor(x.detach().numpy()),), (torch.tensor(tangent),))
    np.testing.assert_allclose(ours_t.numpy(), theirs_t.numpy())
