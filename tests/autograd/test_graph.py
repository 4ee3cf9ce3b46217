"""The graph: node names, next_functions, AccumulateGrad, saved tensors, no reference cycles."""

from __future__ import annotations

import gc
import inspect
import re
import weakref

import numpy as np
import pytest

import retrograd as rg


def _walk(node: object) -> list[str]:
    names, stack, seen = [], [node], set()
    while stack:
        n = stack.pop()
        if n is None or id(n) in seen:
            continue
        seen.add(id(n))
        names.append(type(n).__name__)
        stack.extend(child for child, _ in getattr(n, "next_functions", ()))
    return names


def test_seed_chain_next_functions(torch: object) -> None:
    def build(lib: object) -> object:
        x = lib.tensor([1.0, 2.0], requires_grad=True)  # type: ignore[attr-defined]
        w = lib.tensor([3.0, 4.0], requires_grad=True)  # type: ignore[attr-defined]
        b = lib.tensor([0.5, 0.5])  # type: ignore[attr-defined]
        return (x * w + b).sum()

    ours, theirs = build(rg), build(torch)
    assert _walk(ours.grad_fn) == _walk(theirs.grad_fn)  # type: ignore[attr-defined]
    add = ours.grad_fn.next_functions[0][0]  # type: ignore[attr-defined]
    assert [None if n is None else n.name() for n, _ in add.next_functions] == ["MulBackward0", None]


def test_accumulate_grad_is_shared_per_leaf_and_points_to_it() -> None:
    x = rg.ones(2, requires_grad=True)
    y = x * x
    a, b = y.grad_fn.next_functions
    assert a[0] is b[0]
    assert type(a[0]).__name__ == "AccumulateGrad"
    assert a[0].variable is x
    assert a[0].next_functions == ()


def test_node_repr_name_metadata() -> None:
    y = rg.ones(2, requires_grad=True).exp()
    assert re.fullmatch(r"<ExpBackward0 object at 0x[0-9a-f]+>", repr(y.grad_fn))
    assert y.grad_fn.name() == "ExpBackward0"
    y.grad_fn.metadata["note"] = 1
    assert y.grad_fn.metadata == {"note": 1}


def test_untracked_inputs_are_none_edges() -> None:
    x = rg.ones(2, requires_grad=True)
    y = rg.ones(2) * x
    assert y.grad_fn.next_functions[0] == (None, 0)


def test_multi_output_node_input_nr() -> None:
    x = rg.arange(6.0).reshape(3, 2).requires_grad_()
    a, b, c = x.unbind(0)
    assert a.grad_fn is b.grad_fn is c.grad_fn
    assert (c * 2).grad_fn.next_functions[0][1] == 2


def test_saving_own_output_makes_no_reference_cycle() -> None:
    gc.collect()
    gc.disable()
    try:
        x = rg.ones(3, requires_grad=True)
        y = x.exp()  # ExpBackward0 saves its output
        node_ref = weakref.ref(y.grad_fn)
        del y
        assert node_ref() is None  # freed by reference counting alone
    finally:
        gc.enable()


def test_leaf_and_accumulator_form_no_cycle() -> None:
    gc.disable()
    try:
        x = rg.ones(3, requires_grad=True)
        acc = (x * 2).grad_fn.next_functions[0][0]
        acc_ref, x_ref = weakref.ref(acc), weakref.ref(x)
        del acc, x
        assert acc_ref() is None and x_ref() is None
    finally:
        gc.enable()


def test_node_hooks_and_prehooks() -> None:
    x = rg.tensor([1.0, 2.0], requires_grad=True)
    y = x * 3
    calls: list[str] = []
    y.grad_fn.register_prehook(lambda grads: calls.append("pre") or (grads[0] * 2,))
    handle = y.grad_fn.register_hook(lambda gin, gout: calls.append("post"))
    y.sum().backward(retain_graph=True)
    assert calls == ["pre", "post"] and x.grad.tolist() == [6.0, 6.0]
    handle.remove()
    y.sum().backward()
    assert calls == ["pre", "post", "pre"]


def test_saved_tensor_version_error_names_the_call_site() -> None:
    x = rg.tensor([1.0, 2.0, 3.0], requires_grad=True)
    e = x.exp()
    write_line = inspect.currentframe().f_lineno + 1  # type: ignore[union-attr]
    e.mul_(2)  # the write the message must point at
    with pytest.raises(RuntimeError) as info:
        e.sum().backward()
    message = str(info.value)
    assert message.startswith(
        "one of the variables needed for gradient computation has been modified by an inplace operation: "
        "[torch.FloatTensor [3]], which is output 0 of Exp, is at version 1; expected version 0 instead."
    )
    assert f"mul_ at {__file__}:{write_line}" in message


def test_freed_graph_error_and_retain_graph() -> None:
    w = rg.tensor([1.0, -2.0], requires_grad=True)
    loss = (w * w).exp().sum()
    loss.backward(retain_graph=True)
    loss.backward()
    assert np.allclose(w.grad.numpy(), 2 * 2 * w.detach().numpy() * np.exp(w.detach().numpy() ** 2))
    with pytest.raises(RuntimeError, match="Trying to backward through the graph a second time"):
        loss.backward()


def test_graph_without_saved_tensors_can_run_twice() -> None:
    x = rg.ones(2, requires_grad=True)
    y = (x + 1).sum()
    y.backward()
    y.backward()  # nothing was saved, so nothing was freed (as in PyTorch)
    assert x.grad.tolist() == [2.0, 2.0]


def test_an_ops_node_class_is_made_once_even_when_threads_race() -> None:
    import threading

    from retrograd.ops.op import Op

    cube = Op("cube", lambda x: x ** 3, node="CubeBackward0", grads=(lambda grad, self: grad * 3 * self * self,))
    start = threading.Barrier(8)
    classes: list[type] = []

    def use() -> None:
        start.wait()
        y = cube(rg.tensor([2.0], requires_grad=True))
        classes.append(type(y.grad_fn))

    threads = [threading.Thread(target=use) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(classes) == 8 and len(set(classes)) == 1 and classes[0].__name__ == "CubeBackward0"
    x = rg.tensor([2.0], requires_grad=True)
    cube(x).backward()
    assert x.grad.tolist() == [12.0] and type(cube(x).grad_fn) is classes[0]
