"""Code generation: a ``Graph`` as one straight-line Python function calling NumPy directly.

Passes, in order: common subexpressions merged (an identical pure call on the same arguments),
dead calls removed (nothing the outputs need), then buffers planned: the output of an
elementwise ufunc that never leaves the function (not an output, read only by other
elementwise ufuncs) is written with ``out=`` into a buffer allocated once and reused by every
later call; a buffer whose value is read for the last time by the call writing the next one is
reused by it, so a chain of elementwise ops runs in place. Buffers are taken from a pool at the
start of a call and put back at its end, so two threads (or a re-entrant call) never share one.
While lines are written, a few kernels become the NumPy calls they make for the traced shapes and
dtypes (``_lowered``), and a Python number operand of an elementwise ufunc a 0-d array of the
other operand's dtype (``_operand_dtype``).
"""

from __future__ import annotations

import linecache
import math
import re
from collections.abc import Callable
from typing import Any

import numpy as np

from ..ops.shape import _t
from .graph import Call, Graph, ParamRef

_counter = [0]
_RESERVED = frozenset(("forward", "backward", "_bufs", "_pool", "_alloc", "_asarray", "_maximum", "_matmul", "_add", "_w",
                       "_kept_bits", "_bitwise_and", "_uint16", "_uint32", "_uint64",
                       "_add_reduce"))
_GENERATED_NAME = re.compile(r"[vbkp]\d.*|dt_.*")  # the names the generator gives values and constants


def _literal(value: Any) -> str | None:
    """``repr(value)`` when that is Python source that evaluates back to it exactly."""
    t = type(value)
    if value is None or t is bool or t is int or t is str:
        return repr(value)
    if t is float and math.isfinite(value):
        return repr(value)
    if t is tuple and all(_literal(v) is not None for v in value):
        return repr(value)
    return None


def _freeze(value: Any) -> Any:
    """A hashable stand-in for a param or constant, equal only for equal values of one type."""
    if _literal(value) is not None:
        return (type(value), value)
    return ("id", id(value))


def _elementwise(call: Call) -> bool:
    fn = call.fn
    return (isinstance(fn, np.ufunc) and fn.nout == 1 and fn.nin == len(call.args) and not call.params
            and not call.multi)


def optimise(graph: Graph) -> list[Call]:
    """The graph's calls after CSE and dead-code removal (the graph itself is not changed)."""
    canon: dict[int, int] = {}
    seen: dict[Any, list[int]] = {}
    calls: list[Call] = []
    transposed: dict[int, int] = {}  # t(v)'s value -> v, for v made by a call of this graph
    made = {o for call in graph.calls for o in call.outs}
    for call in graph.calls:
        args = [canon.get(a, a) if isinstance(a, int) else a for a in call.args]
        if call.fn is _t and not call.casts and isinstance(args[0], int):
            inner = transposed.get(args[0])
            if inner is not None:
                # t(t(v)) is v: the backward of ``x @ w.t()`` makes a weight's gradient so; as
                # v itself (an array of its own) ``.grad`` takes it without a copy.
                canon[call.outs[0]] = inner
                continue
            if args[0] in made:
                transposed[call.outs[0]] = args[0]
        params = tuple(ParamRef(canon.get(p.v, p.v)) if type(p) is ParamRef else p for p in call.params)
        c = Call(call.fn, call.label, args, params, list(call.outs), call.multi, dict(call.casts), call.pure)
        if c.pure:
            key = (id(c.fn), tuple(a if isinstance(a, int) else _freeze(graph.consts[a[1]]) for a in args),
                   tuple(p if type(p) is ParamRef else _freeze(p) for p in c.params), tuple(sorted((k, str(v)) for k, v in c.casts.items())))
            previous = seen.get(key)
            if previous is not None:
                for o, p in zip(c.outs, previous):
                    canon[o] = p
                continue
            seen[key] = c.outs
        calls.append(c)
    outputs = [canon.get(v, v) for v in graph.outputs]
    graph.outputs = outputs
    needed = set(outputs)
    kept: list[Call] = []
    for c in reversed(calls):
        if any(o in needed for o in c.outs):
            kept.append(c)
            needed.update(a for a in c.args if isinstance(a, int))
            needed.update(p.v for p in c.params if type(p) is ParamRef)
    kept.reverse()
    return kept


def _fresh_producers() -> tuple[Any, ...]:
    """Kernels whose float32/float64 result is always a new array of its own (no view of an input)."""
    from ..ops.linalg import _mm
    from ..ops.nn import _addmm

    return (_addmm, _mm)


def _overwritable(graph: Graph, calls: list[Call]) -> Callable[[int], bool]:
    """``overwritable(v)``: whether value ``v`` is a float32/float64 product (``linear``'s ``addmm``,
    ``mm``: a new array of its own) that one call reads and the function neither takes nor
    returns, so that its one reader may write its result into it."""
    fresh = _fresh_producers()
    made_by: dict[int, Call] = {o: c for c in calls for o in c.outs}
    reads: dict[int, int] = {}
    for c in calls:
        for a in (*c.args, *(p.v for p in c.params if type(p) is ParamRef)):
            if isinstance(a, int):
                reads[a] = reads.get(a, 0) + 1

    def overwritable(v: int) -> bool:
        producer = made_by.get(v)
        shape, dtype = graph.meta[v]
        return (producer is not None and producer.fn in fresh and not producer.casts and reads[v] == 1
                and v not in graph.outputs and v not in graph.inputs and shape != ()
                and dtype in (np.float32, np.float64))

    return overwritable


def relu_in_place(graph: Graph, calls: list[Call]) -> set[int]:
    """The calls (by position) of ``relu`` that may write into their input, an ``_overwritable``
    product. ``_maximum(zero, v, out=v)`` (a 0-d zero of the dtype) is the kernel's own
    ``maximum(zeros, v)`` (the same values: NaN kept, -0.0 kept on the tie) without the zeros and
    the new array: linear + relu become one product and one in-place pass, as a hand-written
    forward does."""
    from ..ops.elementwise import _relu

    overwritable = _overwritable(graph, calls)
    found: set[int] = set()
    for i, c in enumerate(calls):
        if c.fn is not _relu or c.casts or c.params or len(c.args) != 1 or not isinstance(c.args[0], int):
            continue
        v = c.args[0]
        if overwritable(v) and graph.meta[c.outs[0]] == graph.meta[v]:
            found.add(i)
    return found


def threshold_backward_in_place(graph: Graph, calls: list[Call]) -> set[int]:
    """The calls (by position) of relu's ``threshold_backward(grad, out)`` that may write into
    ``grad``, an ``_overwritable`` product (the gradient ``mm`` brings back through a linear
    layer) of ``out``'s shape and dtype, small enough for the kernel's one-pass path. The line
    is the kernel's own select on the bits (``grad & mask``, the mask from ``out <= 0``) with
    ``grad``'s memory as the result: the same bits, without the new array."""
    from ..ops.elementwise import _BLOCK, _threshold_backward

    overwritable = _overwritable(graph, calls)
    found: set[int] = set()
    for i, c in enumerate(calls):
        if (c.fn is not _threshold_backward or c.casts or c.params or len(c.args) != 2
                or not all(isinstance(a, int) for a in c.args)):
            continue
        grad, out = c.args
        meta = graph.meta[grad]
        if (grad != out and overwritable(grad) and graph.meta[out] == meta == graph.meta[c.outs[0]]
                and math.prod(meta[0]) <= _BLOCK):
            found.add(i)
    return found


_LOWERED_NAMES = {"_matmul": np.matmul, "_add": np.add, "_add_reduce": np.add.reduce}
_PLAIN_FLOATS = (np.dtype(np.float32), np.dtype(np.float64))


def _lowered(graph: Graph, c: Call) -> list[str] | None:
    """The NumPy lines that ``c`` runs for the shapes and dtypes it was traced with (which the
    guards fix), without the kernel's checks and branches: ``t`` as ``.T``, ``mm`` as matmul,
    ``linear``'s ``addmm`` as matmul and the bias added in place, a bias gradient's
    ``sum_to_size`` as one reduce; None to call the kernel. Each is the very NumPy call the
    kernel makes on such operands, so the results are the kernel's bit for bit."""
    from ..ops.linalg import _mm
    from ..ops.nn import _addmm
    from ..ops.reduce import _sum_to

    fn = c.fn
    if c.casts or c.multi or not all(isinstance(a, int) for a in c.args):
        return None
    out = f"v{c.outs[0]}"
    metas = [graph.meta[a] for a in c.args]
    args = [f"v{a}" for a in c.args]
    if fn is _t and not c.params and len(metas[0][0]) <= 2:
        return [f"{out} = {args[0]}.T  # {c.label}"]
    if fn is _mm and not c.params and _plain_product(metas[0], metas[1]):
        return [f"{out} = _matmul({args[0]}, {args[1]})  # {c.label}"]
    if fn is _addmm and not c.params and _plain_product(metas[1], metas[2]):
        (bias_shape, bias_dtype), out_shape = metas[0], graph.meta[c.outs[0]][0]
        if bias_dtype == metas[1][1] and len(bias_shape) <= 2 and bias_shape == out_shape[2 - len(bias_shape):]:
            return [f"{out} = _matmul({args[1]}, {args[2]})  # {c.label}: the product,",
                    f"_add({out}, {args[0]}, out={out})  # and the bias added into it"]
    if fn is _sum_to and len(c.params) == 1 and type(c.params[0]) is tuple:
        shape, lead = c.params[0], len(metas[0][0]) - len(c.params[0])
        if lead > 0 and shape and metas[0][0][lead:] == shape:  # (a 0-d sum: the general line's _asarray)
            axis = "0" if lead == 1 else repr(tuple(range(lead)))
            return [f"{out} = _add_reduce({args[0]}, {axis})  # {c.label}"]
    return None


def _plain_product(a: tuple[Any, Any], b: tuple[Any, Any]) -> bool:
    """Whether ``a @ b`` of arrays of these (shape, dtype) is a plain float32/float64 matrix
    product: the case where ``mm`` and ``addmm`` call matmul and nothing else."""
    (sa, da), (sb, db) = a, b
    return (len(sa) == 2 and len(sb) == 2 and sa[1] == sb[0] and da is not None and np.dtype(da) in _PLAIN_FLOATS
            and db is not None and np.dtype(db) == np.dtype(da))


# Two-operand ufuncs whose loop for (array of float dtype D, Python number) is their (D, D) loop:
# NumPy converts the number to D first, as it converts a 0-d array of D. (Not ldexp, whose second
# operand is an integer, nor the bit and integer ops.)
_SAME_LOOP_UFUNCS = frozenset((np.add, np.subtract, np.multiply, np.true_divide, np.maximum, np.minimum, np.fmax,
                               np.fmin, np.less, np.less_equal, np.greater, np.greater_equal, np.equal, np.not_equal))


def _operand_dtype(graph: Graph, c: Call, value: Any) -> Any:
    """The dtype to give a Python number operand of ``c`` as a 0-d array, or None to leave it a
    number: a float32/float64 array operand of a ufunc above, no casts. A Python number costs
    NumPy a scalar conversion in every call (about 0.8 µs), the same conversion to the array's
    dtype that a constant 0-d array of that dtype has made once: the results are the same bits."""
    if type(value) is not float and (type(value) is not int or abs(value) > 2**53):  # (huge ints: left to NumPy)
        return None
    if c.fn not in _SAME_LOOP_UFUNCS or c.casts or c.params or len(c.args) != 2:
        return None
    arrays = [a for a in c.args if isinstance(a, int)]
    if len(arrays) != 1:
        return None
    dtype = graph.meta[arrays[0]][1]
    if dtype is None or np.dtype(dtype) not in _PLAIN_FLOATS:
        return None
    return np.dtype(dtype)


def _readonly_scalar(value: Any, dtype: Any) -> np.ndarray:
    """``value`` as a 0-d array of ``dtype`` that no generated line can write into."""
    with np.errstate(all="ignore"):  # (a number beyond the dtype's range becomes inf, as NumPy makes it in a call)
        array = np.array(value, dtype)
    array.flags.writeable = False
    return array


def generate(graph: Graph, name: str) -> tuple[str, Callable[..., Any]]:
    """Source and function for ``graph``: ``fn(*inputs) -> tuple(outputs)``."""
    calls = optimise(graph)
    namespace: dict[str, Any] = {"_asarray": np.asarray, "_maximum": np.maximum}
    in_place = relu_in_place(graph, calls)
    masked_in_place = threshold_backward_in_place(graph, calls)
    fn_names: dict[int, str] = {}
    outputs = set(graph.outputs)

    # Consumers, last uses, and which values may live in reusable buffers.
    readers: dict[int, list[int]] = {}
    for i, c in enumerate(calls):
        for a in (*c.args, *(p.v for p in c.params if type(p) is ParamRef)):
            if isinstance(a, int):
                readers.setdefault(a, []).append(i)
    last_use = {v: r[-1] for v, r in readers.items()}
    buffered: dict[int, int] = {}  # value -> buffer number
    buffer_meta: list[tuple[tuple[int, ...], Any]] = []
    free: dict[tuple[Any, ...], list[int]] = {}
    for i, c in enumerate(calls):
        dying = []  # buffers of values read for the last time by this call
        for a in c.args:
            if isinstance(a, int) and a in buffered and last_use.get(a) == i and buffered[a] not in dying:
                dying.append(buffered[a])
        chosen = None
        if _elementwise(c):
            v = c.outs[0]
            meta = graph.meta[v]
            if (v not in outputs and v in readers and meta[1] is not None
                    and all(_elementwise(calls[r]) for r in readers[v])):
                key = (meta[0], str(meta[1]))
                for b in dying:  # write in place over an input read for the last time
                    if (buffer_meta[b][0], str(buffer_meta[b][1])) == key:
                        chosen = b
                        break
                if chosen is None and free.get(key):
                    chosen = free[key].pop()
                if chosen is None:
                    chosen = len(buffer_meta)
                    buffer_meta.append(meta)
                buffered[v] = chosen
        for b in dying:
            if b != chosen:
                free.setdefault((buffer_meta[b][0], str(buffer_meta[b][1])), []).append(b)

    lines = [f"def {name}({', '.join(f'v{v}' for v in graph.inputs)}):"]
    if buffer_meta:
        pool: list[tuple[np.ndarray, ...]] = []
        metas = list(buffer_meta)
        namespace["_pool"] = pool
        namespace["_alloc"] = lambda: tuple(np.empty(shape, dtype) for shape, dtype in metas)
        names = ", ".join(f"b{k}" for k in range(len(buffer_meta)))
        lines.append(f"    _bufs = _pool.pop() if _pool else _alloc()  # {len(buffer_meta)} buffers, reused across calls")
        lines.append(f"    {names}{',' if len(buffer_meta) == 1 else ''} = _bufs")
    namespace.update(_LOWERED_NAMES)
    for i, c in enumerate(calls):
        if i in in_place:
            zero = f"_zero_{graph.meta[c.args[0]][1].name}"
            namespace[zero] = _readonly_scalar(0.0, graph.meta[c.args[0]][1])
            lines.append(f"    v{c.outs[0]} = _maximum({zero}, v{c.args[0]}, out=v{c.args[0]})  # {c.label}, in place")
            continue
        if i in masked_in_place:
            from ..ops.elementwise import _SAME_SIZE_UINT, _kept_bits

            bits = _SAME_SIZE_UINT[np.dtype(graph.meta[c.args[0]][1]).itemsize]  # (the kernel's key: the type)
            bits_name = f"_{np.dtype(bits).name}"
            namespace["_kept_bits"], namespace["_bitwise_and"], namespace[bits_name] = _kept_bits, np.bitwise_and, bits
            grad, out = (f"v{a}" for a in c.args)
            lines += [f"    _w = {grad}.view({bits_name})",
                      f"    _bitwise_and(_w, _kept_bits({out}, {bits_name}), out=_w)  # {c.label}, in place",
                      f"    v{c.outs[0]} = {grad}"]
            continue
        lowered = _lowered(graph, c)
        if lowered is not None and (not c.outs or c.outs[0] not in buffered):
            lines += [f"    {line}" for line in lowered]
            continue
        fname = fn_names.get(id(c.fn))
        if fname is None:
            base = getattr(c.fn, "__name__", "fn")
            fname = base if base.isidentifier() else "fn"
            if fname in namespace or fname in _RESERVED or fname == name or _GENERATED_NAME.fullmatch(fname):
                fname = f"{fname}_{len(fn_names)}"
            fn_names[id(c.fn)] = fname
            namespace[fname] = c.fn
        args = []
        for k, a in enumerate(c.args):
            if isinstance(a, int):
                text = f"v{a}"
            else:
                value = graph.consts[a[1]]
                dtype = _operand_dtype(graph, c, value)
                if dtype is not None:
                    text = f"k{a[1]}_{dtype.name}"
                    namespace[text] = _readonly_scalar(value, dtype)
                else:
                    text = _literal(value) or f"k{a[1]}"
                    if text == f"k{a[1]}":
                        namespace[text] = value
            if k in c.casts:
                dname = f"dt_{np.dtype(c.casts[k]).name}"
                namespace[dname] = np.dtype(c.casts[k])
                text = f"{text}.astype({dname})"
            args.append(text)
        for j, p in enumerate(c.params):
            if type(p) is ParamRef:
                args.append(f"v{p.v}")
                continue
            literal = _literal(p)
            if literal is None:
                literal = f"p{len(namespace)}_{j}"
                namespace[literal] = p
            text = literal
            args.append(text)
        if c.outs and c.outs[0] in buffered:
            args.append(f"out=b{buffered[c.outs[0]]}")
        target = ", ".join(f"v{o}" for o in c.outs) + ("," if c.multi and len(c.outs) == 1 else "")
        call = f"{fname}({', '.join(args)})"
        if not c.multi and graph.meta[c.outs[0]][0] == () and c.outs[0] not in buffered:
            call = f"_asarray({call})"  # a ufunc returns a NumPy scalar for 0-d operands; ops get arrays
        lines.append(f"    {target} = {call}  # {c.label}")
        if c.multi:
            for o in c.outs:
                if graph.meta[o][0] == ():
                    lines.append(f"    v{o} = _asarray(v{o})")
    if buffer_meta:
        lines.append("    _pool.append(_bufs)")
    rets = []
    for v in graph.outputs:
        rets.append(f"v{v}")
    lines.append(f"    return ({', '.join(rets)}{',' if len(rets) == 1 else ''})")
    source = "\n".join(lines) + "\n"
    return source, exec_generated(source, name, namespace, name)


def exec_generated(source: str, label: str, namespace: dict[str, Any], name: str) -> Any:
    """Run generated ``source`` in ``namespace`` as the numbered file ``<retrograd compiled: label
    #n>``, registered with ``linecache`` so tracebacks and pdb show its lines, and return the
    function ``name`` it defines. Every generated piece of retrograd.compile goes through here."""
    _counter[0] += 1
    filename = f"<retrograd compiled: {label} #{_counter[0]}>"
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
    exec(compile(source, filename, "exec"), namespace)  # noqa: S102 - our own generated source
    return namespace[name]
