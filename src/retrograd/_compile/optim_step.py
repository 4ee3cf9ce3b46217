"""``retrograd.compile(opt.step)``: an optimizer's update as one generated NumPy function.

``torch.compile`` compiles ``opt.step()`` too. Here a compiled step of ``SGD``, ``Adam`` or
``AdamW`` generates, per guard variant, one straight-line function that updates every parameter
with NumPy ufuncs writing into the parameters and state buffers themselves, temporaries in
buffers allocated once (``out=``). Each operation is the eager step's, in the same order, on the
same dtype (the flat ``foreach`` updates of ``optim/_foreach.py`` list them), so the parameters
after any number of steps are bitwise the eager ones; each tensor gets the version bumps of the
in-place ops the eager step would have run.

Guards (a failure compiles a new variant, up to ``CACHE_SIZE_LIMIT``): which parameters have a
gradient, the identity of the parameters' and buffers' arrays (checked once, when compiled, to be
plain: writeable, owning their memory, one real float dtype), the flags that change which
operations run (momentum on, dampening, Nesterov, weight decay, maximize, amsgrad...). The
numbers themselves (``lr``, momentum, betas, eps, weight decay) are read from ``param_groups`` at
every call, so an LR scheduler (or any change of a group's values) takes effect as eagerly.
Gradients are new arrays at every step: each call checks that each is a NumPy array of its
parameter's shape and dtype that owns its memory (so it cannot overlap what is written).

What it cannot compile runs the eager ``step`` (a graph break, listed in ``.breaks``; with
``fullgraph=True`` a ``GraphBreak``): a ``closure``, step hooks, a first step (the state is made
eagerly), a tensor hyperparameter, ``differentiable=True``, another optimizer class, a parameter
or gradient that is not a plain array as above, a 0-d parameter, Adam parameters whose step is
not a 0-d float tensor.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np
from numpy import ndarray

from ..autograd.fp_errors import ignore_fp_errors, restore_fp_errors
from .codegen import exec_generated

__all__ = ["CompiledOptimizerStep", "is_optimizer_step"]

CACHE_SIZE_LIMIT = 8


def _number(x: Any) -> bool:
    return type(x) is float or type(x) is int


def is_optimizer_step(fn: Any) -> bool:
    """Whether ``fn`` is an optimizer's bound ``step`` method (``opt.step``).

    >>> import retrograd as rg
    >>> opt = rg.optim.SGD([rg.nn.Parameter(rg.ones(1))], lr=0.1)
    >>> is_optimizer_step(opt.step), is_optimizer_step(print)
    (True, False)
    """
    from ..optim.optimizer import Optimizer

    owner = getattr(fn, "__self__", None)
    return isinstance(owner, Optimizer) and getattr(fn, "__func__", None) is getattr(type(owner), "step", None)


class _Variant:
    """One generated update: ``fn(*args)``."""

    def __init__(self, fn: Callable[..., Any], source: str, keep: list[Any],
                 bumps: list[tuple[Any, tuple[str, ...]]], namespace: dict[str, Any]) -> None:
        self.fn = fn
        self.source = source
        self.keep = keep  # the guarded arrays, alive while their ids are keys
        self.bumps = bumps
        self.namespace = namespace  # what ``source`` reads (``_fast_step`` reuses its lines)
        self.fast: Any = None  # its straight-line guard, update and bumps in one (``_fast_step``), once made


class CompiledOptimizerStep:
    """What ``retrograd.compile(opt.step)`` returns: call it as ``opt.step``; ``.code`` shows the
    generated update of the latest variant.

    >>> import retrograd as rg
    >>> p = rg.nn.Parameter(rg.tensor([1.0, 2.0]))
    >>> opt = rg.optim.SGD([p], lr=0.1, momentum=0.9)
    >>> step = rg.compile(opt.step)
    >>> for _ in range(3):
    ...     p.grad = rg.tensor([1.0, -1.0])
    ...     step()
    >>> [round(v, 4) for v in p.tolist()], "multiply(" in step.code
    ([0.439, 2.561], True)
    """

    def __init__(self, step: Any, *, fullgraph: bool = False) -> None:
        from ..optim.adam import Adam
        from ..optim.sgd import SGD

        self._step = step
        self._opt = step.__self__
        self._steps = (SGD.step, Adam.step)  # (an import per call would cost µs: the classes' steps, once)
        self.fullgraph = fullgraph
        self._cache: dict[Any, _Variant] = {}
        self.breaks: list[str] = []
        self.last_variant: _Variant | None = None
        self._fast: _Variant | None = None  # the variant of the latest step, tried first by its own fast function
        self.__wrapped__ = step
        self.__name__ = "step"
        self.__doc__ = getattr(step, "__doc__", None)

    @property
    def code(self) -> str:
        """The generated source of the latest compiled variant ('' before one)."""
        return "" if self.last_variant is None else self.last_variant.source

    def _note(self, reason: str) -> None:
        from .tracer import GraphBreak

        if self.fullgraph:
            raise GraphBreak(reason)
        if reason not in self.breaks:
            self.breaks.append(reason)

    def __call__(self, closure: Callable[[], Any] | None = None) -> Any:
        opt = self._opt
        if closure is not None:
            self._note("optimizer step with a closure (it runs the model): eager")
            return self._step(closure)
        if opt._optimizer_step_pre_hooks or opt._optimizer_step_post_hooks:
            self._note("optimizer step hooks: eager")
            return self._step()
        fast = self._fast
        if fast is not None:
            done = fast.fast(opt)
            if done is not False:
                if done is not True:  # bumps of tensors a live saved value holds: noted here
                    for counter, ops in done:
                        for op in ops:
                            counter.bump(op)
                return None
        found = self._collect(opt)
        if isinstance(found, str):
            self._note(found)
            return self._step()
        key, args, tensors = found
        if tensors is None:  # some state is made by this step: eagerly, as PyTorch's lazy state init
            return self._step()
        variant = self._cache.get(key)
        if variant is None:
            if len(self._cache) >= CACHE_SIZE_LIMIT:
                self._note(f"cache_size_limit ({CACHE_SIZE_LIMIT}) reached: too many recompilations")
                return self._step()
            reason = _refusal(key[0], tensors)
            variant = self._cache[key] = _EAGER if reason else self._build(key, tensors)
            if reason:
                self._note(reason)
            else:
                self.last_variant = variant
        if variant is _EAGER:
            return self._step()
        if variant.fast is None:
            variant.fast = _fast_step(opt, key, tensors, variant) or False
        self._fast = variant if variant.fast else None
        return self._run(variant, args)

    def _run(self, variant: _Variant, args: list[Any]) -> None:
        token = ignore_fp_errors()  # as the eager step's errstate: inf and nan computed silently
        try:
            variant.fn(*args)
        finally:
            restore_fp_errors(token)
        for t, ops in variant.bumps:  # (the tensors are the key's: guarded by identity)
            counter = t._counter()
            for op in ops:
                counter.bump(op)
        self._opt._opt_called = True

    # -- guards and arguments ---------------------------------------------------------------
    def _collect(self, opt: Any) -> tuple[Any, list[Any], list[Any] | None] | str:
        """(guard key, the generated function's arguments, per parameter its tensors: parameter,
        gradient, buffers; None when some state is still to be made), or the reason the step
        cannot run compiled. (Once per step: a plain loop, no generators.)"""
        kind = type(opt)
        if kind.step is self._steps[0]:
            sgd = True
        elif kind.step is self._steps[1]:
            sgd = False
        else:
            return f"optimizer {kind.__name__} has no compiled step (SGD, Adam and AdamW do): eager"
        key: list[Any] = [sgd]
        args: list[Any] = []
        tensors: list[Any] = []
        fresh = False
        state = opt.state
        for group in opt.param_groups:
            if group.get("differentiable"):
                return "differentiable=True records the update: eager"
            if sgd:
                lr, momentum, dampening, wd = group["lr"], group["momentum"], group["dampening"], group["weight_decay"]
                numbers: tuple[Any, ...] = (lr, momentum, dampening, wd)
                flags: tuple[Any, ...] = (momentum != 0, 1 - dampening == 1, bool(group["nesterov"]), momentum == 1,
                                          wd != 0, wd == 1, bool(group["maximize"]))
                names: tuple[str, ...] = ("momentum_buffer",) if momentum != 0 else ()
            else:
                beta1, beta2 = group["betas"]
                lr, eps, wd = group["lr"], group["eps"], group["weight_decay"]
                numbers = (lr, beta1, beta2, eps, wd)
                amsgrad = bool(group["amsgrad"])
                flags = (wd != 0, bool(group["decoupled_weight_decay"]), wd == 1, amsgrad, 1 - beta1 == 1,
                         1 - beta2 == 1, bool(group["maximize"]))
                names = ("exp_avg", "exp_avg_sq", "max_exp_avg_sq", "step") if amsgrad else ("exp_avg", "exp_avg_sq", "step")
            if not all(_number(x) for x in numbers):
                return "a tensor hyperparameter: eager"
            if not sgd:
                numbers = (float(lr), *numbers[1:])  # (as the eager step: ``lr = float(group["lr"])``)
            args.extend(numbers)
            ids: list[Any] = []  # per parameter: its id and its array's, each buffer's and its array's
            for p in group["params"]:
                g = p._grad
                if g is None:
                    continue
                data = p._data
                gd = g._data
                if (type(gd) is not ndarray or gd.base is not None or gd.dtype is not data.dtype
                        or gd.shape != data.shape or g._is_inference or gd is data):
                    return "a gradient that is not a plain array of its parameter's shape and dtype: eager"
                st = state.get(p) if names else None
                if names and not st:
                    fresh = True
                    continue
                args.append(data)
                args.append(gd)
                ids.append(id(p))
                ids.append(id(data))
                found = [p, g]
                for name in names:
                    buf = st.get(name)  # type: ignore[union-attr]  # (st is a dict when there are names)
                    if buf is None:
                        fresh = True
                        break
                    a = buf._data
                    if a is gd:
                        return "a gradient that is one of the optimizer's state tensors: eager"
                    args.append(a)
                    ids.append(id(buf))
                    ids.append(id(a))
                    found.append(buf)
                tensors.append(found)
            key.append((flags, tuple(ids)))
        return tuple(key), args, None if fresh else tensors

    # -- code generation --------------------------------------------------------------------
    def _build(self, key: Any, tensors: list[Any]) -> _Variant:
        """The generated update of the variant ``key`` (its arrays passed ``_refusal``)."""
        sgd = key[0]
        lines: list[str] = []
        params: list[str] = []
        metas: dict[tuple[Any, ...], int] = {}  # (shape, dtype) -> its pair of scratch arrays
        keep: list[Any] = []
        bumps: list[tuple[Any, tuple[str, ...]]] = []  # (tensor, the in-place ops the eager step runs on it)
        k = 0
        operands: dict[tuple[str, str], str] = {}  # (number's expression, dtype name) -> its 0-d array's name

        def operand(expr: str, dtype: Any) -> str:
            """A group number as a ufunc operand: a 0-d array of the parameter's dtype, made once
            per call (a Python number costs NumPy a scalar conversion in every ufunc call; it is
            converted to that dtype all the same, so the values are the same)."""
            if dtype not in _OPERAND_DTYPES:
                return expr
            name = operands.get((expr, dtype.name))
            if name is None:
                name = operands[(expr, dtype.name)] = f"c{len(operands)}"
            return name

        for gi, (flags, ids) in enumerate(key[1:]):
            params += [f"{name}{gi}" for name in (("lr", "momentum", "dampening", "wd") if sgd
                                                  else ("lr", "beta1", "beta2", "eps", "wd"))]
            per = 2 + 2 * ((1 if flags[0] else 0) if sgd else (4 if flags[3] else 3))  # ids per parameter
            for pi in range(len(ids) // per):
                ts = tensors[k]
                k += 1
                keep += [t for i, t in enumerate(ts) if i != 1] + [t._data for i, t in enumerate(ts) if i != 1]
                data = ts[0]._data
                meta = (data.shape, data.dtype.str)
                if meta not in metas:
                    metas[meta] = len(metas)
                t1, t2 = f"s{metas[meta]}a", f"s{metas[meta]}b"
                n = f"{gi}_{pi}"
                if sgd:
                    params += [f"p{n}", f"g{n}"] + ([f"m{n}"] if flags[0] else [])
                    lines += _sgd_lines(flags, n, gi, t1, t2, lambda e: operand(e, data.dtype))
                    bumps.append((ts[0], ("add_",)))
                    if flags[0]:
                        bumps.append((ts[2], ("mul_", "add_")))
                else:
                    bumps += [(ts[-1], ("add_",)), (ts[0], ("mul_", "add_") if flags[0] and flags[1] else ("add_",)),
                              (ts[2], ("add_",)), (ts[3], ("mul_", "add_"))]
                    if flags[3]:
                        bumps.append((ts[4], ("copy_",)))
                    params += [f"p{n}", f"g{n}", f"m{n}", f"v{n}"] + ([f"x{n}"] if flags[3] else []) + [f"t{n}"]
                    lines += _adam_lines(flags, n, gi, t1, t2, lambda e: operand(e, data.dtype))
        namespace: dict[str, Any] = {"multiply": np.multiply, "add": np.add, "subtract": np.subtract,
                                     "negative": np.negative, "sqrt": np.sqrt, "true_divide": np.true_divide,
                                     "maximum": np.maximum, "_math_sqrt": math.sqrt, "_asarray": np.asarray}
        head = [f"def step({', '.join(params)}):"]
        for (expr, dtype_name), name in operands.items():
            namespace[f"dt_{dtype_name}"] = np.dtype(dtype_name)
            head.append(f"    {name} = _asarray({expr}, dt_{dtype_name})")
        if metas:
            pool: list[tuple[np.ndarray, ...]] = []
            shapes = [(shape, np.dtype(dt)) for shape, dt in metas]
            namespace["_pool"] = pool
            namespace["_alloc"] = lambda: tuple(np.empty(s, d) for s, d in shapes for _ in range(2))
            names_s = ", ".join(f"s{j}a, s{j}b" for j in range(len(shapes)))
            head.append(f"    _bufs = _pool.pop() if _pool else _alloc()  # {2 * len(shapes)} scratch arrays, reused")
            head.append(f"    {names_s} = _bufs")
            lines.append("    _pool.append(_bufs)")
        if len(head) + len(lines) == 1:
            lines.append("    pass  # no parameter has a gradient: the eager step updates nothing either")
        source = "\n".join(head + lines) + "\n"
        return _Variant(exec_generated(source, "optimizer step", namespace, "step"), source, keep, bumps, namespace)


_EAGER: Any = object()  # a cached variant that runs the eager step


def _fast_step(opt: Any, key: Any, tensors: list[Any], variant: _Variant) -> Callable[[Any], Any] | None:
    """The compiled step of the one variant ``key`` as one generated function, ``fast(opt)``:
    the checks of ``CompiledOptimizerStep._collect`` as straight-line code (by identity the
    objects that variant's key names: the class's step, each group's parameters, which have a
    gradient, their arrays and state buffers; the gradients as ``_collect`` checks them; the
    numbers' types and the flags), then the variant's update and the tensors' version bumps, as
    ``_run`` makes them: True; or the (counter, ops) whose bumps must note their write site
    (the caller makes those). False, with nothing written, when a check fails (the caller then
    takes ``_collect``'s path). One call instead of a guard, an update and a loop of bumps: the glue
    cost about as much as a third of the small MLP's update.

    >>> import retrograd as rg
    >>> p = rg.nn.Parameter(rg.ones(2))
    >>> opt = rg.optim.SGD([p], lr=0.5)
    >>> step = rg.compile(opt.step)
    >>> p.grad = rg.ones(2)
    >>> step()  # the first call compiles the variant and makes its fast function
    >>> fast = step._fast.fast
    >>> fast(opt), p.tolist(), p._version
    (True, [0.0, 0.0], 2)
    >>> p.grad = None
    >>> fast(opt), p.tolist()
    (False, [0.0, 0.0])
    """
    sgd = key[0]
    kind = type(opt)
    ns: dict[str, Any] = {**variant.namespace, "_K": kind, "_STEP": kind.step, "_nd": ndarray,
                          "_ignore": ignore_fp_errors, "_restore": restore_fp_errors}
    fail = "        return False"
    lines = ["def fast(opt):",
             "    if opt.__class__ is not _K or _K.step is not _STEP:",
             fail,
             "    groups = opt.param_groups",
             f"    if len(groups) != {len(key) - 1}:",
             fail,
             "    state = opt.state",
             "    args = []"]
    k = 0
    for gi, (flags, _ids) in enumerate(key[1:]):
        group = opt.param_groups[gi]
        ns[f"_F{gi}"] = flags
        lines += [f"    g = groups[{gi}]", "    if g.get('differentiable'):", fail]
        if sgd:
            lines.append("    lr, momentum, dampening, wd = g['lr'], g['momentum'], g['dampening'], g['weight_decay']")
            numbers: tuple[str, ...] = ("lr", "momentum", "dampening", "wd")
            flag_src = ("(momentum != 0, 1 - dampening == 1, bool(g['nesterov']), momentum == 1, wd != 0, wd == 1, "
                        "bool(g['maximize']))")
            names: tuple[str, ...] = ("momentum_buffer",) if flags[0] else ()
            values = "lr, momentum, dampening, wd"
        else:
            lines.append("    beta1, beta2 = g['betas']")
            lines.append("    lr, eps, wd = g['lr'], g['eps'], g['weight_decay']")
            numbers = ("lr", "beta1", "beta2", "eps", "wd")
            flag_src = ("(wd != 0, bool(g['decoupled_weight_decay']), wd == 1, bool(g['amsgrad']), 1 - beta1 == 1, "
                        "1 - beta2 == 1, bool(g['maximize']))")
            names = ("exp_avg", "exp_avg_sq", "max_exp_avg_sq", "step") if flags[3] else ("exp_avg", "exp_avg_sq", "step")
            values = "float(lr), beta1, beta2, eps, wd"
        lines.append("    if " + " or ".join(f"({n}.__class__ is not float and {n}.__class__ is not int)"
                                            for n in numbers) + ":")
        lines.append(fail)
        lines += [f"    if {flag_src} != _F{gi}:", fail, f"    args += ({values})", "    ps = g['params']",
                  f"    if len(ps) != {len(group['params'])}:", fail]
        for pi, p in enumerate(group["params"]):
            ns[f"_P{gi}_{pi}"] = p
            lines += [f"    p = ps[{pi}]", f"    if p is not _P{gi}_{pi}:", fail, "    gr = p._grad"]
            if p._grad is None:
                lines += ["    if gr is not None:", fail]
                continue
            ts = tensors[k]
            k += 1
            ns[f"_D{gi}_{pi}"] = ts[0]._data
            lines += ["    if gr is None:", fail, "    gd = gr._data", "    d = p._data",
                      f"    if (d is not _D{gi}_{pi} or gd.__class__ is not _nd or gd.base is not None or gd.dtype is not d.dtype",
                      "            or gd.shape != d.shape or gr._is_inference or gd is d):", fail,
                      "    args += (d, gd)"]
            if names:
                lines += ["    st = state.get(p)", "    if st is None:", fail]
            for bi, (name, buf) in enumerate(zip(names, ts[2:])):
                ns[f"_B{gi}_{pi}_{bi}"], ns[f"_A{gi}_{pi}_{bi}"] = buf, buf._data
                lines += [f"    b = st.get({name!r})",
                          f"    if b is not _B{gi}_{pi}_{bi} or b._data is not _A{gi}_{pi}_{bi} or _A{gi}_{pi}_{bi} is gd:",
                          fail, f"    args.append(_A{gi}_{pi}_{bi})"]
    # The update's own lines (after its ``def``), on the arguments collected, with NumPy's error
    # state as ``_run`` sets it; then each tensor's bumps (``VersionCounter.bump``), as ``_run``.
    header, *body = variant.source.splitlines()
    lines.append(f"    {header[len('def step('):-len('):')]}, = args")
    lines += ["    _tok = _ignore()  # as the eager step's errstate: inf and nan computed silently", "    try:"]
    lines += [f"    {line}" for line in body]
    lines += ["    finally:", "        _restore(_tok)"]
    # ``counter.bump(op)`` for each op, inline while no saved value holds an older version (no
    # write site to note); otherwise left to the caller, whose frame is the package's, so that
    # the site noted is the user's line (``user_site`` skips the package, not compiled code).
    lines.append("    _late = None")
    for j, (t, ops) in enumerate(variant.bumps):  # (the tensors are the key's: guarded by identity)
        ns[f"_T{j}"], ns[f"_O{j}"] = t, ops
        lines += [f"    _c = _T{j}._version_counter", "    if _c is None:", f"        _c = _T{j}._counter()",
                  "    if _c.marks is None:", f"        _c.value += {len(ops)}", "    else:",
                  f"        _late = [(_c, _O{j})] if _late is None else [*_late, (_c, _O{j})]"]
    lines += ["    opt._opt_called = True", "    return True if _late is None else _late"]
    return exec_generated("\n".join(lines) + "\n", "optimizer step", ns, "fast")  # type: ignore[no-any-return]


def _refusal(sgd: bool, tensors: list[Any]) -> str | None:
    """Why the generated update could not write these tensors as the eager step does, or None:
    each parameter's arrays must pass the optimizers' own ``_plain_arrays`` (the eager NumPy
    path's test), own their memory (no overlap across parameters), and not be 0-d; Adam's step a
    writeable 0-d float array of its own."""
    from ..optim.optimizer import _plain_arrays

    for ts in tensors:
        arrays = _plain_arrays(*(ts if sgd else ts[:-1]))
        if arrays is None or arrays[0].ndim == 0 or any(a.base is not None for a in arrays):
            return "a parameter or state buffer that is not a plain writeable float array of its own: eager"
        if not sgd:
            steps = ts[-1]._data
            if (type(steps) is not np.ndarray or steps.shape != () or steps.dtype.kind != "f" or steps.base is not None
                    or not steps.flags.writeable or ts[-1]._is_inference):
                return "an Adam step count that is not a 0-d float tensor: eager"
    return None


_OPERAND_DTYPES = (np.dtype(np.float32), np.dtype(np.float64))


def _scaled(value: str, alpha: str, scratch: str, c: Callable[[str], str] = str) -> str:
    """``add_``'s ``other * alpha`` (``other`` itself when alpha is 1), as the eager op computes it."""
    return f"({value} if {alpha} == 1 else multiply({value}, {c(alpha)}, out={scratch}))"


def _sgd_lines(flags: tuple[Any, ...], n: str, gi: int, t1: str, t2: str,
               c: Callable[[str], str] = str) -> list[str]:
    """SGD's update of parameter ``n``: ``optim/sgd.py``'s operations, in order; ``c`` names a
    group number's expression as a ufunc operand."""
    momentum_on, no_damp, nesterov, momentum_one, wd_on, wd_one, maximize = flags
    p, g, m = f"p{n}", f"g{n}", f"m{n}"
    out = [f"    # parameter {n}"]
    d = g
    if maximize:
        out.append(f"    negative({g}, out={t1})  # -grad")
        d = t1
    if wd_on:
        other = p if wd_one else f"multiply({p}, {c(f'wd{gi}')}, out={t2})"
        out.append(f"    add({d}, {other}, out={t1})  # d_p.add(p, alpha=weight_decay)")
        d = t1
    if momentum_on:
        out.append(f"    multiply({m}, {c(f'momentum{gi}')}, out={m})  # buf.mul_(momentum)")
        other = d if no_damp else f"multiply({d}, {c(f'1 - dampening{gi}')}, out={t2})"
        out.append(f"    add({m}, {other}, out={m})  # .add_(d_p, alpha=1 - dampening)")
        if nesterov:
            other = m if momentum_one else f"multiply({m}, {c(f'momentum{gi}')}, out={t2})"
            out.append(f"    add({d}, {other}, out={t1})  # d_p.add(buf, alpha=momentum)")
            d = t1
        else:
            d = m
    out.append(f"    add({p}, {_scaled(d, f'-lr{gi}', t2, c)}, out={p})  # p.add_(d_p, alpha=-lr)")
    return out


def _adam_lines(flags: tuple[Any, ...], n: str, gi: int, t1: str, t2: str,
                c: Callable[[str], str] = str) -> list[str]:
    """Adam's (AdamW's) update of parameter ``n``: ``optim/adam.py``'s operations, in order; ``c``
    names a group number's expression as a ufunc operand."""
    wd_on, decoupled, wd_one, amsgrad, b1_one, b2_one, maximize = flags
    p, g, m, v, x, t = f"p{n}", f"g{n}", f"m{n}", f"v{n}", f"x{n}", f"t{n}"
    out = [f"    # parameter {n}", f"    add({t}, 1, out={t})  # step_t.add_(1)"]
    d = g
    if maximize:
        out.append(f"    negative({g}, out={t1})  # -grad")
        d = t1
    if wd_on:
        if decoupled:
            out.append(f"    multiply({p}, {c(f'1 - lr{gi} * wd{gi}')}, out={p})  # p.mul_(1 - lr * weight_decay)")
        else:
            other = p if wd_one else f"multiply({p}, {c(f'wd{gi}')}, out={t2})"
            out.append(f"    add({d}, {other}, out={t1})  # grad.add(p, alpha=weight_decay)")
            d = t1
    out.append(f"    subtract({d}, {m}, out={t2})  # grad - exp_avg")
    other = t2 if b1_one else f"multiply({t2}, {c(f'1 - beta1{gi}')}, out={t2})"
    out.append(f"    add({m}, {other}, out={m})  # exp_avg.add_(..., alpha=1 - beta1)")
    out.append(f"    multiply({v}, {c(f'beta2{gi}')}, out={v})  # exp_avg_sq.mul_(beta2)")
    out.append(f"    multiply({d}, {d}, out={t2})  # grad * grad")
    other = t2 if b2_one else f"multiply({t2}, {c(f'1 - beta2{gi}')}, out={t2})"
    out.append(f"    add({v}, {other}, out={v})  # .add_(grad * grad, alpha=1 - beta2)")
    out.append(f"    step = {t}.item()")
    out.append(f"    step_size = lr{gi} / (1 - beta1{gi} ** step)  # lr / bias_correction1")
    top = v
    if amsgrad:
        out.append(f"    maximum({x}, {v}, out={x})  # max_exp_avg_sq.copy_(maximum(max_exp_avg_sq, exp_avg_sq))")
        top = x
    out.append(f"    sqrt({top}, out={t1})")
    out.append(f"    true_divide({t1}, _math_sqrt(1 - beta2{gi} ** step), out={t1})  # / bias_correction2_sqrt")
    out.append(f"    add({t1}, {c(f'eps{gi}')}, out={t1})  # .add_(eps)")
    out.append(f"    true_divide({m}, {t1}, out={t1})  # exp_avg / denom")
    out.append(f"    add({p}, {_scaled(t1, '-step_size', t1)}, out={p})  # p.add_(..., alpha=-step_size)")
    return out
