"""The torch.* functions, Tensor attributes and modules ported programs touch at start-up, each
against real PyTorch on this (CPU-only) machine."""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import pytest
from tests.conftest import outcome

import retrograd as rg

FLOATS = ("float16", "float32", "float64")
INTS = ("uint8", "int8", "int16", "int32", "int64")


@pytest.mark.parametrize("name", FLOATS)
def test_finfo_matches_torch(torch: Any, name: str) -> None:
    ours, theirs = rg.finfo(getattr(rg, name)), torch.finfo(getattr(torch, name))
    for attr in ("bits", "eps", "max", "min", "tiny", "smallest_normal", "resolution", "dtype"):
        assert getattr(ours, attr) == getattr(theirs, attr), attr
    assert repr(ours) == repr(theirs)


def test_finfo_default_and_errors(torch: Any) -> None:
    assert rg.finfo().dtype == torch.finfo().dtype == "float32"
    assert outcome(lambda: rg.finfo(rg.int32)) == outcome(lambda: torch.finfo(torch.int32))
    assert outcome(lambda: rg.iinfo(rg.float32)) == outcome(lambda: torch.iinfo(torch.float32))
    assert outcome(lambda: rg.iinfo(rg.bool)) == outcome(lambda: torch.iinfo(torch.bool))


@pytest.mark.parametrize("name", INTS)
def test_iinfo_matches_torch(torch: Any, name: str) -> None:
    ours, theirs = rg.iinfo(getattr(rg, name)), torch.iinfo(getattr(torch, name))
    for attr in ("bits", "max", "min", "dtype"):
        assert getattr(ours, attr) == getattr(theirs, attr), attr
    assert repr(ours) == repr(theirs)


ALL = FLOATS + INTS + ("bool",)


def test_promote_types_and_can_cast_table(torch: Any) -> None:
    for a in ALL:
        for b in ALL:
            ra, rb, ta, tb = getattr(rg, a), getattr(rg, b), getattr(torch, a), getattr(torch, b)
            assert str(rg.promote_types(ra, rb)) == str(torch.promote_types(ta, tb)), (a, b)
            assert rg.can_cast(ra, rb) == torch.can_cast(ta, tb), (a, b)


@pytest.mark.parametrize("pair", [
    (np.array([1], np.int32), 1.0), (np.array([1], np.uint8), np.array(1, np.int64)), (1, 2.0), (True, 2),
    (np.array([1.0], np.float16), np.array(2.0, np.float64)), (np.array([1], np.int8), np.array([1], np.uint8)),
])
def test_result_type_matches_torch(torch: Any, pair: tuple[Any, Any]) -> None:
    ours = [rg.from_numpy(x) if isinstance(x, np.ndarray) else x for x in pair]
    theirs = [torch.from_numpy(x) if isinstance(x, np.ndarray) else x for x in pair]
    assert str(rg.result_type(*ours)) == str(torch.result_type(*theirs))


def test_dtype_queries_on_tensors(torch: Any) -> None:
    for name in ALL:
        r, t = rg.ones(2, dtype=getattr(rg, name)), torch.ones(2, dtype=getattr(torch, name))
        assert rg.is_signed(r) == torch.is_signed(t) == r.is_signed() == t.is_signed(), name
        assert rg.is_complex(r) == torch.is_complex(t)
        assert rg.typename(r) == torch.typename(t)
        assert r.itemsize == t.itemsize and r.nbytes == t.nbytes
    r, t = rg.ones(2, 3), torch.ones(2, 3)
    assert rg.is_same_size(r, rg.zeros(2, 3)) and not r.is_same_size(r.t())
    assert t.is_same_size(t) and not t.is_same_size(t.t())
    assert rg.is_inference(r) == torch.is_inference(t) is False
    assert (rg.get_device(r), r.get_device()) == (torch.get_device(t), t.get_device()) == (-1, -1)
    assert (rg.typename(1), rg.typename(rg.nn.Linear(1, 1))) == (torch.typename(1), torch.typename(torch.nn.Linear(1, 1)))
    assert outcome(lambda: rg.is_signed(1)) == ("TypeError", "is_signed(): argument 'input' (position 1) must be "
                                                           "Tensor, not int")


def test_conj_and_neg_bits_on_real_tensors(torch: Any) -> None:
    x = rg.ones(2, requires_grad=True) * 2
    tx = torch.ones(2, requires_grad=True) * 2
    for name in ("conj", "conj_physical", "resolve_conj", "resolve_neg"):
        assert getattr(rg, name)(x) is x and getattr(torch, name)(tx) is tx, name
        assert getattr(x, name)() is x and getattr(tx, name)() is tx, name
    assert (rg.is_conj(x), rg.is_neg(x), x.is_conj(), x.is_neg()) == (tx.is_conj(), tx.is_neg(), False, False)


def test_top_level_detach(torch: Any) -> None:
    x = rg.ones(2, requires_grad=True) * 2
    d = rg.detach(x)
    assert not d.requires_grad and d.data_ptr() == x.data_ptr()
    rg.detach_(x)
    assert not x.requires_grad and x.grad_fn is None
    tx = torch.ones(2, requires_grad=True) * 2
    torch.detach_(tx)
    assert not tx.requires_grad


def test_asarray_semantics_match_torch(torch: Any) -> None:
    for lib in (rg, torch):
        a = np.arange(3.0)
        shared = lib.asarray(a)
        converted = lib.asarray(a, dtype=lib.float32)
        copied = lib.asarray(a, copy=True)
        a[0] = 9.0
        assert shared.tolist() == [9.0, 1.0, 2.0] and str(shared.dtype) == "torch.float64"
        assert converted.tolist() == [0.0, 1.0, 2.0] and copied.tolist() == [0.0, 1.0, 2.0]
        assert str(lib.asarray([1, 2]).dtype) == "torch.int64" and str(lib.asarray([1.0]).dtype) == "torch.float32"
        assert str(lib.asarray(np.float32(2)).dtype) == "torch.float32"
        g = lib.asarray(np.ones(2), requires_grad=True)
        assert g.requires_grad and g.is_leaf
        x = lib.ones(2, requires_grad=True) * 2
        assert lib.asarray(x, requires_grad=True) is x
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # (PyTorch 2.13 warns that the default now follows the tensor)
            assert type(lib.asarray(x, copy=True).grad_fn).__name__ == "CloneBackward0"
            assert type(lib.asarray(x, dtype=lib.float64).grad_fn).__name__ == "ToCopyBackward0"
        for kwargs in ({"copy": True, "requires_grad": False}, {"requires_grad": False},
                       {"dtype": lib.float64, "requires_grad": False}):
            y = lib.asarray(x, **kwargs)
            assert y is not x and not y.requires_grad and y.grad_fn is None, kwargs
    assert outcome(lambda: rg.asarray(np.ones(2), dtype=rg.float32, copy=False)) == \
        outcome(lambda: torch.asarray(np.ones(2), dtype=torch.float32, copy=False))


def test_frombuffer_matches_torch(torch: Any) -> None:
    values = np.arange(4, dtype=np.float32).tobytes()
    for lib in (rg, torch):
        buffer = bytearray(values)
        t = lib.frombuffer(buffer, dtype=lib.float32, count=2, offset=4)
        buffer[4:8] = np.float32(42).tobytes()  # shares the buffer's memory
        assert t.tolist() == [42.0, 2.0]
    for kwargs in ({"count": 5}, {"offset": 20}, {"offset": 2}):
        assert outcome(lambda: rg.frombuffer(bytearray(values), dtype=rg.float32, **kwargs)) == \
            outcome(lambda: torch.frombuffer(bytearray(values), dtype=torch.float32, **kwargs)), kwargs
    assert outcome(lambda: rg.frombuffer(bytearray(), dtype=rg.float32)) == \
        outcome(lambda: torch.frombuffer(bytearray(), dtype=torch.float32))


def test_dlpack_round_trips_share_memory(torch: Any) -> None:
    a = np.arange(3.0)
    t = rg.from_dlpack(a)
    a[0] = 7.0
    assert t.tolist() == [7.0, 1.0, 2.0]
    back = np.from_dlpack(t)
    back[1] = 8.0
    assert t.tolist() == [7.0, 8.0, 2.0]
    theirs = torch.from_dlpack(t)  # PyTorch takes retrograd's tensor through DLPack
    assert theirs.tolist() == [7.0, 8.0, 2.0] and str(theirs.dtype) == "torch.float64"
    assert rg.from_dlpack(torch.arange(3)).tolist() == [0, 1, 2]
    capsule = rg.to_dlpack(t)  # a capsule, as torch.to_dlpack gives, that torch can take
    assert type(capsule).__name__ == type(torch.to_dlpack(torch.ones(1))).__name__ == "PyCapsule"
    assert torch.from_dlpack(capsule).tolist() == [7.0, 8.0, 2.0]
    assert rg.is_distributed(t) is torch.is_distributed(theirs) is False


def test_thread_and_determinism_settings(torch: Any) -> None:
    n = rg.get_num_threads()
    try:
        rg.set_num_threads(1)
        assert rg.get_num_threads() == 1
    finally:
        rg.set_num_threads(n)
    for bad in (0, -1, 1.5):
        assert outcome(lambda: rg.set_num_threads(bad)) == outcome(lambda: torch.set_num_threads(bad)), bad
    assert rg.get_num_interop_threads() >= 1
    rg.init_num_threads()
    assert (rg.are_deterministic_algorithms_enabled(), rg.is_deterministic_algorithms_warn_only_enabled(),
            rg.get_deterministic_debug_mode()) == (torch.are_deterministic_algorithms_enabled(),
                                                   torch.is_deterministic_algorithms_warn_only_enabled(),
                                                   torch.get_deterministic_debug_mode())
    try:
        for lib in (rg, torch):
            seen = []
            lib.use_deterministic_algorithms(True, warn_only=True)
            seen.append((lib.get_deterministic_debug_mode(), lib.is_deterministic_algorithms_warn_only_enabled()))
            lib.use_deterministic_algorithms(True)
            seen.append((lib.get_deterministic_debug_mode(), lib.are_deterministic_algorithms_enabled()))
            for mode in ("warn", "error", "default", 1, 2, 0):
                lib.set_deterministic_debug_mode(mode)
                seen.append((lib.get_deterministic_debug_mode(), lib.are_deterministic_algorithms_enabled()))
            if lib is rg:
                ours = seen
        assert ours == seen
        assert outcome(lambda: rg.set_deterministic_debug_mode(5)) == outcome(lambda: torch.set_deterministic_debug_mode(5))
        assert outcome(lambda: rg.use_deterministic_algorithms("x")) == outcome(lambda: torch.use_deterministic_algorithms("x"))
    finally:
        rg.use_deterministic_algorithms(False)
        torch.use_deterministic_algorithms(False)


def test_interop_threads_set_once() -> None:
    # (not compared live: PyTorch's can be set once per process, and the suite may have used it)
    from retrograd import _porting
    saved = dict(_porting._settings)
    try:
        _porting._settings["interop_set"] = False
        rg.set_num_interop_threads(1)
        assert rg.get_num_interop_threads() == 1
        assert outcome(lambda: rg.set_num_interop_threads(2)) == (
            "RuntimeError", "Error: cannot set number of interop threads after parallel work has started or "
                            "set_num_interop_threads called")
    finally:
        _porting._settings.update(saved)


def test_matmul_precision_flush_denormal_and_autocast(torch: Any) -> None:
    assert rg.get_float32_matmul_precision() == torch.get_float32_matmul_precision() == "highest"
    try:
        rg.set_float32_matmul_precision("high")
        assert rg.get_float32_matmul_precision() == "high"
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            rg.set_float32_matmul_precision("foo")
        assert rg.get_float32_matmul_precision() == "high"
        assert "foo is not one of 'highest', 'high', or 'medium'" in str(caught[0].message)
    finally:
        rg.set_float32_matmul_precision("highest")
    assert rg.set_flush_denormal(True) is False and rg.set_flush_denormal(False) is False
    with pytest.warns(DeprecationWarning, match=r"is_autocast_cpu_enabled\(\) is deprecated"):
        ours = (rg.is_autocast_enabled(), rg.is_autocast_enabled("cpu"), rg.is_autocast_cpu_enabled(),
                rg.is_autocast_cache_enabled())
    with pytest.warns(DeprecationWarning):
        theirs = (torch.is_autocast_enabled(), torch.is_autocast_enabled("cpu"), torch.is_autocast_cpu_enabled(),
                  torch.is_autocast_cache_enabled())
    assert ours == theirs


def test_default_tensor_type_is_deprecated_and_sets_dtype(torch: Any) -> None:
    try:
        with pytest.warns(UserWarning, match=r"set_default_tensor_type\(\) is deprecated as of PyTorch 2.1"):
            rg.set_default_tensor_type("torch.DoubleTensor")
        assert rg.get_default_dtype() is rg.float64 and rg.tensor([1.0]).dtype is rg.float64
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            rg.set_default_tensor_type(rg.FloatTensor)
            assert rg.get_default_dtype() is rg.float32
            assert outcome(lambda: rg.set_default_tensor_type("torch.LongTensor")) == \
                outcome(lambda: torch.set_default_tensor_type(torch.LongTensor))
    finally:
        rg.set_default_dtype(rg.float32)


def test_default_device(torch: Any) -> None:
    assert str(rg.get_default_device()) == str(torch.get_default_device()) == "cpu"
    assert repr(rg.get_default_device()) == repr(torch.get_default_device())
    rg.set_default_device("cpu")
    rg.set_default_device(None)
    rg.set_default_device(rg.device("cpu"))
    try:
        torch.set_default_device("cuda")
        want = outcome(lambda: torch.zeros(1))  # PyTorch refuses at the first factory
    finally:
        torch.set_default_device(None)
    assert outcome(lambda: rg.set_default_device("cuda")) == want
    assert outcome(lambda: rg.set_default_device("cuda:0")) == want
    assert outcome(lambda: rg.set_default_device("mps"))[0] == "RuntimeError"


def test_accelerator_on_a_cpu_only_machine(torch: Any) -> None:
    assert (rg.accelerator.is_available(), rg.accelerator.current_accelerator(), rg.accelerator.device_count()) \
        == (torch.accelerator.is_available(), torch.accelerator.current_accelerator(),
            torch.accelerator.device_count())
    assert rg.accelerator.current_accelerator(check_available=True) is None
    for name in ("current_device_index", "current_stream", "synchronize"):
        assert outcome(getattr(rg.accelerator, name)) == outcome(getattr(torch.accelerator, name)), name
    assert outcome(lambda: rg.accelerator.set_device_index(0)) == outcome(lambda: torch.accelerator.set_device_index(0))


def test_backends_flags_have_torch_defaults_and_are_settable(torch: Any) -> None:
    b, tb = rg.backends, torch.backends
    pairs = [(b.mps.is_available(), tb.mps.is_available()), (b.mps.is_built(), tb.mps.is_built()),
             (b.cudnn.is_available(), tb.cudnn.is_available()), (b.cudnn.version(), tb.cudnn.version()),
             (b.cudnn.enabled, tb.cudnn.enabled), (b.cudnn.benchmark, tb.cudnn.benchmark),
             (b.cudnn.deterministic, tb.cudnn.deterministic), (b.cudnn.allow_tf32, tb.cudnn.allow_tf32),
             (b.mkldnn.enabled, tb.mkldnn.enabled), (b.mkldnn.is_available(), tb.mkldnn.is_available()),
             (b.mkl.is_available(), tb.mkl.is_available()), (b.openmp.is_available(), tb.openmp.is_available()),
             (b.cuda.is_built(), tb.cuda.is_built()), (b.cuda.matmul.allow_tf32, tb.cuda.matmul.allow_tf32),
             (b.cuda.flash_sdp_enabled(), tb.cuda.flash_sdp_enabled())]
    assert [p[0] for p in pairs] == [p[1] for p in pairs]
    assert b.opt_einsum.is_available() is False and b.opt_einsum.enabled is False  # (opt_einsum not installed)
    import retrograd.backends.cudnn as cudnn
    try:
        cudnn.benchmark = True
        assert rg.backends.cudnn.benchmark is True
    finally:
        cudnn.benchmark = False


def test_tensor_storage_queries(torch: Any) -> None:
    for lib in (rg, torch):
        x = lib.arange(6.0).reshape(2, 3)
        assert x.data_ptr() == x.const_data_ptr() != 0
        assert x[1].data_ptr() - x.data_ptr() == 12
        assert (x.is_cpu, x.is_meta, x.is_pinned(), x.is_shared(), x.is_distributed()) == (True, False, False, False,
                                                                                            False)
        assert str(x.layout) == "torch.strided" and x.layout is lib.strided
        assert x.t().dim_order() == (1, 0) and lib.ones(2, 3, 4).permute(2, 0, 1).dim_order() == (1, 2, 0)
        assert str(x.char().dtype) == "torch.int8" and x.char().tolist() == [[0, 1, 2], [3, 4, 5]]
        assert str(lib.ones(2, requires_grad=True).grad_dtype) == "torch.float32"
        assert str(lib.ones(2, dtype=lib.int64).grad_dtype) == "torch.int64"
        assert x.is_set_to(x) and not x.is_set_to(x.view(6)) and not x.is_set_to(x.clone())
        assert not x.t().is_set_to(x)
        with pytest.warns(UserWarning, match=r"volatile was removed \(Variable.volatile is always False\)"):
            assert x.volatile is False


def test_tensor_new_legacy_constructor(torch: Any) -> None:
    for lib in (rg, torch):
        x = lib.arange(6.0)
        assert tuple(x.new(2, 3).shape) == (2, 3) and x.new(2).dtype is lib.float32
        assert tuple(x.new().shape) == (0,) and tuple(x.new(lib.Size([2])).shape) == (2,)
        assert x.new([1, 2]).tolist() == [1.0, 2.0] and x.new([1, 2]).dtype is lib.float32
        assert lib.ones(1, dtype=lib.int64).new([1.5]).tolist() == [1]
        assert x.new(x).data_ptr() == x.data_ptr()


def test_apply_map_map2(torch: Any) -> None:
    for lib in (rg, torch):
        x = lib.arange(6.0).reshape(2, 3)
        assert x.clone().apply_(lambda v: v * 2).tolist() == [[0, 2, 4], [6, 8, 10]]
        assert x.clone().map_(lib.ones(3), lambda a, b: a + b).tolist() == [[1, 2, 3], [4, 5, 6]]
        assert x.clone().map2_(lib.ones(3), lib.ones(2, 1) * 2, lambda a, b, c: a + b * c).tolist() == \
            [[2, 3, 4], [5, 6, 7]]
    # Deliberately unlike PyTorch (whose apply_ leaves the version alone and so can corrupt a saved
    # value silently): the write is seen by the saved-tensor check.
    w, y = rg.ones(2, requires_grad=True), rg.ones(2)
    z = w * y
    y.apply_(lambda v: v * 5)
    assert outcome(lambda: z.sum().backward())[0] == "RuntimeError"
    r, tr = rg.ones(2, requires_grad=True), torch.ones(2, requires_grad=True)
    assert outcome(lambda: r.apply_(lambda v: v)) == outcome(lambda: tr.apply_(lambda v: v))
    assert outcome(lambda: r.map_(r, lambda a, b: a)) == outcome(lambda: tr.map_(tr, lambda a, b: a))


def test_as_subclass_and_set(torch: Any) -> None:
    class Mine(rg.Tensor):
        pass

    x = rg.ones(2, requires_grad=True) * 3
    s = x.as_subclass(Mine)
    assert type(s) is Mine and s.data_ptr() == x.data_ptr() and s.grad_fn is x.grad_fn
    s.sum().backward()  # the subclass instance is in the graph as x was
    for lib in (rg, torch):
        base = lib.arange(6.0).reshape(2, 3)
        z = lib.zeros(1)
        assert z.set_(base) is z and tuple(z.shape) == (2, 3) and z.is_set_to(base)
        z[0, 0] = 5.0
        assert base[0, 0].item() == 5.0
        assert tuple(lib.zeros(1).set_().shape) == (0,)
    assert outcome(lambda: rg.ones(2, requires_grad=True).set_(rg.zeros(3))) == \
        outcome(lambda: torch.ones(2, requires_grad=True).set_(torch.zeros(3)))
    assert outcome(lambda: rg.ones(2).set_(rg.ones(2, dtype=rg.int64))) == \
        outcome(lambda: torch.ones(2).set_(torch.ones(2, dtype=torch.int64)))


def test_porting_names_load_lazily() -> None:
    import subprocess
    import sys
    code = ("import sys, retrograd as rg; assert 'retrograd._porting' not in sys.modules; "
            "rg.finfo; assert 'retrograd._porting' in sys.modules; assert 'finfo' in dir(rg)")
    assert subprocess.run([sys.executable, "-c", code], env={"PYTHONPATH": rg.__path__[0].rsplit("/", 1)[0]},
                          capture_output=True, timeout=120).returncode == 0
