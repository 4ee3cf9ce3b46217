"""custom `autograd.Function` semantics and graph nodes, as PyTorch's test_autograd.py exercises them.

Each scenario runs against retrograd and real PyTorch
what it returns (values, types, names)
or raises (exception type and message) must agree.
"""

from __future__ import annotations

from typing import Any

import pytest

import retrograd
from scenarios import L, outcome, run


def f_dirty_view_of_leaf(torch):
    class F(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.mark_dirty(x)
            return x.mul_(2)
        @staticmethod
        def backward(ctx, g): return g * 2
    a = torch.ones(3, requires_grad=True)
    b = a[:2]
    return F.apply(b)

def f_dirty_view_nonleaf(torch):
    class F(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.mark_dirty(x)
            return x.mul_(2)
        @staticmethod
        def backward(ctx, g): return g * 2
    a = torch.ones(3, requires_grad=True)
    c = a.clone()
    b = c[:2]
    y = F.apply(b)
    c.sum().backward()
    return L(a.grad), type(c.grad_fn).__name__, type(y.grad_fn).__name__, y is b

def f_dirty_transposed_view(torch):
    class F(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.mark_dirty(x)
            return x.mul_(3)
        @staticmethod
        def backward(ctx, g): return g * 3
    a = torch.arange(6.).reshape(2, 3).requires_grad_()
    c = a * 1
    b = c.t()
    F.apply(b)
    (c * torch.arange(6.).reshape(2,3)).sum().backward()
    return L(a.grad), L(c)

def f_dirty_not_returned(torch):
    class F(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.mark_dirty(x)
            x.mul_(2)
            return x.clone()
        @staticmethod
        def backward(ctx, g): return g
    a = torch.ones(3, requires_grad=True).clone()
    return F.apply(a)

def f_dirty_leaf(torch):
    class F(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.mark_dirty(x)
            return x.mul_(2)
        @staticmethod
        def backward(ctx, g): return g
    a = torch.ones(3, requires_grad=True)
    return F.apply(a)

def f_return_view_no_grad(torch):
    class F(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            with torch.no_grad():
                return x.view(-1)
        @staticmethod
        def backward(ctx, g): return g.view(2, 2)
    a = torch.ones(2, 2, requires_grad=True)
    y = F.apply(a.clone())
    y.mul_(2)
    y.sum().backward()
    return L(a.grad), y._base is not None

def f_return_view_of_input(torch):
    class F(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x[0]
        @staticmethod
        def backward(ctx, g):
            r = torch.zeros(2, 2)
            r[0] = g
            return r
    a = torch.ones(2, 2, requires_grad=True)
    b = a.clone()
    y = F.apply(b)
    y.mul_(2)
    b.sum().backward()
    return L(a.grad), type(y.grad_fn).__name__, y._base is b

def f_view_of_intermediate(torch):
    class F(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            t = x * 2
            return t, t[0]
        @staticmethod
        def backward(ctx, g1, g2):
            return g1 * 2 + torch.stack([g2 * 2, torch.zeros_like(g2)])
    a = torch.ones(2, 2, requires_grad=True)
    o1, o2 = F.apply(a)
    (o1.sum() + o2.sum()).backward()
    r = [L(a.grad), o2._base is o1]
    o2.mul_(2)
    return r

def f_nontensor_io(torch):
    class F(torch.autograd.Function):
        @staticmethod
        def forward(ctx, a, s, b, t):
            ctx.s = s
            return a * s + b, "str", 3, None
        @staticmethod
        def backward(ctx, g, g2, g3, g4):
            return g * ctx.s, None, g, None
    a = torch.ones(2, requires_grad=True)
    b = torch.ones(2, requires_grad=True)
    y, st, i, n = F.apply(a, 3.0, b, None)
    y.sum().backward()
    return L(a.grad), L(b.grad), st, i, n

def f_materialize_false(torch):
    seen = []
    class F(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.set_materialize_grads(False)
            return x.clone(), x.clone()
        @staticmethod
        def backward(ctx, g1, g2):
            seen.append((g1 is None, g2 is None))
            return g1 * 1 if g1 is not None else torch.zeros(2)
    a = torch.ones(2, requires_grad=True)
    y1, y2 = F.apply(a)
    y1.sum().backward()
    return seen, L(a.grad)

def f_materialize_true(torch):
    seen = []
    class F(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x.clone(), x.clone()
        @staticmethod
        def backward(ctx, g1, g2):
            seen.append((L(g1), L(g2)))
            return g1 + g2
    a = torch.ones(2, requires_grad=True)
    y1, y2 = F.apply(a)
    y1.sum().backward()
    return seen, L(a.grad)

def f_once_diff(torch):
    class F(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x ** 2
        @staticmethod
        @torch.autograd.function.once_differentiable
        def backward(ctx, g):
            x, = ctx.saved_tensors
            return 2 * x * g
    a = torch.tensor([3.0], requires_grad=True)
    y = F.apply(a)
    g, = torch.autograd.grad(y, a, create_graph=True)
    r = [L(g), g.requires_grad, type(g.grad_fn).__name__]
    try:
        g.sum().backward()
    except Exception as e:
        r.append((type(e).__name__, str(e)))
    return r

def f_setup_context(torch):
    class F(torch.autograd.Function):
        @staticmethod
        def forward(x, y=2.0):
            return x * y
        @staticmethod
        def setup_context(ctx, inputs, output):
            ctx.inputs = len(inputs)
            x, y = inputs
            ctx.y = y
        @staticmethod
        def backward(ctx, g):
            return g * ctx.y, None
    a = torch.ones(2, requires_grad=True)
    y = F.apply(a)
    y.sum().backward()
    return L(a.grad), y.grad_fn.inputs

def f_setup_context_two(torch):
    class F(torch.autograd.Function):
        @staticmethod
        def forward(x, y):
            return x * y, x + y
        @staticmethod
        def setup_context(ctx, inputs, output):
            x, y = inputs
            ctx.save_for_backward(x, y)
            ctx.out_len = len(output)
        @staticmethod
        def backward(ctx, g1, g2):
            x, y = ctx.saved_tensors
            return g1 * y + g2, g1 * x + g2
    a = torch.ones(2, requires_grad=True)
    b = torch.full((2,), 3.0, requires_grad=True)
    p, s = F.apply(a, b)
    (p + s).sum().backward()
    return L(a.grad), L(b.grad), p.grad_fn.out_len

def f_no_backward(torch):
    class F(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x): return x * 2
    a = torch.ones(2, requires_grad=True)
    F.apply(a).sum().backward()

def f_wrong_count(torch):
    class F(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x, y): return x * y
        @staticmethod
        def backward(ctx, g): return g
    a = torch.ones(2, requires_grad=True)
    b = torch.ones(2, requires_grad=True)
    F.apply(a, b).sum().backward()

def f_too_many(torch):
    class F(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x): return x * 2
        @staticmethod
        def backward(ctx, g): return g, g
    a = torch.ones(2, requires_grad=True)
    F.apply(a).sum().backward()

def f_too_many_none(torch):
    class F(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x): return x * 2
        @staticmethod
        def backward(ctx, g): return g, None, None
    a = torch.ones(2, requires_grad=True)
    F.apply(a).sum().backward()
    return L(a.grad)

def f_nontensor_grad(torch):
    class F(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x): return x * 2
        @staticmethod
        def backward(ctx, g): return 1.0
    a = torch.ones(2, requires_grad=True)
    F.apply(a).sum().backward()

def f_wrong_shape_grad(torch):
    class F(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x): return x * 2
        @staticmethod
        def backward(ctx, g): return torch.ones(3)
    a = torch.ones(2, requires_grad=True)
    F.apply(a).sum().backward()

def f_grad_for_nonrequiring(torch):
    class F(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x, y): return x * y
        @staticmethod
        def backward(ctx, g): return g, g
    a = torch.ones(2, requires_grad=True)
    b = torch.ones(2)
    F.apply(a, b).sum().backward()
    return L(a.grad)

def f_needs_input_grad(torch):
    rec = []
    class F(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x, n, y):
            rec.append(ctx.needs_input_grad)
            return x * y
        @staticmethod
        def backward(ctx, g):
            rec.append(ctx.needs_input_grad)
            return g, None, g
    a = torch.ones(2, requires_grad=True)
    b = torch.ones(2)
    F.apply(a, 3, b).sum().backward()
    with torch.no_grad():
        F.apply(a, 3, b)
    return rec

def f_saved_after_backward(torch):
    class F(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x * 2
        @staticmethod
        def backward(ctx, g): return g * 2
    a = torch.ones(2, requires_grad=True)
    y = F.apply(a)
    y.sum().backward()
    return y.grad_fn.saved_tensors

def f_saved_after_backward_retain(torch):
    class F(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x * 2
        @staticmethod
        def backward(ctx, g): return g * 2
    a = torch.ones(2, requires_grad=True)
    y = F.apply(a)
    y.sum().backward(retain_graph=True)
    return len(y.grad_fn.saved_tensors)

def f_mark_non_diff(torch):
    class F(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            a = x.clone()
            b = x.clone()
            ctx.mark_non_differentiable(b)
            return a, b
        @staticmethod
        def backward(ctx, ga, gb):
            return ga + gb
    x = torch.ones(2, requires_grad=True)
    a, b = F.apply(x)
    r = [a.requires_grad, b.requires_grad, b.grad_fn]
    a.sum().backward()
    r.append(L(x.grad))
    return r

def f_mark_non_diff_backward_through(torch):
    class F(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            b = x.clone()
            ctx.mark_non_differentiable(b)
            return b
        @staticmethod
        def backward(ctx, g): return g
    x = torch.ones(2, requires_grad=True)
    b = F.apply(x)
    b.sum().backward()

def f_saved_view_mutated(torch):
    class F(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.mark_dirty(x)
            x.add_(1)
            ctx.save_for_backward(x)
            return x
        @staticmethod
        def backward(ctx, g):
            x, = ctx.saved_tensors
            return g * 1
    a = torch.ones(4, requires_grad=True)
    b = a.clone()
    v = b[:2]
    F.apply(v)
    b.sum().backward()
    return L(a.grad)

def f_input_returned(torch):
    class F(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x): return x
        @staticmethod
        def backward(ctx, g): return g * 2
    a = torch.ones(2, requires_grad=True)
    y = F.apply(a)
    y.sum().backward()
    return y is a, L(a.grad), type(y.grad_fn).__name__

def f_backward_returns_more_tensors_nondiff(torch):
    class F(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x, k): return x * k
        @staticmethod
        def backward(ctx, g): return g * 2, torch.ones(1)
    a = torch.ones(2, requires_grad=True)
    F.apply(a, 2).sum().backward()
    return L(a.grad)

def f_node_isinstance(torch):
    class F(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x): return x * 2
        @staticmethod
        def backward(ctx, g): return g
    a = torch.ones(2, requires_grad=True)
    y = F.apply(a) * 2
    y2 = a.clone()
    v = y2[:1]
    v.mul_(2)
    nodes = [y.grad_fn, y.grad_fn.next_functions[0][0], y.grad_fn.next_functions[0][0].next_functions[0][0], y2.grad_fn]
    return [isinstance(n, torch.autograd.graph.Node) for n in nodes], [type(n).__name__ for n in nodes]

def f_node_call_wrong_args(torch):
    a = torch.ones(2, requires_grad=True)
    y = a * 2
    return y.grad_fn(torch.ones(2), torch.ones(2))

def f_node_call_ok(torch):
    a = torch.ones(2, requires_grad=True)
    y = a * 2
    return y.grad_fn(torch.ones(2))

def f_node_call_none(torch):
    a = torch.ones(2, requires_grad=True)
    y = a * 2
    return y.grad_fn()

def f_node_call_accum(torch):
    a = torch.ones(2, requires_grad=True)
    y = a * 2
    acc = y.grad_fn.next_functions[0][0]
    return acc(torch.ones(2)), L(a.grad)


def dirty_fn(torch):
    class F(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.mark_dirty(x)
            return x.mul_(2)
        @staticmethod
        def backward(ctx, g): return g * 2
    return F

def d_dirty_unbind_output(torch):
    a = torch.ones(2, 2, requires_grad=True)
    b = a * 1
    x, y = b.unbind(0)
    return dirty_fn(torch).apply(x)

def d_dirty_custom_view(torch):
    class G(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x): return x[:2]
        @staticmethod
        def backward(ctx, g): return torch.cat([g, torch.zeros(1)])
    a = torch.ones(3, requires_grad=True)
    b = a * 1
    v = G.apply(b)
    return dirty_fn(torch).apply(v)

def d_once_diff_twice(torch):
    class F(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x ** 2
        @staticmethod
        @torch.autograd.function.once_differentiable
        def backward(ctx, g):
            x, = ctx.saved_tensors
            return 2 * x * g
    a = torch.tensor([3.0], requires_grad=True)
    g, = torch.autograd.grad(F.apply(a), a, create_graph=True)
    return g.requires_grad, outcome(lambda: g.sum().backward())

def d_dirty_nongrad_mode(torch):
    a = torch.ones(3, requires_grad=True)
    with torch.no_grad():
        y = dirty_fn(torch).apply(a)
    return L(y), y.requires_grad, a._version

def d_dirty_version(torch):
    a = torch.ones(3, requires_grad=True)
    b = a * 1
    v0 = b._version
    y = dirty_fn(torch).apply(b)
    return b._version - v0, y is b, type(b.grad_fn).__name__


def f_materialize_non_diff_off(torch):
    seen = []
    class F(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            out0 = x.clone()
            out1 = x.clone()
            ctx.mark_non_differentiable(out1)
            ctx._materialize_non_diff_grads = False
            return out0, out1
        @staticmethod
        def backward(ctx, g0, g1):
            seen.append(g1 is None)
            return g0
    a = torch.tensor(1.0, requires_grad=True)
    F.apply(a)[0].backward()
    return seen, L(a.grad)

def f_materialize_non_diff_default(torch):
    seen = []
    class F(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            out0 = x.clone()
            out1 = x.clone()
            ctx.mark_non_differentiable(out1)
            return out0, out1
        @staticmethod
        def backward(ctx, g0, g1):
            seen.append(L(g1))
            return g0
    a = torch.tensor(1.0, requires_grad=True)
    F.apply(a)[0].backward()
    return seen, L(a.grad)


def f_return_duplicate(torch):
    class F(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            out = x * 2
            return out, out
        @staticmethod
        def backward(ctx, g1, g2):
            return g1 * 2 + g2 * 3
    x = torch.tensor([1.0, 2.0], dtype=torch.float64, requires_grad=True)
    a, b = F.apply(x)
    (a * torch.tensor([1.0, 10.0], dtype=torch.float64)).sum().backward()
    r = [a is b, a.output_nr, L(x.grad), torch.autograd.gradcheck(lambda t: sum(F.apply(t)), [x])]
    return r

def f_return_duplicate_inplace(torch):
    class F(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            x.mul_(2)
            ctx.mark_dirty(x)
            return x, x
        @staticmethod
        def backward(ctx, g1, g2):
            return g1 * 2 + g2 * 2
    def fn(t):
        a, b = F.apply(t.clone())
        assert a is b
        return a + b
    x = torch.tensor([1.0, 2.0], dtype=torch.float64, requires_grad=True)
    return torch.autograd.gradcheck(fn, [x]), torch.autograd.gradgradcheck(fn, [x])

def f_return_duplicate_view_inplace(torch):
    class F(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            x.mul_(2)
            ctx.mark_dirty(x)
            return x, x
        @staticmethod
        def backward(ctx, g1, g2):
            return g1 * 2 + g2 * 2
    x = torch.ones(2, 2, dtype=torch.float64, requires_grad=True)
    F.apply(x.clone()[0])

def f_input_returned_twice(torch):
    class F(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x): return x, x
        @staticmethod
        def backward(ctx, g1, g2): return g1 + g2
    x = torch.ones(2, requires_grad=True)
    a, b = F.apply(x)
    (a * 2 + b * 3).sum().backward()
    return a is b, a is x, L(x.grad)

def f_output_nr_of_multi(torch):
    class F(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x): return x * 1, x * 2, x * 3
        @staticmethod
        def backward(ctx, g1, g2, g3): return g1 + 2 * g2 + 3 * g3
    x = torch.ones(2, requires_grad=True)
    outs = F.apply(x)
    return [o.output_nr for o in outs], [type(o.grad_fn).__name__ for o in outs]


def f_no_tensors(torch):
    class F(torch.autograd.Function):
        @staticmethod
        def forward(ctx, a, b): return a + b, b + 1
        @staticmethod
        def backward(ctx, g1, g2): return g1, g2
    return F.apply(1, 2)

def f_kwargs_no_setup(torch):
    class F(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x, k=2.0): return x * k
        @staticmethod
        def backward(ctx, g): return g * 2, None
    x = torch.ones(2, requires_grad=True)
    return F.apply(x, k=3.0)

def f_setup_context_needs_input_grad(torch):
    rec = []
    class F(torch.autograd.Function):
        @staticmethod
        def forward(x, y): return x * y
        @staticmethod
        def setup_context(ctx, inputs, output):
            rec.append(ctx.needs_input_grad)
            ctx.save_for_backward(*inputs)
        @staticmethod
        def backward(ctx, g):
            x, y = ctx.saved_tensors
            rec.append(ctx.needs_input_grad)
            return g * y, g * x
    x = torch.ones(2, requires_grad=True)
    y = torch.full((2,), 3.0)
    F.apply(x, y).sum().backward()
    return rec, L(x.grad), y.grad

def f_forward_ctx_with_setup_context(torch):
    class F(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x): return x * 2
        @staticmethod
        def setup_context(ctx, inputs, output): pass
        @staticmethod
        def backward(ctx, g): return g * 2
    x = torch.ones(2, requires_grad=True)
    return F.apply(x)

def f_vjp_only(torch):
    class F(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x): return x * 2
        @staticmethod
        def vjp(ctx, g): return g * 5
    x = torch.ones(2, requires_grad=True)
    F.apply(x).sum().backward()
    return L(x.grad)

def f_both_backward_and_vjp(torch):
    class F(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x): return x * 2
        @staticmethod
        def backward(ctx, g): return g * 2
        @staticmethod
        def vjp(ctx, g): return g * 5
    x = torch.ones(2, requires_grad=True)
    F.apply(x).sum().backward()

def f_saved_none_and_nontensor(torch):
    class F(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x, None)
            return x * 2
        @staticmethod
        def backward(ctx, g):
            x, n = ctx.saved_tensors
            return g * 2 if n is None else g
    x = torch.ones(2, requires_grad=True)
    F.apply(x).sum().backward()
    return L(x.grad)

def f_save_nontensor(torch):
    class F(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x, 3)
            return x * 2
        @staticmethod
        def backward(ctx, g): return g
    x = torch.ones(2, requires_grad=True)
    F.apply(x)

def f_saved_tensors_in_forward(torch):
    class F(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x * 2, ctx.saved_tensors
        @staticmethod
        def backward(ctx, g, h): return g
    x = torch.ones(2, requires_grad=True)
    F.apply(x)

def f_saved_output_modified(torch):
    class F(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            y = x * 2
            ctx.save_for_backward(y)
            return y
        @staticmethod
        def backward(ctx, g):
            y, = ctx.saved_tensors
            return g * y
    x = torch.ones(2, requires_grad=True)
    y = F.apply(x)
    y.add_(1)
    y.sum().backward()

def f_saved_input_modified(torch):
    class F(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x * 2
        @staticmethod
        def backward(ctx, g):
            x, = ctx.saved_tensors
            return g * x
    x = torch.ones(2, requires_grad=True)
    b = x * 1
    y = F.apply(b)
    b.add_(1)
    y.sum().backward()

def f_needs_input_grad_backward_is_tuple(torch):
    rec = []
    class F(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x, y): return x * y
        @staticmethod
        def backward(ctx, g):
            rec.append((type(ctx.needs_input_grad).__name__, ctx.needs_input_grad))
            return g, None
    x = torch.ones(2, requires_grad=True)
    F.apply(x, torch.ones(2)).sum().backward()
    return rec

def f_grad_fn_attrs(torch):
    class F(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x): return x * 2
        @staticmethod
        def backward(ctx, g): return g
    x = torch.ones(2, requires_grad=True)
    y = F.apply(x)
    fn = y.grad_fn
    return fn.name(), [type(n).__name__ for n, _ in fn.next_functions], fn.needs_input_grad, hasattr(fn, "saved_tensors")


def chain(torch, materialize, seen):
    """G(F(x)), where G's backward returns no gradient: F's backward still runs (on zeros, or on
    None without materialized gradients)."""
    class F(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.set_materialize_grads(materialize)
            return x * 2
        @staticmethod
        def backward(ctx, g):
            seen.append(None if g is None else L(g))
            return None if g is None else g * 2
    class G(torch.autograd.Function):
        @staticmethod
        def forward(ctx, y): return y * 3
        @staticmethod
        def backward(ctx, g): return None
    return lambda x: G.apply(F.apply(x))


def f_no_gradient_arrives_materialized(torch):
    seen = []
    x = torch.ones(2, requires_grad=True)
    chain(torch, True, seen)(x).sum().backward()
    return seen, L(x.grad)

def f_no_gradient_arrives_not_materialized(torch):
    seen = []
    x = torch.ones(2, requires_grad=True)
    chain(torch, False, seen)(x).sum().backward()
    return seen, L(x.grad)


SCENARIOS = [f_no_gradient_arrives_materialized, f_no_gradient_arrives_not_materialized, f_no_tensors, f_kwargs_no_setup, f_setup_context_needs_input_grad, f_forward_ctx_with_setup_context, f_vjp_only, f_both_backward_and_vjp, f_saved_none_and_nontensor, f_save_nontensor, f_saved_tensors_in_forward, f_saved_output_modified, f_saved_input_modified, f_needs_input_grad_backward_is_tuple, f_grad_fn_attrs, f_return_duplicate, f_return_duplicate_inplace, f_return_duplicate_view_inplace, f_input_returned_twice, f_output_nr_of_multi, f_materialize_non_diff_off, f_materialize_non_diff_default, d_dirty_unbind_output, d_dirty_custom_view, d_once_diff_twice, d_dirty_nongrad_mode, d_dirty_version, f_dirty_view_of_leaf, f_dirty_view_nonleaf, f_dirty_transposed_view, f_dirty_not_returned, f_dirty_leaf, f_return_view_no_grad, f_return_view_of_input, f_view_of_intermediate, f_nontensor_io, f_materialize_false, f_materialize_true, f_once_diff, f_setup_context, f_setup_context_two, f_no_backward, f_wrong_count, f_too_many, f_too_many_none, f_nontensor_grad, f_wrong_shape_grad, f_grad_for_nonrequiring, f_needs_input_grad, f_saved_after_backward, f_saved_after_backward_retain, f_mark_non_diff, f_mark_non_diff_backward_through, f_saved_view_mutated, f_input_returned, f_backward_returns_more_tensors_nondiff, f_node_isinstance, f_node_call_wrong_args, f_node_call_ok, f_node_call_none, f_node_call_accum]


@pytest.mark.parametrize("scenario", SCENARIOS, ids=[s.__name__ for s in SCENARIOS])
def test_matches_pytorch(scenario: Any, torch: Any) -> None:
    assert run(scenario, retrograd) == run(scenario, torch)


def test_dirty_view_that_is_not_the_first_input() -> None:
    # Hand-derived: b = a * 1; b[1:3] *= w in a custom Function; loss = sum(b * c).
    # d loss / d a = c outside the view and c * w inside it. (PyTorch 2.13's CopySlices assumes
    # the view is the Function's first input and drops the base's gradient here.)
    class Scale(retrograd.autograd.Function):
        @staticmethod
        def forward(ctx: Any, w: Any, x: Any) -> Any:
            ctx.mark_dirty(x)
            ctx.save_for_backward(w)
            return x.mul_(w)

        @staticmethod
        def backward(ctx: Any, g: Any) -> Any:
            (w,) = ctx.saved_tensors
            return None, g * w

    a = retrograd.arange(4.0).requires_grad_()
    b = a * 1
    y = Scale.apply(retrograd.tensor([2.0, 3.0]), b[1:3])
    (b * retrograd.tensor([1.0, 10.0, 100.0, 1000.0])).sum().backward()
    assert a.grad.tolist() == [1.0, 20.0, 300.0, 1000.0]
    assert b.tolist() == [0.0, 2.0, 6.0, 3.0]
    assert type(b.grad_fn).__name__ == "CopySlices" and type(y.grad_fn).__name__ == "AsStridedBackward0"


def test_saved_mutated_view_is_freed_without_the_collector() -> None:
    # A Function that writes into a view and saves it holds no reference cycle: dropping the
    # graph frees its node by reference counting alone.
    import gc
    import weakref

    class AddOne(retrograd.autograd.Function):
        @staticmethod
        def forward(ctx: Any, x: Any) -> Any:
            ctx.mark_dirty(x)
            x.add_(1)
            ctx.save_for_backward(x)
            return x

        @staticmethod
        def backward(ctx: Any, g: Any) -> Any:
            (x,) = ctx.saved_tensors
            return g * 1

    gc.disable()
    try:
        a = retrograd.ones(4, requires_grad=True)
        b = a.clone()
        y = AddOne.apply(b[:2])
        node = weakref.ref(b.grad_fn.fn)
        del y, b
        assert node() is None
    finally:
        gc.enable()
