"""Checkpoints move both ways between retrograd and PyTorch: ``torch.load`` reads what
``retrograd.save`` writes and ``retrograd.load`` reads what ``torch.save`` writes (without torch)."""

from __future__ import annotations

import io
import pickle
import subprocess
import sys
import zipfile
from collections import OrderedDict
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import retrograd as rg

DTYPES = ["float16", "float32", "float64", "int8", "int16", "int32", "int64", "uint8", "bool"]


def _values(name: str) -> np.ndarray:
    if name == "bool":
        return np.array([[True, False, True], [False, False, True]])
    return (np.arange(6).reshape(2, 3) * (3 if name != "uint8" else 40) - (5 if name[0] in "fi" else 0)).astype(name)


@pytest.mark.parametrize("name", DTYPES)
def test_each_dtype_retrograd_to_torch(torch: Any, tmp_path: Path, name: str) -> None:
    data = _values(name)
    path = tmp_path / "t.pt"
    rg.save({"t": rg.tensor(data), "scalar": rg.tensor(data[1, 2]), "empty": rg.tensor(data[:0])}, path)
    loaded = torch.load(path, weights_only=True)
    assert loaded["t"].dtype == getattr(torch, name)
    np.testing.assert_array_equal(loaded["t"].numpy(), data)
    assert loaded["scalar"].shape == () and loaded["scalar"].item() == data[1, 2].item()
    assert loaded["empty"].shape == (0, 3) and loaded["empty"].dtype == getattr(torch, name)


@pytest.mark.parametrize("name", DTYPES)
def test_each_dtype_torch_to_retrograd(torch: Any, tmp_path: Path, name: str) -> None:
    data = _values(name)
    path = tmp_path / "t.pt"
    torch.save({"t": torch.tensor(data), "scalar": torch.tensor(data[1, 2]), "empty": torch.tensor(data[:0])}, path)
    loaded = rg.load(path)
    assert loaded["t"].dtype == getattr(rg, name)
    np.testing.assert_array_equal(loaded["t"].numpy(), data)
    assert loaded["scalar"].shape == () and loaded["scalar"].item() == data[1, 2].item()
    assert loaded["empty"].shape == (0, 3) and loaded["empty"].dtype == getattr(rg, name)


def test_loading_a_torch_file_does_not_import_torch(torch: Any, tmp_path: Path) -> None:
    path = tmp_path / "m.pt"
    torch.save(torch.nn.Linear(3, 2).state_dict(), path)
    code = ("import sys, retrograd as rg; sd = rg.load(sys.argv[1]); "
            "assert sd['weight'].shape == (2, 3) and 'torch' not in sys.modules, sorted(sys.modules)")
    subprocess.run([sys.executable, "-c", code, str(path)], check=True)


def test_model_state_dict_both_ways(torch: Any, tmp_path: Path) -> None:
    ours = rg.nn.Sequential(rg.nn.Linear(3, 4), rg.nn.BatchNorm1d(4), rg.nn.Linear(4, 2))
    ours.train()
    ours(rg.randn(5, 3))  # running stats and num_batches_tracked move
    path = tmp_path / "ours.pt"
    rg.save(ours.state_dict(), path)
    theirs = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.BatchNorm1d(4), torch.nn.Linear(4, 2))
    loaded = torch.load(path, weights_only=True)
    assert isinstance(loaded, OrderedDict) and list(loaded) == list(ours.state_dict())
    assert loaded._metadata == ours.state_dict()._metadata
    theirs.load_state_dict(loaded)
    x = np.random.default_rng(0).standard_normal((2, 3)).astype(np.float32)
    ours.eval()
    theirs.eval()
    expected = ours(rg.tensor(x)).detach().numpy()
    np.testing.assert_allclose(theirs(torch.tensor(x)).detach().numpy(), expected, rtol=1e-5, atol=1e-6)
    # and back: PyTorch writes, retrograd reads
    path2 = tmp_path / "theirs.pt"
    with torch.no_grad():
        theirs[0].weight.mul_(2)
    torch.save(theirs.state_dict(), path2)
    back = rg.load(path2)
    assert back._metadata == theirs.state_dict()._metadata
    assert back["1.num_batches_tracked"].dtype == rg.int64 and back["1.num_batches_tracked"].item() == 1
    ours.load_state_dict(back)
    np.testing.assert_allclose(ours(rg.tensor(x)).detach().numpy(), theirs(torch.tensor(x)).detach().numpy(),
                               rtol=1e-5, atol=1e-6)


def test_adam_state_resumes_across_libraries(torch: Any, tmp_path: Path) -> None:
    x = np.random.default_rng(1).standard_normal((4, 3)).astype(np.float32)
    model = rg.nn.Linear(3, 2)
    opt = rg.optim.Adam(model.parameters(), lr=0.1)
    model(rg.tensor(x)).pow(2).sum().backward()
    opt.step()
    path = tmp_path / "ckpt.pt"
    rg.save({"model": model.state_dict(), "opt": opt.state_dict(), "epoch": 1}, path)
    ckpt = torch.load(path, weights_only=True)
    assert ckpt["epoch"] == 1 and ckpt["opt"]["param_groups"][0]["betas"] == (0.9, 0.999)
    tmodel = torch.nn.Linear(3, 2)
    tmodel.load_state_dict(ckpt["model"])
    topt = torch.optim.Adam(tmodel.parameters(), lr=0.1)
    topt.load_state_dict(ckpt["opt"])
    for _ in range(2):  # both continue from the same state to the same weights
        opt.zero_grad()
        topt.zero_grad()
        model(rg.tensor(x)).pow(2).sum().backward()
        tmodel(torch.tensor(x)).pow(2).sum().backward()
        opt.step()
        topt.step()
    np.testing.assert_allclose(model.weight.detach().numpy(), tmodel.weight.detach().numpy(), rtol=1e-5)
    # PyTorch's optimizer state read back by retrograd resumes as well
    path2 = tmp_path / "theirs.pt"
    torch.save({"model": tmodel.state_dict(), "opt": topt.state_dict()}, path2)
    back = rg.load(path2)
    assert back["opt"]["state"][0]["step"].item() == 3.0
    model2 = rg.nn.Linear(3, 2)
    model2.load_state_dict(back["model"])
    opt2 = rg.optim.Adam(model2.parameters(), lr=0.1)
    opt2.load_state_dict(back["opt"])
    model2(rg.tensor(x)).pow(2).sum().backward()
    topt.zero_grad()
    tmodel(torch.tensor(x)).pow(2).sum().backward()
    opt2.step()
    topt.step()
    np.testing.assert_allclose(model2.weight.detach().numpy(), tmodel.weight.detach().numpy(), rtol=1e-5)


def test_views_share_one_storage_retrograd_to_torch(torch: Any, tmp_path: Path) -> None:
    base = rg.arange(24, dtype=rg.float32).reshape(4, 6)
    views = {"base": base, "row": base[1], "cols": base[:, 1::2], "t": base.t(), "flat": base.view(-1)[5:9]}
    path = tmp_path / "views.pt"
    rg.save(views, path)
    with zipfile.ZipFile(path) as archive:
        assert sum(1 for n in archive.namelist() if "/data/" in n) == 1  # one storage, saved once
    loaded = torch.load(path, weights_only=True)
    for key, t in views.items():
        np.testing.assert_array_equal(loaded[key].numpy(), t.numpy())
        assert loaded[key].stride() == t.stride()
    assert loaded["cols"].storage_offset() == 1 and loaded["flat"].storage_offset() == 5
    loaded["cols"][0, 0] = -1.0  # a write through one view reaches the base and the others
    assert loaded["base"][0, 1].item() == -1.0 and loaded["t"][1, 0].item() == -1.0


def test_views_share_one_storage_torch_to_retrograd(torch: Any, tmp_path: Path) -> None:
    base = torch.arange(24, dtype=torch.float64).reshape(4, 6)
    views = {"base": base, "row": base[1], "cols": base[:, 1::2], "t": base.t(), "flat": base.view(-1)[5:9]}
    path = tmp_path / "views.pt"
    torch.save(views, path)
    loaded = rg.load(path)
    for key, t in views.items():
        np.testing.assert_array_equal(loaded[key].numpy(), t.numpy())
        assert loaded[key].stride() == t.stride()
    loaded["cols"][0, 0] = -1.0
    assert loaded["base"][0, 1].item() == -1.0 and loaded["t"][1, 0].item() == -1.0
    loaded["flat"].add_(100.0)
    assert loaded["base"][0, 5].item() == 105.0 and loaded["row"][0].item() == 106.0


def test_negative_stride_view_saves_as_a_copy(torch: Any, tmp_path: Path) -> None:
    base = rg.arange(5.0)
    path = tmp_path / "flip.pt"
    rg.save({"flip": base.flip(0), "base": base}, path)
    loaded = torch.load(path, weights_only=True)
    assert loaded["flip"].tolist() == [4.0, 3.0, 2.0, 1.0, 0.0] and loaded["base"].tolist() == base.tolist()


def test_parameters_and_requires_grad_both_ways(torch: Any, tmp_path: Path) -> None:
    path = tmp_path / "p.pt"
    leaf = rg.ones(2, requires_grad=True)
    rg.save({"p": rg.nn.Parameter(rg.tensor([1.0, 2.0])), "frozen": rg.nn.Parameter(rg.zeros(1), requires_grad=False),
             "leaf": leaf, "nonleaf": leaf * 3}, path)
    loaded = torch.load(path, weights_only=True)
    assert isinstance(loaded["p"], torch.nn.Parameter) and loaded["p"].requires_grad
    assert isinstance(loaded["frozen"], torch.nn.Parameter) and not loaded["frozen"].requires_grad
    assert loaded["leaf"].requires_grad and loaded["nonleaf"].requires_grad and loaded["nonleaf"].is_leaf
    torch.save(loaded, path)
    back = rg.load(path)
    assert isinstance(back["p"], rg.nn.Parameter) and back["p"].requires_grad and back["p"].tolist() == [1.0, 2.0]
    assert isinstance(back["frozen"], rg.nn.Parameter) and not back["frozen"].requires_grad
    assert back["leaf"].requires_grad and back["leaf"].is_leaf and back["nonleaf"].tolist() == [3.0, 3.0]


def test_python_containers_numbers_strings_both_ways(torch: Any, tmp_path: Path) -> None:
    obj = {"int": 3, "float": 2.5, "str": "héllo", "none": None, "bool": True, "list": [1, [2, (3, "x")]],
           "tuple": (1.5, None), "nested": {"a": {"b": [rg.tensor([1, 2])]}}, "dtype": rg.float16,
           "size": rg.Size([2, 3]), "big": 2**70, "neg": -7}
    path = tmp_path / "c.pt"
    rg.save(obj, path)
    theirs = torch.load(path, weights_only=True)
    assert theirs["dtype"] is torch.float16 and theirs["size"] == torch.Size([2, 3])
    assert isinstance(theirs["size"], torch.Size)
    assert {k: v for k, v in theirs.items() if k not in ("nested", "dtype", "size")} == \
           {k: v for k, v in obj.items() if k not in ("nested", "dtype", "size")}
    assert theirs["nested"]["a"]["b"][0].tolist() == [1, 2]
    torch.save(theirs, path)
    back = rg.load(path)
    assert back["dtype"] is rg.float16 and isinstance(back["size"], rg.Size) and back["size"] == (2, 3)
    assert back["list"] == [1, [2, (3, "x")]] and back["str"] == "héllo" and back["big"] == 2**70
    assert back["nested"]["a"]["b"][0].tolist() == [1, 2]


def test_written_archive_is_aligned_and_complete(tmp_path: Path) -> None:
    path = tmp_path / "a.pt"
    rg.save({"a": rg.ones(3), "b": rg.zeros(5, dtype=rg.int64)}, path)
    raw = path.read_bytes()
    with zipfile.ZipFile(path) as archive:
        names = archive.namelist()
        assert names[0] == "archive/data.pkl" and "archive/version" in names and "archive/byteorder" in names
        for info in archive.infolist():
            assert info.compress_type == zipfile.ZIP_STORED
            start = info.header_offset + 30 + len(info.filename) + int.from_bytes(raw[info.header_offset + 28:
                                                                                     info.header_offset + 30], "little")
            assert start % 64 == 0, info.filename
            assert raw[start:start + info.file_size] == archive.read(info.filename)


def test_file_objects_and_offsets(torch: Any) -> None:
    buffer = io.BytesIO()
    buffer.write(b"header")  # a checkpoint written after other data in the same file
    rg.save([rg.arange(4)], buffer)
    buffer.seek(6)
    assert rg.load(buffer)[0].tolist() == [0, 1, 2, 3]
    buffer2 = io.BytesIO()
    rg.save(rg.arange(3.0), buffer2)
    buffer2.seek(0)
    assert torch.load(buffer2, weights_only=True).tolist() == [0.0, 1.0, 2.0]


def test_unpicklable_object_writes_nothing(tmp_path: Path) -> None:
    path = tmp_path / "bad.pt"
    with pytest.raises((pickle.PicklingError, TypeError, AttributeError)):
        rg.save({"w": rg.ones(2), "f": lambda: 0}, path)
    assert not path.exists()


def test_legacy_retrograd_pickle_still_loads(tmp_path: Path) -> None:
    # The format retrograd wrote before: a plain pickle whose tensors carry NumPy arrays.
    model = rg.nn.Linear(2, 2)
    path = tmp_path / "old.pt"
    path.write_bytes(pickle.dumps({"model": model.state_dict(), "t": rg.arange(3, dtype=rg.int16)}))
    for weights_only in (True, False):
        loaded = rg.load(path, weights_only=weights_only)
        assert loaded["t"].dtype == rg.int16 and loaded["t"].tolist() == [0, 1, 2]
        assert rg.equal(loaded["model"]["weight"], model.weight.detach())


def test_safetensors_path_goes_to_the_safetensors_reader(tmp_path: Path) -> None:
    from retrograd.utils.safetensors import save_file

    path = tmp_path / "m.safetensors"
    save_file({"w": rg.arange(3.0)}, path)
    assert rg.load(path)["w"].tolist() == [0.0, 1.0, 2.0]


def test_python_attributes_saved_with_torch_tensors(torch: Any, tmp_path: Path) -> None:
    t = torch.ones(2)
    t.note = "hello"
    p = torch.nn.Parameter(torch.zeros(1))
    p.tag = 3
    path = tmp_path / "attrs.pt"
    torch.save({"t": t, "p": p}, path)
    loaded = rg.load(path)
    assert loaded["t"].note == "hello" and loaded["t"].tolist() == [1.0, 1.0]
    assert isinstance(loaded["p"], rg.nn.Parameter) and loaded["p"].tag == 3
    # an attribute that would overwrite retrograd's own tensor state is refused
    t._data = "not an array"
    torch.save({"t": t}, path)
    with pytest.raises(pickle.UnpicklingError, match="refusing to set attribute '_data'"):
        rg.load(path)
