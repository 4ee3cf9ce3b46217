"""PyTorch's deprecated per-device autocast switches and the nesting counter, against PyTorch:
values, the state they read and set, their DeprecationWarnings and their TypeErrors."""

from __future__ import annotations

import warnings
from typing import Any

import pytest

import retrograd as rg
from conftest import outcome

CALLS: dict[str, Any] = {
    "get cpu dtype": lambda lib: lib.get_autocast_cpu_dtype(),
    "set cpu dtype": lambda lib: (lib.set_autocast_cpu_dtype(lib.float16), lib.get_autocast_dtype("cpu"),
                                  lib.set_autocast_cpu_dtype(lib.bfloat16))[1],
    "set cpu enabled": lambda lib: (lib.set_autocast_cpu_enabled(True), lib.is_autocast_enabled("cpu"),
                                    lib.set_autocast_cpu_enabled(False))[1],
    "get gpu dtype": lambda lib: lib.get_autocast_gpu_dtype(),
    "set gpu dtype": lambda lib: (lib.set_autocast_gpu_dtype(lib.float16), lib.get_autocast_gpu_dtype())[1],
    "get xla dtype": lambda lib: lib.get_autocast_xla_dtype(),
    "set xla dtype": lambda lib: (lib.set_autocast_xla_dtype(lib.bfloat16), lib.get_autocast_xla_dtype())[1],
    "xla enabled": lambda lib: (lib.set_autocast_xla_enabled(False), lib.is_autocast_xla_enabled())[1],
    "nesting": lambda lib: (lib.autocast_increment_nesting(), lib.autocast_increment_nesting(),
                            lib.autocast_decrement_nesting(), lib.autocast_decrement_nesting(),
                            lib.autocast_decrement_nesting(), lib.autocast_increment_nesting()),
}


def _run(lib: Any, fn: Any) -> tuple[str, list[tuple[str, str]]]:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        value = fn(lib)
    return str(value), [(w.category.__name__, str(w.message).split(" (Triggered internally")[0]) for w in caught]


@pytest.mark.parametrize("case", list(CALLS))
def test_deprecated_autocast_names_match_torch(torch: Any, case: str) -> None:
    assert _run(rg, CALLS[case]) == _run(torch, CALLS[case])


def test_cpu_switch_drives_retrograd_autocast() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        rg.set_autocast_cpu_enabled(True)
        try:
            y = rg.ones(2, 3) @ rg.ones(3, 2)
        finally:
            rg.set_autocast_cpu_enabled(False)
    assert str(y.dtype) == "torch.bfloat16"
    assert str((rg.ones(2, 3) @ rg.ones(3, 2)).dtype) == "torch.float32"


ERRORS: dict[str, Any] = {
    "cpu dtype str": lambda lib: lib.set_autocast_cpu_dtype("x"),
    "cpu enabled int": lambda lib: lib.set_autocast_cpu_enabled(1),
    "gpu dtype int": lambda lib: lib.set_autocast_gpu_dtype(1),
    "xla enabled int": lambda lib: lib.set_autocast_xla_enabled(0),
}


@pytest.mark.parametrize("case", list(ERRORS))
def test_errors_match_torch(torch: Any, case: str) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        assert outcome(lambda: ERRORS[case](rg)) == outcome(lambda: ERRORS[case](torch))
