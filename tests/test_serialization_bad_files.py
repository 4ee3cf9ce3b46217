"""Bad checkpoints get clear errors of the types ``torch.load`` raises, and ``load_state_dict``
never half-loads a module; it accepts NumPy arrays and PyTorch tensors as values."""

from __future__ import annotations

import pickle
import zipfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import retrograd as rg
from conftest import outcome


def _rewrite(src: Path, dst: Path, change: Callable[[str, bytes], bytes | None]) -> None:
    with zipfile.ZipFile(src) as zin, zipfile.ZipFile(dst, "w") as zout:
        for info in zin.infolist():
            data = change(info.filename, zin.read(info.filename))
            if data is not None:
                zout.writestr(info.filename, data)


@pytest.fixture
def good(tmp_path: Path) -> Path:
    path = tmp_path / "good.pt"
    rg.save({"w": rg.arange(10.0)}, path)
    return path


def _same_type_as_torch(torch: Any, path: Path) -> tuple[str, str]:
    ours, theirs = outcome(lambda: rg.load(path)), outcome(lambda: torch.load(path))
    assert ours[0] == theirs[0] != "ok", (ours, theirs)
    return ours


def test_truncated_file(torch: Any, good: Path, tmp_path: Path) -> None:
    path = tmp_path / "truncated.pt"
    path.write_bytes(good.read_bytes()[: len(good.read_bytes()) // 2])
    kind, message = _same_type_as_torch(torch, path)
    assert "failed finding central directory" in message and "corrupted" in message


def test_empty_file(torch: Any, tmp_path: Path) -> None:
    path = tmp_path / "empty.pt"
    path.write_bytes(b"")
    _same_type_as_torch(torch, path)


@pytest.mark.parametrize("content", [b"this is not a checkpoint at all", b"XX\x03\x04" + b"\x00" * 40])
def test_not_a_checkpoint_or_wrong_magic(tmp_path: Path, content: bytes) -> None:
    path = tmp_path / "junk.pt"
    path.write_bytes(content)
    with pytest.raises(pickle.UnpicklingError, match="not a checkpoint"):
        rg.load(path)


def test_zip_with_a_broken_magic_is_not_a_checkpoint(good: Path, tmp_path: Path) -> None:
    path = tmp_path / "magic.pt"
    path.write_bytes(b"XX" + good.read_bytes()[2:])
    with pytest.raises(pickle.UnpicklingError, match="invalid load key, b'X': not a checkpoint"):
        rg.load(path)


def test_missing_records(torch: Any, good: Path, tmp_path: Path) -> None:
    for record in ("data.pkl", "data/0"):
        path = tmp_path / "missing.pt"
        _rewrite(good, path, lambda name, data, record=record: None if name.endswith(record) else data)
        kind, message = _same_type_as_torch(torch, path)
        assert f"failed locating file {record}: file not found" in message


def test_zip_that_is_not_a_checkpoint(torch: Any, tmp_path: Path) -> None:
    path = tmp_path / "other.zip"
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr("hello.txt", "hi")
    _same_type_as_torch(torch, path)


def test_storage_record_too_short(torch: Any, good: Path, tmp_path: Path) -> None:
    path = tmp_path / "short.pt"
    _rewrite(good, path, lambda name, data: data[:12] if name.endswith("data/0") else data)
    kind, message = _same_type_as_torch(torch, path)
    assert "12 bytes, too few for 10 elements" in message


def test_tensor_reaching_past_its_storage(torch: Any, tmp_path: Path) -> None:
    src = tmp_path / "view.pt"
    rg.save({"v": rg.arange(13.0)[2:]}, src)  # storage of 13, view of 11 at offset 2

    def shrink(name: str, data: bytes) -> bytes:
        if name.endswith("data/0"):
            return data[:36]  # 9 elements
        if name.endswith("data.pkl"):
            assert data.count(b"K\x0dt") == 1  # the storage's element count, before TUPLE
            return data.replace(b"K\x0dt", b"K\x09t")
        return data

    path = tmp_path / "bad_view.pt"
    _rewrite(src, path, shrink)
    kind, message = _same_type_as_torch(torch, path)
    assert "out of bounds for storage of size 36" in message


def test_corrupted_storage_bytes_are_detected(good: Path, tmp_path: Path) -> None:
    raw = bytearray(good.read_bytes())
    with zipfile.ZipFile(good) as archive:
        info = archive.getinfo("archive/data/0")
    start = info.header_offset + 30 + len(info.filename) + int.from_bytes(raw[info.header_offset + 28:
                                                                              info.header_offset + 30], "little")
    raw[start + 5] ^= 0xFF
    path = tmp_path / "flipped.pt"
    path.write_bytes(bytes(raw))
    with pytest.raises(RuntimeError, match="failed reading file data/0.*corrupted"):
        rg.load(path)


def test_unsupported_pytorch_dtype_is_named(torch: Any, tmp_path: Path) -> None:
    path = tmp_path / "fp8.pt"  # (bfloat16 loads now: a dtype NumPy has no counterpart for)
    torch.save({"w": torch.ones(2, dtype=torch.float8_e4m3fn)}, path)
    with pytest.raises(pickle.UnpicklingError, match="cannot rebuild torch._utils._rebuild_tensor_v3: a PyTorch object that retrograd does not have"):
        rg.load(path)


# -- load_state_dict ----------------------------------------------------------------------------
def _model() -> Any:
    rg.manual_seed(0)
    return rg.nn.Sequential(rg.nn.Linear(2, 3), rg.nn.BatchNorm1d(3), rg.nn.Linear(3, 1))


def _snapshot(model: Any) -> dict[str, np.ndarray]:
    return {k: v.detach().numpy().copy() for k, v in model.state_dict().items()}


def _unchanged(model: Any, before: dict[str, np.ndarray]) -> bool:
    return all(np.array_equal(v.detach().numpy(), before[k]) for k, v in model.state_dict().items())


@pytest.mark.parametrize("problem", ["missing", "unexpected", "shape", "type"])
def test_bad_state_dict_leaves_module_unchanged(problem: str) -> None:
    model = _model()
    before = _snapshot(model)
    state = {k: v + 1 for k, v in model.state_dict().items()}  # every good entry would change the model
    if problem == "missing":
        del state["2.bias"]
    elif problem == "unexpected":
        state["extra.weight"] = rg.zeros(1)
    elif problem == "shape":
        state["2.weight"] = rg.zeros(5, 5)
    else:
        state["2.weight"] = "not a tensor"
    with pytest.raises(RuntimeError, match="Error\\(s\\) in loading state_dict for Sequential"):
        model.load_state_dict(state)
    assert _unchanged(model, before)


def test_all_problems_listed_like_pytorch(torch: Any) -> None:
    ours, theirs = _model(), torch.nn.Sequential(torch.nn.Linear(2, 3), torch.nn.BatchNorm1d(3),
                                                 torch.nn.Linear(3, 1))
    before = _snapshot(ours)

    def bad(lib: Any, model: Any) -> dict[str, Any]:
        state = dict(model.state_dict())
        del state["2.bias"]
        state["extra"] = lib.zeros(1)
        state["0.weight"] = lib.zeros(4, 4)
        return state

    assert outcome(lambda: ours.load_state_dict(bad(rg, ours))) == \
        outcome(lambda: theirs.load_state_dict(bad(torch, theirs)))
    assert _unchanged(ours, before)


def test_assign_mode_also_leaves_module_unchanged() -> None:
    model = _model()
    weight = model[0].weight
    state = {k: v + 1 for k, v in model.state_dict().items()}
    state["2.weight"] = rg.zeros(7)
    with pytest.raises(RuntimeError):
        model.load_state_dict(state, assign=True)
    assert model[0].weight is weight


def test_non_strict_loads_the_matching_entries() -> None:
    model = _model()
    state = {"0.weight": rg.ones(3, 2), "unknown": rg.zeros(1)}
    result = model.load_state_dict(state, strict=False)
    assert model[0].weight.tolist() == [[1.0, 1.0]] * 3
    assert "unknown" in result.unexpected_keys and "0.bias" in result.missing_keys


def test_numpy_arrays_are_converted() -> None:
    model = rg.nn.Linear(2, 2)
    state = {"weight": np.arange(4.0).reshape(2, 2), "bias": np.array([1, 2], dtype=np.int64)}
    model.load_state_dict(state)
    assert model.weight.dtype == rg.float32 and model.weight.tolist() == [[0.0, 1.0], [2.0, 3.0]]
    assert model.bias.tolist() == [1.0, 2.0] and model.weight.requires_grad
    state["weight"][0, 0] = 99.0  # copied, not aliased
    assert model.weight[0, 0].item() == 0.0


def test_torch_tensors_are_converted(torch: Any) -> None:
    theirs = torch.nn.Linear(3, 2)
    ours = rg.nn.Linear(3, 2)
    ours.load_state_dict(theirs.state_dict())
    np.testing.assert_array_equal(ours.weight.detach().numpy(), theirs.weight.detach().numpy())
    assert isinstance(ours.weight, rg.nn.Parameter) and ours.weight.requires_grad
    ours.load_state_dict({k: torch.nn.Parameter(v) for k, v in theirs.state_dict().items()})  # requires grad
    np.testing.assert_array_equal(ours.bias.detach().numpy(), theirs.bias.detach().numpy())
