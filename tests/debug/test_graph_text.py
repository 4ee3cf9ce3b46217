"""retrograd.debug.print_graph: the key facts of the text (not its exact wording): each node once,
shared subgraphs referenced, chains collapsed with the right count, released flags, leaves
with names and .grad, bytes as NumPy counts them, and a million-node graph in one pass."""

from __future__ import annotations

import io
import re
import sys
import time
from typing import Any

import pytest

import retrograd as rg
from retrograd.debug import memory_report, print_graph


def quiet(root: Any, **kwargs: Any) -> str:
    out = io.StringIO()
    text = print_graph(root, file=out, **kwargs)
    assert out.getvalue() == text + "\n"
    return text


def node_lines(text: str) -> dict[int, str]:
    """``#number -> line`` for every node line (not the references)."""
    lines = {}
    for line in text.splitlines():
        m = re.match(r"^[│├└─ ]*(#([\d,]+) \w+.*)", line)
        if m:
            lines[int(m.group(2).replace(",", ""))] = m.group(1)
    return lines


def chain(n: int, x: Any) -> Any:
    y = x
    for _ in range(n):
        y = y * 1.0
    return y.sum()


def test_each_node_once_and_a_shared_subgraph_referenced() -> None:
    x = rg.randn(3, requires_grad=True)
    h = (x * x).exp()  # shared: read by sin and cos
    loss = (h.sin() + h.cos()).sum()
    text = quiet(loss, params={"x": x})
    assert text.count("ExpBackward0 →") == 1 and text.count("MulBackward0 →") == 1
    assert text.count("AccumulateGrad ·") == 1  # x is used twice by mul: one leaf node
    (exp_number,) = [n for n, line in node_lines(text).items() if "ExpBackward0 →" in line]
    assert re.search(rf"→ see #{exp_number} ExpBackward0", text)
    # every node of the graph is printed, numbered 1..n in order
    numbers = [int(n) for n in re.findall(r"^[│├└─ ]*#(\d+) ", text, re.M)]
    assert numbers == list(range(1, 8))  # sum, add, sin, exp, mul, x, cos


@pytest.mark.parametrize("n", [9, 50, 10_000])
def test_a_long_chain_is_collapsed_with_the_right_count(n: int) -> None:
    x = rg.ones(3, requires_grad=True)
    text = quiet(chain(n, x), params={"x": x})
    (hidden,) = [int(c.replace(",", "")) for c in re.findall(r"… ([\d,]+) × MulBackward0 …", text)]
    shown = text.count("MulBackward0 →")
    assert shown + hidden == n and shown <= 5
    assert f"#{n + 2:,} AccumulateGrad" in text and "leaf x" in text  # numbering counts hidden nodes
    if n == 10_000:
        assert "… 9,996 × MulBackward0 …" in text
        chain_loss = chain(n, x)
        chain_loss.backward()
        assert "… 9,996 × MulBackward0 … (all released)" in quiet(chain_loss)


def test_short_chain_is_not_collapsed_and_collapse_can_be_switched_off() -> None:
    x = rg.ones(3, requires_grad=True)
    assert quiet(chain(6, x)).count("MulBackward0 →") == 6
    assert quiet(chain(40, x), collapse=0).count("MulBackward0 →") == 40


def test_a_mixed_chain_reading_a_shared_leaf_is_collapsed_with_its_references() -> None:
    x = rg.ones(3, requires_grad=True)
    w = rg.ones(3, requires_grad=True)
    y = x
    for _ in range(100):
        y = (y * w).tanh()
    text = quiet(y.sum(), params={"x": x, "w": w})
    m = re.search(r"… ([\d,]+) nodes: ([\d,]+) × (\w+), ([\d,]+) × (\w+) ….*each also reads #(\d+)", text)
    assert m is not None, text
    counts = {m.group(3): int(m.group(2)), m.group(5): int(m.group(4))}
    assert set(counts) == {"MulBackward0", "TanhBackward0"}
    assert sum(counts.values()) == int(m.group(1))
    assert text.count("MulBackward0 →") + counts["MulBackward0"] == 100
    assert text.count("TanhBackward0 →") + counts["TanhBackward0"] == 100
    w_number = int(m.group(6))
    assert f"#{w_number} AccumulateGrad · leaf w" in text


def test_released_after_backward_and_not_with_retain_graph() -> None:
    w = rg.randn(4, requires_grad=True)
    loss = (w.exp() * w).sum()
    assert "released" not in quiet(loss)
    loss.backward(retain_graph=True)
    assert "released" not in quiet(loss)
    loss.backward()
    text = quiet(loss)
    assert text.count("saved tensors released") == 2  # exp and mul; sum saved no tensor
    assert ".grad (4,) float32" in text


def test_saved_tensors_shapes_dtypes_and_bytes() -> None:
    x = rg.randn(10, 10, dtype=rg.float64, requires_grad=True)
    w = rg.randn(10, 5, dtype=rg.float64, requires_grad=True)
    text = quiet((x @ w).relu().sum(), params=dict(x=x, w=w))
    mm = next(line for line in text.splitlines() if "MmBackward0" in line)
    assert f"self=x (10, 10) float64 {x._data.nbytes} B" in mm and f"mat2=w (10, 5) float64 {w._data.nbytes} B" in mm
    assert "→ (10, 5) float64" in mm
    relu = next(line for line in text.splitlines() if "ReluBackward0" in line)
    assert "result=(10, 5) float64 400 B" in relu
    assert "leaf x (10, 10) float64 · .grad None" in text


def test_names_from_named_parameters_and_numbers_shared_with_memory_report() -> None:
    model = rg.nn.Sequential(rg.nn.Linear(4, 3), rg.nn.Tanh(), rg.nn.Linear(3, 2))
    loss = model(rg.randn(5, 4)).sum()
    text = quiet(loss, params=model.named_parameters())
    for name in ("0.weight", "0.bias", "2.weight", "2.bias"):
        assert f"leaf {name} " in text
    lines = node_lines(text)
    for entry in memory_report(loss).nodes:
        assert f"#{entry.number} {entry.name} " in lines[entry.number]


def test_roots_a_node_a_list_and_tensors_without_graph() -> None:
    x = rg.ones(2, requires_grad=True)
    y = x * 3
    assert quiet(y.grad_fn).startswith("#1 MulBackward0")
    both = quiet([y, y.exp()])
    assert both.count("MulBackward0 →") == 1 and "→ see #1 MulBackward0" in both
    assert "no graph" in quiet(x) and "leaf" in quiet(x)
    assert "does not require grad" in quiet(rg.ones(2))
    with pytest.raises(TypeError):
        quiet(3.0)


def test_max_lines_cuts_the_output() -> None:
    x = rg.ones(2, requires_grad=True)
    loss = sum((x * float(i)).sum() for i in range(50))  # wide: nothing to collapse
    text = quiet(loss, max_lines=20)
    assert len(text.splitlines()) == 21 and "max_lines=None" in text.splitlines()[-1]
    assert len(quiet(loss, max_lines=None).splitlines()) > 100


def test_deep_branching_graph_does_not_recurse_and_indentation_is_bounded() -> None:
    x = rg.ones(2, requires_grad=True)
    y = x
    depth = sys.getrecursionlimit() + 500
    for _ in range(depth):
        y = y * 0.5 + y.sin()  # two inputs of which neither is printed yet: a branch per level
    text = quiet(y.sum(), max_lines=None)
    assert text.count("AddBackward0 →") == depth and text.count("SinBackward0 →") == depth
    assert max(len(line) for line in text.splitlines()) < 250


@pytest.mark.slow
def test_a_million_node_chain_prints_in_seconds() -> None:
    x = rg.ones(3, requires_grad=True)
    loss = chain(1_000_000, x)
    start = time.process_time()  # CPU time: other processes on a busy machine do not count
    text = quiet(loss, params={"x": x})
    elapsed = time.process_time() - start
    assert "… 999,996 × MulBackward0 …" in text and "#1,000,002 AccumulateGrad · leaf x" in text
    assert len(text.splitlines()) == 7
    assert elapsed < 10.0, elapsed


def test_several_outputs_and_packed_values_are_described() -> None:
    x = rg.randn(4, 5, dtype=rg.float64, requires_grad=True)
    values, _ = x.max(1)
    text = quiet(values.sum())
    assert "MaxBackward0 → (4,) float64, (4,) int64" in text and "result1=(4,) int64 32 B" in text
    unpacked: list[int] = []
    with rg.autograd.graph.saved_tensors_hooks(lambda t: (t.detach(),), lambda p: unpacked.append(1) or p[0]):
        loss = x.exp().sum()
    assert "result=packed[(4, 5) float64 160 B]" in quiet(loss) and not unpacked


def test_the_debug_tools_load_only_when_used() -> None:
    import subprocess

    code = ("import sys, retrograd, retrograd.debug; "
            "assert not any(m.startswith('retrograd.debug.') for m in sys.modules), sorted(sys.modules); "
            "retrograd.debug.print_graph; assert 'retrograd.debug.graph_text' in sys.modules; "
            "assert 'retrograd.debug.memory' not in sys.modules")
    subprocess.run([sys.executable, "-c", code], check=True)
