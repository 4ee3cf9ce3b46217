"""``retrograd.utils.safetensors`` reads and writes the files of the ``safetensors`` package
(its NumPy and PyTorch APIs), byte for byte, and rejects malformed ones clearly."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import retrograd as rg
from retrograd.utils import safetensors as rs

DTYPES = ["float16", "float32", "float64", "int8", "int16", "int32", "int64", "uint8", "bool"]


def _package(name: str) -> Any:
    return pytest.importorskip(name)


def _tensors() -> dict[str, Any]:
    out = {}
    for name in DTYPES:
        values = (np.arange(6).reshape(2, 3) * 7 - 9 * (name[0] in "fi")).astype(name)
        out[f"t_{name}"] = rg.tensor(values)
    out["scalar"] = rg.tensor(2.5)
    out["empty"] = rg.zeros(0, 4)
    out["transposed"] = rg.arange(6.0).reshape(2, 3).t()  # not contiguous: written in logical order
    return out


def _check(loaded: dict[str, Any], expected: dict[str, Any], to_numpy: Any = np.asarray) -> None:
    assert set(loaded) == set(expected)
    for key, t in expected.items():
        array = to_numpy(loaded[key])
        assert array.dtype == t.numpy().dtype and array.shape == tuple(t.shape), key
        np.testing.assert_array_equal(array, t.numpy())


def test_bytes_identical_to_the_package() -> None:
    st = _package("safetensors.torch")
    torch = _package("torch")
    tensors = _tensors()
    ours = rs.save(tensors, metadata={"format": "pt"})
    theirs = st.save({k: torch.from_numpy(v.numpy().copy(order="C")) for k, v in tensors.items()},
                     metadata={"format": "pt"})
    assert ours == theirs


def test_package_numpy_reads_ours_and_we_read_its(tmp_path: Path) -> None:
    sn = _package("safetensors.numpy")
    tensors = _tensors()
    path = tmp_path / "ours.safetensors"
    rs.save_file(tensors, path, metadata={"k": "v"})
    _check(sn.load_file(str(path)), tensors)
    path2 = tmp_path / "theirs.safetensors"
    # (C order: the package writes a Fortran-ordered array's memory as if it were C-ordered)
    sn.save_file({k: v.numpy().copy(order="C") for k, v in tensors.items()}, str(path2))
    _check(rs.load_file(path2), tensors, lambda t: t.numpy())


def test_package_torch_both_ways(tmp_path: Path) -> None:
    st = _package("safetensors.torch")
    torch = _package("torch")
    tensors = _tensors()
    loaded = st.load(rs.save(tensors))
    _check(loaded, tensors, lambda t: t.numpy())
    model = torch.nn.Linear(3, 2)
    path = tmp_path / "model.safetensors"
    st.save_file(model.state_dict(), str(path), metadata={"format": "pt"})
    ours = rg.nn.Linear(3, 2)
    ours.load_state_dict(rs.load_file(path))
    np.testing.assert_array_equal(ours.weight.detach().numpy(), model.weight.detach().numpy())
    assert rg.load(path)["bias"].tolist() == model.bias.tolist()  # torch.load's .safetensors route


def test_loaded_tensors_are_writable_and_independent() -> None:
    blob = rs.save({"a": rg.arange(3.0)})
    loaded = rs.load(blob)
    loaded["a"].add_(1.0)
    assert loaded["a"].tolist() == [1.0, 2.0, 3.0] and rs.load(blob)["a"].tolist() == [0.0, 1.0, 2.0]


def _blob(header: dict[str, Any], body: bytes) -> bytes:
    text = json.dumps(header).encode()
    return len(text).to_bytes(8, "little") + text + body


@pytest.mark.parametrize("data, message", [
    (b"\x01\x02", "header too small"),
    ((10**12).to_bytes(8, "little") + b"{}", "invalid header length"),
    ((50).to_bytes(8, "little") + b"{}", "invalid header length"),
    ((2).to_bytes(8, "little") + b"[{", "invalid JSON"),
    (_blob({"a": {"dtype": "F32", "shape": [2], "data_offsets": [0, 8]}}, b"\x00" * 4), "outside the data"),
    (_blob({"a": {"dtype": "F32", "shape": [3], "data_offsets": [0, 8]}}, b"\x00" * 8), "need 12"),
    (_blob({"a": {"dtype": "F8_E4M3", "shape": [1], "data_offsets": [0, 1]}}, b"\x00"), "unsupported dtype"),
    (_blob({"a": {"dtype": "F32", "shape": [1], "data_offsets": [0, 4]}}, b"\x00" * 6), "not fully covered"),
    (_blob({"a": {"dtype": "U8", "shape": [2], "data_offsets": [0, 2]},
            "b": {"dtype": "U8", "shape": [2], "data_offsets": [1, 3]}}, b"\x00" * 3), "overlap"),
])
def test_malformed_buffers(data: bytes, message: str) -> None:
    with pytest.raises(rs.SafetensorError, match=message):
        rs.load(data)


def test_package_rejects_what_we_reject() -> None:
    sn = _package("safetensors.numpy")
    for data in (b"\x01\x02", _blob({"a": {"dtype": "F32", "shape": [1], "data_offsets": [0, 4]}}, b"\x00" * 6)):
        with pytest.raises(Exception, match="Error while deserializing"):
            sn.load(data)


def test_bad_arguments(tmp_path: Path) -> None:
    with pytest.raises(TypeError, match="metadata must be a dict"):
        rs.save({"a": rg.ones(1)}, metadata={"k": 1})  # type: ignore[dict-item]
    with pytest.raises(TypeError, match="str -> Tensor"):
        rs.save({"a": np.ones(1)})  # type: ignore[dict-item]
    path = tmp_path / "x.safetensors"
    with pytest.raises(TypeError):
        rs.save_file({"a": "no"}, path)  # type: ignore[dict-item]
    assert not path.exists()  # nothing half-written
