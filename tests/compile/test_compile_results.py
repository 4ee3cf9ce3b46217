"""What a compiled call returns, as ``torch.compile``'s results are: an output that is a view of an
input or of another output keeps that ``_base`` (on every call, not only the first, traced one),
so an in-place write through it rewrites the base's history as in eager, or is refused for a
view of a leaf; without a recorded node there is no base; versions and the version error's
PyTorch part are torch.compile's. Compared with real PyTorch's ``torch.compile``."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import retrograd as rg

_CALLS = 3  # the first call traces (runs eagerly); the later ones run the compiled code


def _leaf(lib: Any) -> Any:
    return lib.tensor(np.arange(6.0).reshape(2, 3), dtype=lib.float64, requires_grad=True)


def _view_of_input(lib: Any) -> list[Any]:
    compiled = lib.compile(lambda x: x.t())
    seen = []
    for _ in range(_CALLS):
        x = _leaf(lib)
        y = compiled(x)
        assert y._base is x
        with pytest.raises(RuntimeError) as info:
            y.mul_(2)
        seen.append((str(info.value), x.detach().numpy().tolist()))
    return seen


def test_view_of_an_input_keeps_its_base_and_refuses_in_place_writes_of_a_leaf(torch: Any) -> None:
    assert _view_of_input(rg) == _view_of_input(torch)


def _doubled_and_its_tail(x: Any) -> Any:
    """An output and a view of it, returned together."""
    y = x * 2
    return y, y[1:]


def _view_of_output(lib: Any) -> list[Any]:
    compiled = lib.compile(_doubled_and_its_tail)
    seen = []
    for _ in range(_CALLS):
        x = _leaf(lib)
        a, b = compiled(x)
        assert b._base is a
        b.mul_(lib.tensor([1.0, 2.0, 3.0], dtype=lib.float64))  # rewrites ``a``'s history, as in eager
        (a * lib.tensor(np.arange(6.0).reshape(2, 3) + 1, dtype=lib.float64)).sum().backward()
        seen.append((a.grad_fn.name(), b.grad_fn.name(), a._version, b._version, a.detach().numpy().tolist(),
                     x.grad.numpy().tolist()))
    return seen


def test_view_of_an_output_keeps_its_base_and_in_place_writes_reach_the_gradient(torch: Any) -> None:
    assert _view_of_output(rg) == _view_of_output(torch)


def test_two_slices_of_an_unreturned_intermediate_give_eagers_gradients(torch: Any) -> None:
    # (Their base is the intermediate, a hidden output of the compiled node, as PyTorch's: without
    # it the later calls gave x.grad[1][0] 14, not 18.)
    def f(x: Any) -> Any:
        y = x * 2
        return y[1:], y[:, 0]

    def run(lib: Any) -> list[Any]:
        compiled = lib.compile(f)
        out = []
        for _ in range(_CALLS):
            x = _leaf(lib)
            a, b = compiled(x)
            b.mul_(3)
            (a.sum() + 2 * b.sum()).backward()
            out.append((a.detach().numpy().tolist(), b.detach().numpy().tolist(), x.grad.numpy().tolist()))
        return out

    assert run(rg) == run(torch)


def test_a_returned_view_written_in_place_and_then_used_gives_eagers_gradient(torch: Any) -> None:
    # (Before, the view was output 1 of the compiled node and kept that number on the view node
    # its write made: the backward failed with an IndexError in the engine.)
    def run(lib: Any) -> list[Any]:
        compiled = lib.compile(_doubled_and_its_tail)
        out = []
        for _ in range(_CALLS):
            x = _leaf(lib)
            a, b = compiled(x)
            b.mul_(3)
            (a.sum() + 5 * b.sum()).backward()
            out.append((b._base is a, a.detach().numpy().tolist(), x.grad.numpy().tolist()))
        return out

    assert run(rg) == run(torch)


def test_no_base_without_a_recorded_node(torch: Any) -> None:
    def run(lib: Any) -> list[bool]:
        compiled = lib.compile(_doubled_and_its_tail)
        for _ in range(_CALLS):
            compiled(_leaf(lib))  # traced with grad
        seen = []
        for _ in range(_CALLS):
            with lib.no_grad():
                seen.append(compiled(_leaf(lib))[1]._base is None)
            seen.append(compiled(_leaf(lib).detach())[1]._base is None)
        return seen

    # (each mode's first call traces, eagerly: its view has eager's base)
    assert run(rg)[2:] == run(torch)[2:] == [True] * (2 * _CALLS - 2)


def _version_error(lib: Any) -> list[Any]:
    compiled = lib.compile(lambda x: x.exp())
    seen = []
    for _ in range(_CALLS):
        y = compiled(_leaf(lib))
        seen.append(y._version)
        y.add_(1)
        with pytest.raises(RuntimeError) as info:
            y.sum().backward()
        seen.append(str(info.value).split(" [retrograd]")[0])
    return seen


def test_version_error_of_a_compiled_output_is_pytorchs_after_tracing(torch: Any) -> None:
    # (The first call runs eagerly to trace: its node is eager's, ``ExpBackward0``.)
    assert _version_error(rg)[2:] == _version_error(torch)[2:]
