"""``retrograd.debug.check_op`` (module ``op_check``): property-based gradcheck of your own op.

``check_op(fn, *example_inputs)`` draws inputs around the examples with hypothesis (shapes that
broadcast against them, size-1 dimensions and fewer dimensions, non-contiguous layouts, edge
values) and runs ``gradcheck`` and ``gradgradcheck`` in float64 on each, plus a float32 backward;
the first failure is shrunk to the smallest input that still fails (closest to your examples)
and reported with the failing check's message.

>>> import retrograd as rg
>>> from retrograd.debug import check_op
>>> report = check_op(lambda x, y: x * y.sin(), rg.rand(2, 3), rg.rand(2, 3), max_examples=5)
>>> report.passed
True
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..autograd.function import Function
from ..autograd.grad_mode import no_grad
from ..autograd.gradcheck import gradcheck, gradgradcheck
from ..tensor import Tensor

__all__ = ["check_op", "CheckOpReport", "CheckOpFailure"]

HYPOTHESIS_MISSING = "check_op needs hypothesis: pip install retrograd[debug] (or pip install hypothesis)"

EDGE_KINDS = ("zero", "negative", "large", "small")
LARGE, SMALL = 1e4, 1e-4
LAYOUTS = ("contiguous", "strided", "transposed")


@dataclass
class CheckOpFailure:
    """The smallest failing input hypothesis found, and what failed on it."""

    check: str  # "gradcheck", "gradgradcheck", "float32 backward", "non-contiguous forward", "backward raised"
    message: str
    inputs: list[Any]  # the failing inputs (float64 tensors, in the failing layout)
    description: str  # each input's shape, layout and values

    def __str__(self) -> str:
        return f"{self.check} failed on:\n{self.description}\n{self.message}"


@dataclass
class CheckOpReport:
    """What ``check_op`` found: ``passed``, how many inputs it checked (``examples``) and
    skipped (``rejected``: ``fn`` raised on them or returned NaN/inf), and the ``failure``."""

    passed: bool
    examples: int
    rejected: int
    failure: CheckOpFailure | None = None
    checks: list[str] = field(default_factory=list)

    def __bool__(self) -> bool:
        return self.passed

    def __str__(self) -> str:
        head = (f"check_op: {'passed' if self.passed else 'FAILED'} ({self.examples} inputs checked, "
                f"{self.rejected} skipped; checks: {', '.join(self.checks)})")
        return head if self.failure is None else f"{head}\nsmallest failing input: {self.failure}"


class _Failed(Exception):
    """A check failed on one drawn input (hypothesis shrinks on it)."""


def _describe(inputs: list[Any], layouts: list[str]) -> str:
    lines = []
    for i, (t, layout) in enumerate(zip(inputs, layouts)):
        if isinstance(t, Tensor):
            data = t._data
            strides = tuple(s // data.itemsize for s in data.strides)
            values = np.array2string(data, precision=6, separator=", ", threshold=60)
            where = f", {layout} (strides {strides})" if data.ndim else ""
            lines.append(f"  input {i}: shape {tuple(data.shape)}, {data.dtype}{where}: " + values.replace("\n", "\n    "))
        else:
            lines.append(f"  input {i}: {t!r}")
    return "\n".join(lines)


def _lay_out(array: np.ndarray, layout: str) -> np.ndarray:
    """``array``'s values in the given memory layout. A strided copy has NaN in the gaps, so a
    backward that reads memory as if it were contiguous sees them."""
    if layout == "transposed" and array.ndim >= 2:
        order = tuple(reversed(range(array.ndim)))
        return np.ascontiguousarray(array.transpose(order)).transpose(order)
    if layout == "strided" and array.ndim >= 1:
        buffer = np.full(array.shape[:-1] + (2 * array.shape[-1],), np.nan, array.dtype)
        view = buffer[..., ::2]
        view[...] = array
        return view
    return np.array(array)


def _outputs(result: Any) -> list[Any]:
    items = result if isinstance(result, (tuple, list)) else (result,)
    return [o for o in items if isinstance(o, Tensor)]


def _finite(outputs: list[Any]) -> bool:
    return all(np.isfinite(o._data).all() for o in outputs if o._data.dtype.kind in "fcV")


def check_op(
    fn: Callable[..., Any] | type[Function],
    *example_inputs: Any,
    positive: bool = False,
    shapes: bool = True,
    noncontiguous: bool = True,
    edge_values: bool | Iterable[str] = True,
    gradgrad: bool = True,
    float32: bool = True,
    max_examples: int = 40,
    derandomize: bool = True,
    eps: float = 1e-6,
    atol: float = 1e-5,
    rtol: float = 1e-3,
) -> CheckOpReport:
    """Property-based gradcheck (and gradgradcheck) of ``fn`` around ``example_inputs``.

    ``fn`` is a function of tensors or an ``autograd.Function`` (its ``apply`` is checked). The
    examples' floating-point tensors are varied: their shape (with ``shapes``: trailing
    dimensions kept, fewer leading ones or size-1 ones, so that they broadcast against the
    others, down to 0-d), their layout (with ``noncontiguous``: transposed, or every other
    element of a larger buffer), and their values (near the examples; with ``edge_values``
    also zeros, negatives, large (1e4) and small (1e-4) magnitudes, or only the kinds named
    among ``"zero", "negative", "large", "small"``; ``positive=True`` keeps every value > 0).
    Other inputs are passed as given. Inputs ``fn`` raises on, or maps to NaN/inf, are outside
    its domain and skipped. The checks run in float64; with ``float32`` the backward is also run
    in float32 and must give gradients of that dtype close to float64's. Differentiated are the
    examples' tensors that require grad (all floating ones if none does).

    Deterministic by default (``derandomize``). Returns a ``CheckOpReport``; on failure its
    ``failure`` holds the smallest failing input hypothesis shrank to, and the check's message.

    >>> import retrograd as rg
    >>> class Square(rg.autograd.Function):
    ...     @staticmethod
    ...     def forward(ctx, x):
    ...         ctx.save_for_backward(x)
    ...         return x * x
    ...     @staticmethod
    ...     def backward(ctx, g):
    ...         (x,) = ctx.saved_tensors
    ...         return g * 2 * x.abs()  # wrong for x < 0
    >>> report = check_op(Square, rg.tensor([0.5, 2.0]), max_examples=20)
    >>> report.passed, report.failure.check
    (False, 'gradcheck')
    >>> print(report.failure.description)
      input 0: shape (), float64: -0.5
    """
    try:
        from hypothesis import HealthCheck, Phase, Verbosity, given, reject, settings
        from hypothesis import strategies as st
        from hypothesis.errors import Unsatisfiable
    except ImportError as exc:
        raise ImportError(HYPOTHESIS_MISSING) from exc

    if isinstance(fn, type) and issubclass(fn, Function):
        fn = fn.apply
    if not callable(fn):
        raise TypeError(f"check_op expects a function or an autograd.Function, got {type(fn).__name__}")
    kinds = _edge_kinds(edge_values, positive)
    examples = list(example_inputs)
    varied = [i for i, t in enumerate(examples) if isinstance(t, Tensor) and t._data.dtype.kind in "fV"]
    if not varied:
        raise ValueError("check_op needs at least one floating-point tensor among the example inputs")
    wanted = [i for i in varied if examples[i].requires_grad] or varied
    bases = {i: examples[i].detach()._data.astype(np.float64) for i in varied}
    if positive:
        bases = {i: np.maximum(np.abs(a), SMALL) for i, a in bases.items()}

    def build(arrays: dict[int, np.ndarray], layouts: dict[int, str], dtype: Any = np.float64) -> list[Any]:
        inputs = list(examples)
        for i in varied:
            data = _lay_out(arrays[i].astype(dtype), layouts[i])
            inputs[i] = Tensor._make(data, requires_grad=i in wanted)
        return inputs

    # The examples themselves must run, and inside fn's domain.
    first = build(bases, dict.fromkeys(varied, "contiguous"))
    if not _finite(_outputs(fn(*first))):
        raise ValueError("check_op: fn returned NaN or inf on the example inputs; give examples inside its domain")

    @st.composite
    def cases(draw: Any) -> tuple[dict[int, np.ndarray], dict[int, str]]:
        arrays, layouts = {}, {}
        for i in varied:
            a = bases[i]
            if shapes and a.ndim:
                # Shrinking heads for the smallest shape: fewer leading dimensions, then size 1.
                kept = draw(st.integers(0, a.ndim))
                a = a[(0,) * (a.ndim - kept)]
                full = [draw(st.booleans()) for _ in range(a.ndim)]
                a = a[tuple(slice(None) if whole else slice(0, 1) for whole in full)]
            a = np.array(a, dtype=np.float64)
            flat = a.reshape(-1)
            for k in range(flat.size):
                kind = draw(st.sampled_from(("example", "near") + kinds))
                v = flat[k]
                if kind == "near":
                    v = v + draw(st.floats(-0.5, 0.5, allow_nan=False)) * max(1.0, abs(v))
                elif kind == "zero":
                    v = 0.0
                elif kind == "negative":
                    v = -abs(v) if v else -1.0
                elif kind == "large":
                    v = LARGE * (1.0 if v >= 0 else -1.0)
                elif kind == "small":
                    v = SMALL * (1.0 if v >= 0 else -1.0)
                if positive:
                    v = max(abs(v), SMALL)
                flat[k] = v
            arrays[i] = a
            choices = LAYOUTS if noncontiguous and a.ndim >= 2 else LAYOUTS[:2] if noncontiguous and a.ndim else \
                LAYOUTS[:1]
            layouts[i] = draw(st.sampled_from(choices))
        return arrays, layouts

    counts = {"checked": 0, "rejected": 0}
    last: dict[str, Any] = {}
    checks = ["gradcheck"] + (["gradgradcheck"] if gradgrad else []) + (["float32 backward"] if float32 else []) + (
        ["non-contiguous forward"] if noncontiguous else [])

    def fail(check: str, message: str, inputs: list[Any], layouts: dict[int, str]) -> None:
        names = [layouts.get(i, "as given") for i in range(len(inputs))]
        last["failure"] = CheckOpFailure(check, message, inputs, _describe(inputs, names))
        raise _Failed(check)

    def body(case: tuple[dict[int, np.ndarray], dict[int, str]]) -> None:
        arrays, layouts = case
        inputs = build(arrays, layouts)
        try:
            out = _outputs(fn(*inputs))
        except Exception:  # noqa: BLE001 - outside fn's domain (shapes or values it refuses)
            counts["rejected"] += 1
            reject()
        if not _finite(out):
            counts["rejected"] += 1
            reject()
        counts["checked"] += 1
        if noncontiguous and any(layouts[i] != "contiguous" for i in varied):
            plain = _outputs(fn(*build(arrays, dict.fromkeys(varied, "contiguous"))))
            for k, (a, b) in enumerate(zip(out, plain)):
                # (BLAS may sum a transposed operand in another order: agree to rounding, not bits)
                scale = float(np.max(np.abs(b._data), initial=0.0, where=np.isfinite(b._data)))
                if a.shape != b.shape or not np.allclose(a._data, b._data, rtol=1e-9, atol=1e-12 * scale,
                                                         equal_nan=True):
                    fail("non-contiguous forward", f"output {k} differs from the output for contiguous copies of the "
                         f"same values:\n{a._data}\nvs\n{b._data}", inputs, layouts)
        # Central differences cannot resolve better than the rounding of f itself, about
        # ulp(max|f|) / eps: with large inputs (1e4 squared is 1e8) that exceeds atol.
        biggest = max((float(np.max(np.abs(o._data))) for o in out if o._data.size), default=0.0)
        case_atol = max(atol, 10 * np.finfo(np.float64).eps * biggest / eps)
        for name, check in (("gradcheck", gradcheck), ("gradgradcheck", gradgradcheck if gradgrad else None)):
            if check is None:
                continue
            fresh = build(arrays, layouts)
            try:
                check(fn, tuple(fresh), eps=eps, atol=case_atol, rtol=rtol)
            except Exception as exc:  # noqa: BLE001 - a mismatch, or a backward that raised
                what = name if type(exc).__name__ == "GradcheckError" else f"{name} (backward raised)"
                fail(what, f"{type(exc).__name__}: {exc}", fresh, layouts)
        if float32:
            _check_float32(fn, build, arrays, layouts, wanted, fail)

    # The examples as given first (a failure there needs no search), then hypothesis's draws.
    try:
        body((dict(bases), dict.fromkeys(varied, "contiguous")))
    except _Failed:
        return CheckOpReport(False, counts["checked"], counts["rejected"], last["failure"], checks)
    run = given(cases())(body)
    run = settings(max_examples=max_examples, derandomize=derandomize, database=None, deadline=None,
                   phases=(Phase.explicit, Phase.generate, Phase.shrink), report_multiple_bugs=False,
                   suppress_health_check=list(HealthCheck), print_blob=False, verbosity=Verbosity.quiet)(run)
    try:
        run()
    except _Failed:
        return CheckOpReport(False, counts["checked"], counts["rejected"], last["failure"], checks)
    except Unsatisfiable:
        pass  # every drawn input was outside the domain: the examples alone passed
    return CheckOpReport(True, counts["checked"], counts["rejected"], None, checks)


def _edge_kinds(edge_values: bool | Iterable[str], positive: bool) -> tuple[str, ...]:
    if edge_values is True:
        kinds: tuple[str, ...] = EDGE_KINDS
    elif edge_values is False:
        kinds = ()
    else:
        kinds = tuple(edge_values)
        unknown = [k for k in kinds if k not in EDGE_KINDS]
        if unknown:
            raise ValueError(f"check_op: unknown edge value kind(s) {unknown}; choose among {list(EDGE_KINDS)}")
    if positive:
        kinds = tuple(k for k in kinds if k not in ("zero", "negative"))
    return kinds


def _check_float32(fn: Callable[..., Any], build: Callable[..., list[Any]], arrays: dict[int, np.ndarray],
                   layouts: dict[int, str], wanted: list[int], fail: Callable[..., None]) -> None:
    """The backward in float32: gradients of the inputs' dtype, close to float64's (float32's
    precision), wherever float32 can hold the values."""
    from ..autograd import grad

    grads = {}
    for dtype in (np.float64, np.float32):
        inputs = build(arrays, layouts, dtype)
        try:
            outs = [o for o in _outputs(fn(*inputs)) if o.requires_grad]
            if not outs:
                return
            if dtype is np.float32 and not _finite(outs):
                return  # overflows in float32: nothing to compare
            with no_grad():
                seeds = [Tensor._make(np.ones(o.shape, o._data.dtype)) for o in outs]
            got = grad(outs, [inputs[i] for i in wanted], seeds, allow_unused=True)
        except Exception as exc:  # noqa: BLE001
            if dtype is np.float64:
                raise
            fail("float32 backward", f"the backward raised in float32: {type(exc).__name__}: {exc}", inputs, layouts)
            return
        grads[dtype] = (inputs, got)
    inputs, g32 = grads[np.float32]
    _, g64 = grads[np.float64]
    for i, a, b in zip(wanted, g32, g64):
        if a is None or b is None:
            continue
        if a._data.dtype != np.float32:
            fail("float32 backward", f"the gradient of float32 input {i} is {a._data.dtype}", inputs, layouts)
        scale = max(1.0, float(np.max(np.abs(b._data)))) if b._data.size else 1.0
        if not np.allclose(a._data, b._data, rtol=1e-2, atol=1e-2 * scale, equal_nan=True):
            fail("float32 backward", f"the float32 gradient of input {i} differs from the float64 one beyond float32 "
                 f"precision:\n{a._data}\nvs\n{b._data}", inputs, layouts)
