"""save/load round trips: tensors keep values, dtype and requires_grad; modules and optimizers resume."""

from __future__ import annotations

from pathlib import Path

import retrograd as rg


def test_tensor_and_state_dict_round_trip(tmp_path: Path) -> None:
    model = rg.nn.Linear(3, 2)
    opt = rg.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    model(rg.ones(4, 3)).sum().backward()
    opt.step()
    path = tmp_path / "checkpoint.pt"
    rg.save({"model": model.state_dict(), "opt": opt.state_dict(), "t": rg.arange(3, dtype=rg.float64)}, path)
    loaded = rg.load(path)
    clone = rg.nn.Linear(3, 2)
    clone.load_state_dict(loaded["model"])
    assert rg.equal(clone.weight, model.weight) and clone.weight.requires_grad
    opt2 = rg.optim.SGD(clone.parameters(), lr=0.1, momentum=0.9)
    opt2.load_state_dict(loaded["opt"])
    assert loaded["t"].dtype == rg.float64 and loaded["t"].tolist() == [0.0, 1.0, 2.0]


def test_every_dtype_pickles_to_itself() -> None:
    import pickle

    for d in rg._dtype.ALL_DTYPES:
        assert pickle.loads(pickle.dumps(d)) is d
