"""viz.lifecycle: the four beats of a graph's life as data (capture_lifecycle) and as a drawing
(make_dot_lifecycle), and make_dot fading released nodes. The oracles are real PyTorch (which
nodes a backward releases, the gradients that flow), a plain retrograd backward run beside the
capture (the error text, the .grad values) and hand-counted bytes."""

from __future__ import annotations

import re
from typing import Any

import numpy as np
import pytest

import retrograd as rg
from retrograd.autograd.graph import is_released

pytest.importorskip("graphviz")

from retrograd.viz import capture_lifecycle, make_dot, make_dot_lifecycle  # noqa: E402
from retrograd.viz.lifecycle import preview  # noqa: E402

X = np.array([[0.5, -1.0, 2.0], [1.5, 0.2, -0.3], [-0.7, 0.9, 1.1], [0.1, 0.4, -2.0]], dtype=np.float32)
W1 = np.array([[0.3, -0.2, 0.5, 0.1, -0.4], [0.7, 0.6, -0.1, 0.2, 0.3], [-0.5, 0.4, 0.2, -0.3, 0.8]],
              dtype=np.float32)
B1 = np.array([0.1, -0.1, 0.05, 0.0, 0.2], dtype=np.float32)
W2 = np.array([[0.6], [-0.7], [0.2], [0.9], [-0.3]], dtype=np.float32)


def mlp(lib: Any) -> tuple[Any, dict[str, Any]]:
    """A two-layer MLP's forward (``mean((relu(x @ W1 + b1) @ W2) ** 2)``) and its parameters."""
    x = lib.tensor(X)
    params = {name: lib.tensor(v, requires_grad=True) for name, v in (("W1", W1), ("b1", B1), ("W2", W2))}

    def forward() -> Any:
        h = (x @ params["W1"] + params["b1"]).relu()
        return (h @ params["W2"]).pow(2).mean()

    return forward, params


def grads_of_one_backward(lib: Any) -> dict[str, np.ndarray]:
    forward, params = mlp(lib)
    forward().backward()
    return {k: np.array(v.grad.detach().numpy() if lib is not rg else v.grad.numpy()) for k, v in params.items()}


def test_beats_in_order_with_titles() -> None:
    forward, params = mlp(rg)
    beats = capture_lifecycle(forward, params=params)
    assert [(b.index, b.kind) for b in beats] == [(1, "forward"), (2, "backward"), (3, "second_backward"),
                                                  (4, "new_forward")]
    assert "graph built" in beats[0].title and "freed" in beats[1].title
    assert "RuntimeError" in beats[2].title and "fresh graph" in beats[3].title
    assert [b.retained for b in beats] == [True, False, False, True]


def test_beat1_graph_and_saved_bytes_hand_counted() -> None:
    forward, params = mlp(rg)
    one = capture_lifecycle(forward, params=params)[0]
    ops = sorted(n.op for n in one.nodes)
    assert ops == sorted(["MeanBackward0", "PowBackward0", "MmBackward0", "ReluBackward0", "AddBackward0",
                          "MmBackward0", "AccumulateGrad", "AccumulateGrad", "AccumulateGrad"])
    assert not any(n.released for n in one.nodes)
    # x @ W1 saves x (W1 needs it; x needs no grad so W1 is not saved): 4*3 floats; relu saves its
    # result and h @ W2 saves h, the same array (counted once): 4*5; and W2: 5*1; pow saves its
    # input: 4*1. float32: 4 bytes each.
    assert one.saved_bytes == 4 * (4 * 3 + 4 * 5 + 5 * 1 + 4 * 1)
    pow_node = next(n for n in one.nodes if n.op == "PowBackward0")
    assert [(s.name, s.shape, s.dtype, s.nbytes, s.freed) for s in pow_node.saved] == [
        ("self", (4, 1), "float32", 16, False)]
    assert pow_node.attrs == {"exponent": "2"}
    mm1 = next(n for n in one.nodes if n.op == "MmBackward0" and n.saved[0].shape == (4, 3))
    assert mm1.saved[0].preview == "[0.5, -1, 2, 1.5, …]"
    assert (mm1.shape, mm1.dtype) == ((4, 5), "float32")
    # x @ W1: x needs no gradient (no edge), W1 comes through its AccumulateGrad
    assert [(i.node is None, i.shape, i.dtype) for i in mm1.inputs] == [(True, None, None), (False, (3, 5), "float32")]
    assert one.node(mm1.inputs[1].node).leaf == one.leaf("W1").id
    mm2 = next(n for n in one.nodes if n.op == "MmBackward0" and n is not mm1)
    assert [(one.node(i.node).op, i.shape) for i in mm2.inputs] == [("ReluBackward0", (4, 5)), ("AccumulateGrad", (5, 1))]
    assert {leaf.name: (leaf.shape, leaf.grad) for leaf in one.leaves} == {
        "W1": ((3, 5), None), "b1": ((5,), None), "W2": ((5, 1), None)}
    assert one.output.value.shape == () and one.output.node == next(n.id for n in one.nodes if n.op == "MeanBackward0")
    # forward edges: each node's inputs, each leaf into its AccumulateGrad, the root into the output
    assert len(one.forward_edges) == 8 + 3 + 1 and one.gradient_edges == []


def test_beat2_released_nodes_match_torch(torch: Any) -> None:
    forward, params = mlp(rg)
    beats = capture_lifecycle(forward, params=params)
    two = beats[1]
    ours = sorted(n.op for n in two.nodes if n.released)
    # PyTorch: a node is released when reading its saved tensors raises after backward
    t_forward, _ = mlp(torch)
    loss = t_forward()
    loss.backward()
    theirs = []
    stack, seen = [loss.grad_fn], set()
    while stack:
        fn = stack.pop()
        if fn in seen:
            continue
        seen.add(fn)
        names = [a for a in dir(fn) if a.startswith("_saved_")]
        freed = False
        for a in names:
            try:
                getattr(fn, a)
            except RuntimeError:
                freed = True
        if freed:
            theirs.append(type(fn).__name__)
        stack.extend(n for n, _ in fn.next_functions if n is not None)
    assert ours == sorted(theirs) == ["MmBackward0", "MmBackward0", "PowBackward0", "ReluBackward0"]
    assert two.saved_bytes == 0 and two.freed_bytes == beats[0].saved_bytes
    assert all(s.freed and s.preview == "" for n in two.nodes for s in n.saved)


def test_beat2_grads_equal_backward_and_torch(torch: Any) -> None:
    forward, params = mlp(rg)
    beats = capture_lifecycle(forward, params=params)
    two = beats[1]
    expected = grads_of_one_backward(rg)
    theirs = grads_of_one_backward(torch)
    for name in ("W1", "b1", "W2"):
        leaf = two.leaf(name)
        assert leaf.grad is not None
        assert leaf.grad.norm == pytest.approx(float(np.linalg.norm(expected[name])), rel=1e-6)
        assert leaf.grad.norm == pytest.approx(float(np.linalg.norm(theirs[name])), rel=1e-5)
        # the gradient that flowed into the AccumulateGrad is the one .grad received
        assert two.node(leaf.node).grad[0].norm == pytest.approx(leaf.grad.norm)
    # a gradient through the middle of the graph: the one flowing into relu's node is relu's
    # output gradient, as PyTorch's retain_grad shows it
    x = torch.tensor(X)
    tp = {k: torch.tensor(v, requires_grad=True) for k, v in (("W1", W1), ("b1", B1), ("W2", W2))}
    h = (x @ tp["W1"] + tp["b1"]).relu()
    h.retain_grad()
    (h @ tp["W2"]).pow(2).mean().backward()
    relu = next(n for n in two.nodes if n.op == "ReluBackward0")
    assert relu.grad[0].shape == (4, 5)
    assert relu.grad[0].norm == pytest.approx(float(h.grad.norm()), rel=1e-5)
    root = two.node(two.output.node)
    assert root.grad[0].preview == "1"  # backward's seed
    # gradient edges go backward: output -> root ... -> AccumulateGrad -> leaf, each with its gradient
    edges = {(e.src, e.dst): e for e in two.gradient_edges}
    assert (two.output.id, root.id) in edges
    w2 = two.leaf("W2")
    assert edges[(w2.node, w2.id)].grad.norm == pytest.approx(w2.grad.norm)
    assert all(e.kind == "gradient" and e.grad is not None for e in two.gradient_edges)
    assert len(two.gradient_edges) == len(two.forward_edges)  # every edge carried a gradient here


def test_beat3_error_is_the_real_error(torch: Any) -> None:
    forward, params = mlp(rg)
    beats = capture_lifecycle(forward, params=params)
    three = beats[2]
    loss = mlp(rg)[0]()
    loss.backward()
    with pytest.raises(RuntimeError) as real:
        loss.backward()
    # the same message; its last sentence names where each graph's first backward ran
    assert three.error.split(" [retrograd] ")[0] == str(real.value).split(" [retrograd] ")[0]
    assert "test_lifecycle.py:154" in three.error and "test_lifecycle.py:157" in str(real.value)
    t_loss = mlp(torch)[0]()
    t_loss.backward()
    with pytest.raises(RuntimeError) as theirs:
        t_loss.backward()
    assert str(theirs.value).split(".")[0] == three.error.split(".")[0]
    # mean saved nothing and ran; pow needed its saved input and raised
    assert three.node(three.error_node).op == "PowBackward0"
    assert three.node(three.output.node).grad is not None
    assert [(e.src, e.dst) for e in three.gradient_edges] == [(three.output.id, three.output.node),
                                                             (three.output.node, three.error_node)]
    # the failed pass changed no .grad
    assert [leaf.grad for leaf in three.leaves] == [leaf.grad for leaf in beats[1].leaves]


def test_beat3_failing_pass_still_reaches_some_leaves(torch: Any) -> None:
    # the root's other branch (a.sum(), recorded last, so run first) saved nothing: a's gradient
    # is accumulated again before exp's freed tensor stops the pass, in PyTorch as here
    def run(lib: Any) -> tuple[Any, Any, Any]:
        a = lib.tensor([1.0, 2.0], requires_grad=True)
        b = lib.tensor([1.0, 2.0], requires_grad=True)
        return a, b, b.exp().sum() + a.sum()

    ta, tb, t_loss = run(torch)
    t_loss.backward()
    with pytest.raises(RuntimeError):
        t_loss.backward()
    a, b, loss = run(rg)
    beats = capture_lifecycle(loss, params={"a": a, "b": b})
    three = beats[2]
    assert three.error is not None and three.node(three.error_node).op == "ExpBackward0"
    assert three.leaf("a").grad.preview == preview(ta.grad.numpy()) == "[2, 2]"
    assert three.leaf("b").grad == beats[1].leaf("b").grad
    assert three.leaf("b").grad.norm == pytest.approx(float(tb.grad.norm()))
    assert "a reached before the error" in three.note


def test_beat4_fresh_graph_and_accumulated_grads() -> None:
    forward, params = mlp(rg)
    beats = capture_lifecycle(forward, params=params)
    one, two, four = beats[0], beats[1], beats[3]
    # a new graph; only the leaves' AccumulateGrad nodes are the same objects (a leaf's accumulator
    # is shared by the live graphs that use it, as in PyTorch, and the first graph is still alive)
    fresh = {n.id for n in four.nodes if n.op != "AccumulateGrad"}
    assert len(fresh) == 6 and fresh.isdisjoint(n.id for n in one.nodes)
    assert {n.id for n in four.nodes if n.op == "AccumulateGrad"} == {n.id for n in one.nodes if n.op == "AccumulateGrad"}
    assert [n.op for n in four.nodes] == [n.op for n in one.nodes]
    assert not any(n.released for n in four.nodes) and four.saved_bytes == one.saved_bytes
    assert [leaf.id for leaf in four.leaves] == [leaf.id for leaf in two.leaves]  # the same leaves
    once = grads_of_one_backward(rg)
    for name, p in params.items():
        leaf = four.leaf(name)
        assert leaf.grad == two.leaf(name).grad  # kept from beat 2
        assert leaf.grad_accumulated.norm == pytest.approx(2 * leaf.grad.norm, rel=1e-6)
        np.testing.assert_allclose(p.grad.numpy(), 2 * once[name], rtol=1e-6)  # the leaves really hold 2x


def test_retain_graph_variant() -> None:
    forward, params = mlp(rg)
    beats = capture_lifecycle(forward, params=params, retain_graph=True)
    one, two, three, four = beats
    assert two.retained and "graph kept" in two.title and "freed" not in two.title
    assert not any(n.released for n in two.nodes) and two.saved_bytes == one.saved_bytes
    assert three.error is None and three.error_node is None and "runs" in three.title
    for name in params:
        assert three.leaf(name).grad.norm == pytest.approx(2 * two.leaf(name).grad.norm, rel=1e-6)
        assert four.leaf(name).grad_accumulated.norm == pytest.approx(3 * two.leaf(name).grad.norm, rel=1e-6)
    assert len(three.gradient_edges) == len(two.gradient_edges)


def test_hooks_are_gone_afterwards() -> None:
    w = rg.tensor([1.0, 2.0], requires_grad=True)
    loss = (w.exp() * w).sum()
    mine = loss.grad_fn.register_hook(lambda gi, go: None)
    beats = capture_lifecycle(loss, params={"w": w}, retain_graph=True)
    assert len(beats) == 3  # a loss tensor: no new forward, no beat 4
    nodes, stack = [], [loss.grad_fn]
    while stack:
        fn = stack.pop()
        nodes.append(fn)
        stack.extend(n for n, _ in fn.next_functions if n is not None)
    for fn in nodes:
        assert not fn._pre_hooks
        assert (fn._post_hooks or []) == ([mine._hook] if fn is loss.grad_fn else [])
    assert "_hooked" not in vars(nodes[1]) and not nodes[1]._hooked
    mine.remove()


def test_hooks_are_gone_when_backward_raises() -> None:
    w = rg.tensor([1.0, 2.0], requires_grad=True)
    loss = w.exp()  # not a scalar, and no gradient given: beat 2's backward raises
    with pytest.raises(RuntimeError, match="grad can be implicitly created only for scalar outputs"):
        capture_lifecycle(loss)
    assert not loss.grad_fn._pre_hooks and not loss.grad_fn._post_hooks and "_hooked" not in vars(loss.grad_fn)
    beats = capture_lifecycle(loss, gradient=rg.ones(2))  # with a gradient it runs
    assert beats[1].leaves[0].grad.preview == "[2.718, 7.389]"


def test_beats_keep_no_graph_alive() -> None:
    import gc
    import weakref

    forward, params = mlp(rg)
    loss = forward()
    root = weakref.ref(loss.grad_fn)
    beats = capture_lifecycle(loss, params=params, retain_graph=True)  # a kept graph, saved tensors and all
    del loss
    gc.collect()
    assert root() is None and len(beats) == 3


def test_graph_with_nothing_saved_runs_twice() -> None:
    w = rg.tensor([1.0, 2.0], requires_grad=True)
    beats = capture_lifecycle(lambda: (w + 1).sum())
    assert beats[0].saved_bytes == 0 and not any(n.released for n in beats[1].nodes)
    assert beats[2].error is None and "nothing" in beats[2].title
    assert beats[2].leaves[0].grad.preview == "[2, 2]"


def test_bad_arguments() -> None:
    with pytest.raises(TypeError, match="forward must be"):
        capture_lifecycle(42)  # type: ignore[arg-type]
    with pytest.raises(RuntimeError, match="must be a tensor with a grad_fn"):
        capture_lifecycle(lambda: rg.ones(2).sum())
    with pytest.raises(TypeError, match="params must map names to tensors"):
        capture_lifecycle(lambda: rg.ones(1, requires_grad=True).sum(), params={"w": 1.0})


# -- the drawing ----------------------------------------------------------------------------------


def clusters(source: str) -> dict[str, str]:
    parts = re.split(r"subgraph (cluster_\w+)", source)
    return dict(zip(parts[1::2], parts[2::2], strict=True))


def statements(body: str, pattern: str) -> list[str]:
    return [line for line in body.splitlines() if re.search(pattern, line)]


def test_drawing_styles() -> None:
    forward, params = mlp(rg)
    src = make_dot_lifecycle(forward, params=params).source
    parts = clusters(src)
    assert list(parts) == ["cluster_legend", "cluster_a", "cluster_b", "cluster_c", "cluster_d"]
    legend = parts["cluster_legend"]
    assert "gradient flow (dashed)" in legend and "forward edge (solid)" in legend
    b = parts["cluster_b"]
    gradient = statements(b, r"->.*dir=back")
    assert len(gradient) == 12 and all("style=dashed" in e for e in gradient)  # dashed, every one
    forward_edges = statements(b, r"->.*color=grey25")
    assert len(forward_edges) == 12 and not any("dashed" in e for e in forward_edges)  # solid
    faded = statements(b, r'fillcolor=grey92.*style="filled,dashed"')
    released_ops = [re.search(r"label=(\w+)", line).group(1) for line in faded if "[freed]" not in line]
    assert sorted(released_ops) == ["MmBackward0", "MmBackward0", "PowBackward0", "ReluBackward0"]
    assert len(statements(b, r"\[freed\]")) == 5
    assert "fillcolor=orange" in parts["cluster_a"] and "fillcolor=orange" not in b
    assert "dashed" not in parts["cluster_a"].replace("dir=back", "")  # nothing released, no backward yet
    # beat 3: the error, wrapped, on the node that raised it (drawn with a red border)
    c = parts["cluster_c"]
    assert "RuntimeError: Trying to backward through the graph a second" in c.replace("\n", " ")
    assert len(statements(c, r"label=PowBackward0.*color=red3")) == 1
    # beat 4: the fresh graph, nothing released, the leaves' .grad kept and accumulated
    d = parts["cluster_d"]
    assert "grey92" not in d and "dir=back" not in d and "after its backward" in d


def test_drawing_retain_graph() -> None:
    forward, params = mlp(rg)
    src = make_dot_lifecycle(forward, params=params, retain_graph=True).source
    parts = clusters(src)
    assert "graph kept" in parts["cluster_b"] and "[freed]" not in src
    assert "RuntimeError" not in src and "accumulates (2×)" in parts["cluster_c"]
    assert len(statements(parts["cluster_c"], r"->.*dir=back.*style=dashed")) == 12


def test_loss_tensor_with_and_without_forward() -> None:
    forward, params = mlp(rg)
    three = clusters(make_dot_lifecycle(forward(), params=params).source)
    assert "pass forward=" in three["cluster_d"]
    forward, params = mlp(rg)
    four = clusters(make_dot_lifecycle(forward(), params=params, forward=forward).source)
    assert "pass forward=" not in four["cluster_d"] and "AccumulateGrad" in four["cluster_d"]
    assert params["W2"].grad.norm().item() == pytest.approx(2 * np.linalg.norm(grads_of_one_backward(rg)["W2"]),
                                                            rel=1e-6)


def test_make_dot_after_backward_fades_released_nodes() -> None:
    x = rg.tensor([1.0, 2.0], requires_grad=True)
    z = (x.exp() + 1).sum()
    before = make_dot(z).source
    assert "dashed" not in before
    z.backward()
    after = make_dot(z).source
    faded = statements(after, r'style="filled,dashed"')
    assert len(faded) == 1 and "label=ExpBackward0" in faded[0] and "fillcolor=grey92" in faded[0]
    assert all(is_released(fn) == (type(fn).__name__ == "ExpBackward0")
               for fn in (z.grad_fn, z.grad_fn.next_functions[0][0]))
