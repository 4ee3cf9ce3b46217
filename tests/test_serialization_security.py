"""``load`` is weights-only by default: a crafted checkpoint cannot run code, and the refusal, the
safe-globals API and argument checking say what PyTorch says."""

from __future__ import annotations

import io
import os
import pickle
import warnings
from pathlib import Path
from typing import Any

import pytest

import retrograd as rg
from conftest import outcome
from retrograd import serialization


class _System:
    """Unpickling this runs ``os.system``: it creates the marker file."""

    def __init__(self, marker: Path) -> None:
        self.marker = marker

    def __reduce__(self) -> Any:
        return os.system, (f"touch '{self.marker}'",)


class _Eval:
    def __init__(self, marker: Path) -> None:
        self.marker = marker

    def __reduce__(self) -> Any:
        return eval, (f"__import__('pathlib').Path({str(self.marker)!r}).touch()",)


class Point:
    """A user class, admitted only through add_safe_globals."""

    def __init__(self, x: int, y: int) -> None:
        self.x, self.y = x, y


@pytest.fixture(autouse=True)
def _no_user_globals() -> Any:
    serialization.clear_safe_globals()
    yield
    serialization.clear_safe_globals()


@pytest.mark.parametrize("payload", [_System, _Eval])
@pytest.mark.parametrize("kwargs", [{}, {"weights_only": True}])
def test_crafted_zip_checkpoint_is_refused_and_does_not_run(tmp_path: Path, payload: Any, kwargs: Any) -> None:
    marker = tmp_path / "pwned"
    path = tmp_path / "evil.pt"
    rg.save({"w": rg.ones(2), "x": payload(marker)}, path)
    with pytest.raises(pickle.UnpicklingError, match="Weights only load failed"):
        rg.load(path, **kwargs)
    assert not marker.exists()
    # the file really is hostile: trusted loading runs it
    rg.load(path, weights_only=False)
    assert marker.exists()


@pytest.mark.parametrize("payload", [_System, _Eval])
def test_crafted_plain_pickle_is_refused_and_does_not_run(tmp_path: Path, payload: Any) -> None:
    marker = tmp_path / "pwned"
    path = tmp_path / "evil.pkl"
    path.write_bytes(pickle.dumps({"x": payload(marker)}, protocol=2))
    with pytest.raises(pickle.UnpicklingError, match="Weights only load failed"):
        rg.load(path)
    assert not marker.exists()


@pytest.mark.parametrize("payload", [_System, _Eval])
def test_refusal_message_is_pytorchs(torch: Any, tmp_path: Path, payload: Any) -> None:
    marker = tmp_path / "pwned"
    path = tmp_path / "evil.pt"
    torch.save({"x": payload(marker)}, path)
    ours, theirs = outcome(lambda: rg.load(path)), outcome(lambda: torch.load(path))
    assert ours == theirs
    assert ours[0] == "UnpicklingError" and ("eval" in ours[1] or "system" in ours[1])
    assert not marker.exists()


def test_unknown_class_message_names_it_and_the_way_out(torch: Any, tmp_path: Path) -> None:
    path = tmp_path / "point.pt"
    rg.save({"p": Point(1, 2)}, path)
    ours, theirs = outcome(lambda: rg.load(path)), outcome(lambda: torch.load(path))
    assert ours == theirs
    name = f"{__name__}.Point"
    assert f"GLOBAL {name} was not an allowed global" in ours[1]
    assert f"`torch.serialization.add_safe_globals([{name}])`" in ours[1]


def test_add_safe_globals_admits_a_class(tmp_path: Path) -> None:
    path = tmp_path / "point.pt"
    rg.save({"p": Point(1, 2), "t": rg.arange(3)}, path)
    rg.serialization.add_safe_globals([Point])
    assert rg.serialization.get_safe_globals() == [Point]
    loaded = rg.load(path)
    assert isinstance(loaded["p"], Point) and (loaded["p"].x, loaded["p"].y) == (1, 2)
    rg.serialization.clear_safe_globals()
    assert rg.serialization.get_safe_globals() == []
    with pytest.raises(pickle.UnpicklingError):
        rg.load(path)


def test_safe_globals_context_manager_and_named_pairs(tmp_path: Path) -> None:
    path = tmp_path / "point.pt"
    rg.save(Point(3, 4), path)
    with rg.serialization.safe_globals([(Point, f"{__name__}.Point")]):
        assert rg.load(path).y == 4
    assert rg.serialization.get_safe_globals() == []
    with pytest.raises(pickle.UnpicklingError):
        rg.load(path)


def test_weights_only_false_loads_trusted_objects(tmp_path: Path) -> None:
    path = tmp_path / "point.pt"
    rg.save({"p": Point(5, 6)}, path)
    assert rg.load(path, weights_only=False)["p"].x == 5


def test_unknown_keyword_is_a_type_error_like_pytorch(torch: Any, tmp_path: Path) -> None:
    path = tmp_path / "t.pt"
    rg.save(rg.ones(1), path)
    for weights_only in (False, True):
        ours = outcome(lambda: rg.load(path, weights_only=weights_only, foo=1))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            assert ours == outcome(lambda: torch.load(path, weights_only=weights_only, foo=1))
        assert ours[0] == "TypeError"


def test_pickle_module_with_weights_only_and_mmap_on_a_buffer(torch: Any, tmp_path: Path) -> None:
    path = tmp_path / "t.pt"
    rg.save(rg.ones(1), path)
    data = path.read_bytes()
    for kwargs in ({"pickle_module": pickle, "weights_only": True}, {"mmap": True}):
        ours = outcome(lambda: rg.load(io.BytesIO(data), **kwargs))
        assert ours == outcome(lambda: torch.load(io.BytesIO(data), **kwargs))
        assert ours[0] != "ok"


def test_mmap_on_a_path_is_refused_clearly(tmp_path: Path) -> None:
    path = tmp_path / "t.pt"
    rg.save(rg.ones(1), path)
    with pytest.raises(ValueError, match="does not support mmap=True"):
        rg.load(path, mmap=True)


def test_map_location_forms(torch: Any, tmp_path: Path) -> None:
    path = tmp_path / "t.pt"
    rg.save({"w": rg.arange(3.0)}, path)
    for location in (None, "cpu", rg.device("cpu"), torch.device("cpu"), {"cpu": "cpu"}, lambda s, loc: s):
        assert rg.load(path, map_location=location)["w"].tolist() == [0.0, 1.0, 2.0]
    kind, message = outcome(lambda: rg.load(path, map_location="cuda"))
    assert kind == "RuntimeError" and "map_location" in message


def test_pickle_bytes_values_load_under_weights_only(tmp_path: Path) -> None:
    # protocol 2 writes bytes as _codecs.encode(str, "latin1"), which must be admitted
    path = tmp_path / "b.pt"
    rg.save({"raw": b"\x00\xffab", "c": 1 + 2j, "s": {1, 2}}, path)
    assert rg.load(path) == {"raw": b"\x00\xffab", "c": 1 + 2j, "s": {1, 2}}


def test_numpy_array_type_is_not_callable_from_a_checkpoint(tmp_path: Path) -> None:
    # Legacy files may name numpy.ndarray for _reconstruct, but calling it (with a buffer, offset
    # and strides of the file's choosing) must stay refused.
    import numpy as np

    class _View:
        def __reduce__(self) -> Any:
            return np.ndarray, ((4,), np.uint8, b"abcd")

    path = tmp_path / "nd.pkl"
    path.write_bytes(pickle.dumps({"x": _View()}, protocol=2))
    with pytest.raises(pickle.UnpicklingError):
        rg.load(path)
    assert rg.load(path, weights_only=False)["x"].tolist() == [97, 98, 99, 100]


def _build_on_tensor_class() -> bytes:
    # Tensor (the class), then BUILD with slot state {"__repr__": OrderedDict}: an unpickler that
    # fills in any object would set an attribute of retrograd's Tensor class itself.
    key = b"__repr__"
    return (b"\x80\x02ctorch\nTensor\nN}X" + len(key).to_bytes(4, "little") + key
            + b"ccollections\nOrderedDict\ns\x86b.")


@pytest.mark.parametrize("payload, message", [
    (_build_on_tensor_class(), "Can only build Tensor, Parameter, OrderedDict"),
    (b"\x80\x02ctorch\nTensor\n)\x81.", "Can only create new object for nn.Parameter"),
])
def test_weights_only_refuses_to_fill_in_or_create_unlisted_types(tmp_path: Path, payload: bytes,
                                                                  message: str) -> None:
    path = tmp_path / "crafted.pkl"
    path.write_bytes(payload)
    repr_before = rg.Tensor.__repr__
    with pytest.raises(pickle.UnpicklingError, match=message):
        rg.load(path)
    assert rg.Tensor.__repr__ is repr_before
