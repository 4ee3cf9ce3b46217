"""``gradcheck`` and ``gradgradcheck``: compare autograd's Jacobians with finite differences.

Use float64 inputs: central differences with ``eps=1e-6`` are only accurate in double precision.
The checks and their messages are PyTorch's: a Jacobian mismatch, a backward that gives different
results when run twice (``nondet_tol``), outputs whose shape depends on the perturbed values,
backward functions that fail on undefined output gradients (``check_undefined_grad``), and
``fast_mode`` (one random projection of each Jacobian instead of the whole matrix).
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from .grad_mode import enable_grad, no_grad


class GradcheckError(RuntimeError):
    """Raised by gradcheck when analytical and numerical Jacobians differ."""



NONDET_NOTE = """\n
NOTE: If your op relies on non-deterministic operations i.e., it is listed here:
https://pytorch.org/docs/stable/generated/torch.use_deterministic_algorithms.html
this failure might be expected.

If you are adding a new operator, please file an issue and then use one of the
workarounds. The workaround depends on how your test invokes gradcheck/gradgradcheck.
If the test
- manually invokes gradcheck/gradgradcheck, then call gradcheck/gradgradcheck
  with `nondet_tol=<tol>` as a keyword argument.
- is OpInfo-based (e.g., in test_ops_gradients.py), then modify the OpInfo for the test
  to have `gradcheck_nondet_tol=<tol>`.
- is a Module test (e.g., in common_nn.py), then modify the corresponding
  module_test entry to have `gradcheck_nondet_tol=<tol>`
"""

FAST_MODE_NOTE = (
    "\nThe above quantities relating the numerical and analytical jacobians are computed \n"
    "in fast mode. See: https://github.com/pytorch/pytorch/issues/53876 for more background \n"
    "about fast mode. Below, we recompute numerical and analytical jacobians in slow mode:\n\n"
)

UNDEFINED_GRAD_NOTE = 'Please look at "Notes about undefined output gradients" in "tools/autograd/derivatives.yaml"'


def _as_tuple(x: Any) -> tuple[Any, ...]:
    return tuple(x) if isinstance(x, (tuple, list)) else (x,)


def _differentiable_outputs(outputs: tuple[Any, ...]) -> list[Any]:
    """The outputs gradcheck differentiates: float tensors (for the vjp helpers below)."""
    from ..tensor import Tensor

    return [o for o in outputs if isinstance(o, Tensor) and o._data.dtype.kind in "fcV"]


def _tensor(array: np.ndarray) -> Any:
    from ..tensor import Tensor

    return Tensor._make(array)


def _float_positions(outputs: tuple[Any, ...]) -> list[int]:
    from ..tensor import Tensor

    return [k for k, o in enumerate(outputs) if isinstance(o, Tensor) and o._data.dtype.kind in "fcV"]


def _perturbed_outputs(func: Callable[..., Any], inputs: tuple[Any, ...], i: int, delta: Any,
                       positions: list[int], where: str, eps: float) -> list[np.ndarray]:
    """(f(x - delta) - f(x + delta))'s parts: the outputs at ``positions`` with input ``i`` moved
    by -delta and +delta, as float64 differences over 2 (the caller divides by eps)."""
    data = inputs[i]._data
    original = data.copy()
    try:
        data[...] = original - delta
        minus = _as_tuple(func(*inputs))
        if _float_positions(minus) != positions:  # (the finite differences run under no_grad)
            raise GradcheckError(
                f"function returned {len(positions)} differentiable outputs with grad enabled but "
                f"{len(_float_positions(minus))} under no_grad"
            )
        minus_arrays = [_real_flat(minus[k]._data) for k in positions]
        minus_meta = [(minus[k].shape, minus[k].dtype) for k in positions]
        data[...] = original + delta
        plus = _as_tuple(func(*inputs))
        plus_arrays = [_real_flat(plus[k]._data) for k in positions]
        plus_meta = [(plus[k].shape, plus[k].dtype) for k in positions]
    finally:
        data[...] = original
    for (shape_a, dtype_a), (shape_b, dtype_b) in zip(minus_meta, plus_meta):
        if shape_a != shape_b:
            raise AssertionError(
                f"Expected `func` to return outputs with the same shape when inputs are perturbed {where}by "
                f"{eps}, but got: shapes {shape_a} and {shape_b}."
            )
        if dtype_a != dtype_b:
            raise AssertionError(
                f"Expected `func` to return outputs with the same dtype when inputs are perturbed {where}by "
                f"{eps}, but got: dtypes {dtype_a} and {dtype_b}."
            )
    return [(b - a) / 2 for a, b in zip(minus_arrays, plus_arrays)]


# Complex values are checked as PyTorch's gradcheck checks them: a complex number is two real
# ones, so a complex input has a row for each real part, then one for each imaginary part, and a
# complex output a column for each. The vjp with grad_output 1 (then 1j) at an output element
# gives, in the conjugate Wirtinger convention, d(part)/dx + i d(part)/dy at each input element.
def _real_flat(array: np.ndarray) -> np.ndarray:
    """An array's values as float64, flat; a complex array's real parts then imaginary parts."""
    if array.dtype.kind == "c":
        return np.concatenate([array.real.reshape(-1), array.imag.reshape(-1)]).astype(np.float64)
    return array.astype(np.float64).reshape(-1)


def _real_size(array: np.ndarray) -> int:
    return 2 * array.size if array.dtype.kind == "c" else array.size


def _from_real_flat(vector: np.ndarray, like: np.ndarray) -> np.ndarray:
    """The inverse of ``_real_flat``: a real vector as an array shaped and typed as ``like``."""
    if like.dtype.kind == "c":
        n = like.size
        return (vector[:n] + 1j * vector[n:]).reshape(like.shape).astype(like.dtype)
    return vector.reshape(like.shape).astype(like.dtype)


def _numerical_jacobians(func: Callable[..., Any], inputs: tuple[Any, ...], diff: list[int],
                         positions: list[int], eps: float, sizes: list[int]) -> list[list[np.ndarray]]:
    """J[row][k] with shape (numel(input diff[row]), numel(output positions[k])), by central
    differences."""
    result: list[list[np.ndarray]] = []
    with no_grad():
        for i in diff:
            data = inputs[i]._data
            columns: list[list[np.ndarray]] = [[] for _ in positions]
            for step in ((eps, eps * 1j) if data.dtype.kind == "c" else (eps,)):
                for idx in np.ndindex(data.shape):
                    delta = np.zeros(data.shape, data.dtype)
                    delta[idx] = step
                    diffs = _perturbed_outputs(func, inputs, i, delta, positions, f"on index {idx} ", eps)
                    for k, d in enumerate(diffs):
                        columns[k].append(d / eps)
            result.append([
                np.stack(col) if col else np.zeros((0, size)) for col, size in zip(columns, sizes)
            ])
    return result


def _vjp_rows(output: Any, inputs: list[Any], check_grad_dtypes: bool) -> list[np.ndarray]:
    """The Jacobian of ``output`` with respect to each of ``inputs``, one vjp per output element."""
    from . import grad

    n_out = _real_size(output._data)
    jacobians = [np.zeros((_real_size(t._data), n_out)) for t in inputs]
    for j in range(n_out):
        onehot = np.zeros(n_out)
        onehot[j] = 1
        g_out = _tensor(_from_real_flat(onehot, output._data))
        grads = grad(output, inputs, g_out, retain_graph=True, allow_unused=True)
        for row, (g, t) in enumerate(zip(grads, inputs)):
            if g is None:
                continue
            _check_gradient(g, t, check_grad_dtypes)
            jacobians[row][:, j] = _real_flat(g._data) if t._data.dtype.kind == "c" else g._data.real.reshape(-1)
    return jacobians


def _check_gradient(g: Any, t: Any, check_grad_dtypes: bool) -> None:
    if g._data.shape != t._data.shape:
        raise GradcheckError("Analytical gradient has incorrect size")
    if check_grad_dtypes and g._data.dtype != t._data.dtype:
        raise GradcheckError("Gradient has dtype mismatch")


def _check_reentrant(first: list[np.ndarray], second: list[np.ndarray], nondet_tol: float) -> None:
    for a, b in zip(first, second):
        if a.size and np.abs(a - b).max() > nondet_tol:
            raise GradcheckError(
                "Backward is not reentrant, i.e., running backward with same input and grad_output multiple "
                "times gives different values, although analytical gradient matches numerical gradient."
                f"The tolerance for nondeterminism was {nondet_tol}." + NONDET_NOTE
            )


def _mismatch(output_idx: int, input_idx: int, numerical: Any, analytical: Any) -> str:
    return (f"Jacobian mismatch for output {output_idx:d} with respect to input {input_idx:d},\n"
            f"numerical:{numerical}\nanalytical:{analytical}\n")


def _sizes(outputs: tuple[Any, ...], positions: list[int]) -> list[int]:
    return [_real_size(outputs[k]._data) for k in positions]


def _check_no_differentiable_outputs(func: Callable[..., Any], inputs: tuple[Any, ...], diff: list[int],
                                     func_out: tuple[Any, ...], positions: list[int], eps: float) -> None:
    for per_input in _numerical_jacobians(func, inputs, diff, positions, eps, _sizes(func_out, positions)):
        for jacobian in per_input:
            if np.any(jacobian != 0):
                raise GradcheckError("Numerical gradient for function expected to be zero")


def _slow_check(func: Callable[..., Any], inputs: tuple[Any, ...], diff: list[int], func_out: tuple[Any, ...],
                positions: list[int], eps: float, atol: float, rtol: float, nondet_tol: float,
                check_grad_dtypes: bool) -> None:
    numerical = _numerical_jacobians(func, inputs, diff, positions, eps, _sizes(func_out, positions))
    diff_inputs = [inputs[i] for i in diff]
    output_idx = 0
    for k, pos in enumerate(positions):
        output = func_out[pos]
        if not output.requires_grad:
            continue
        analytical = _vjp_rows(output, diff_inputs, check_grad_dtypes)
        _check_reentrant(analytical, _vjp_rows(output, diff_inputs, check_grad_dtypes), nondet_tol)
        for row, a in enumerate(analytical):
            n = numerical[row][k]
            if not np.allclose(a, n, rtol=rtol, atol=atol, equal_nan=True):
                dtype = diff_inputs[row]._data.real.dtype  # PyTorch's Jacobians have the input's dtype
                raise GradcheckError(_mismatch(output_idx, row, _tensor(n.astype(dtype)), _tensor(a.astype(dtype))))
        output_idx += 1


def _fast_check(func: Callable[..., Any], inputs: tuple[Any, ...], diff: list[int], func_out: tuple[Any, ...],
                positions: list[int], eps: float, atol: float, rtol: float, nondet_tol: float,
                check_grad_dtypes: bool) -> None:
    """PyTorch's fast mode: compare v^T J u, for random unit vectors u (per input) and v (per
    output), computed by one finite difference along u and by one vjp with v."""
    from . import grad

    rng = np.random.default_rng(0)

    def unit(n: int) -> np.ndarray:
        vec = rng.random(n)
        norm = np.linalg.norm(vec)
        return vec / norm if norm else vec

    diff_inputs = [inputs[i] for i in diff]
    used = [(k, pos) for k, pos in enumerate(positions) if func_out[pos].requires_grad]
    all_u = [unit(_real_size(t._data)) for t in diff_inputs]
    all_v = [unit(_real_size(func_out[pos]._data)) for _, pos in used]
    numerical = np.zeros((len(diff), len(used)))
    with no_grad():
        for row, (i, u) in enumerate(zip(diff, all_u)):
            delta = _from_real_flat(u * eps, inputs[i]._data)
            diffs = _perturbed_outputs(func, inputs, i, delta, positions, "", eps)
            for col, (k, _) in enumerate(used):
                numerical[row, col] = float(all_v[col] @ (diffs[k] / eps))
    analytical = np.zeros_like(numerical)
    for col, (_, pos) in enumerate(used):
        output = func_out[pos]
        runs = []
        for _ in range(2):  # twice: a backward must give the same result every time
            g_out = _tensor(_from_real_flat(all_v[col], output._data))
            grads = grad(output, diff_inputs, g_out, retain_graph=True, allow_unused=True)
            values = []
            for g, t, u in zip(grads, diff_inputs, all_u):
                if g is None:
                    values.append(0.0)
                    continue
                _check_gradient(g, t, check_grad_dtypes)
                values.append(float((_real_flat(g._data) if t._data.dtype.kind == "c" else
                                     g._data.real.reshape(-1)) @ u))
            runs.append(np.array(values))
        _check_reentrant([runs[0]], [runs[1]], nondet_tol)
        analytical[:, col] = runs[0]
    for row in range(len(diff)):
        for col in range(len(used)):
            a, n = analytical[row, col], numerical[row, col]
            tol = atol * float(all_u[row].sum()) * float(all_v[col].sum())
            if not np.isclose(a, n, rtol=rtol, atol=tol, equal_nan=True):
                raise GradcheckError(_mismatch(col, row, float(n), float(a))
                                     + _slow_mode_report(func, inputs, diff, func_out, positions, used[col][0],
                                                         row, eps, atol, rtol))


def _slow_mode_report(func: Callable[..., Any], inputs: tuple[Any, ...], diff: list[int],
                      func_out: tuple[Any, ...], positions: list[int], k: int, row: int, eps: float,
                      atol: float, rtol: float) -> str:
    """After a fast-mode failure, the full Jacobians of the failing pair, as PyTorch reports."""
    numerical = _numerical_jacobians(func, inputs, [diff[row]], positions, eps, _sizes(func_out, positions))[0][k]
    analytical = _vjp_rows(func_out[positions[k]], [inputs[diff[row]]], False)[0]
    max_diff = np.abs(numerical - analytical).max() if numerical.size else np.float64(0)
    report = (FAST_MODE_NOTE + f"Numerical:\n {_tensor(numerical)}\nAnalytical:\n{_tensor(analytical)}\n\n"
              f"The max per-element difference (slow mode) is: {_tensor(np.asarray(max_diff))}.\n")
    if np.allclose(analytical, numerical, rtol=rtol, atol=atol):
        report += "\nFast gradcheck failed but element-wise differences are small: slow mode would have passed."
    return report


def _check_undefined_grad(func: Callable[..., Any], inputs: tuple[Any, ...], diff: list[int]) -> None:
    """Backward functions must cope with undefined (None) output gradients: all of them at
    once, and, for several outputs, each one in turn; input gradients must then be None or 0."""
    from . import grad

    diff_inputs = [inputs[i] for i in diff]

    def outputs() -> list[Any]:
        return [o for o in _as_tuple(func(*inputs)) if _is_tensor(o) and o.requires_grad]

    first = outputs()
    cases = [[_undefined(o) for o in first]]
    if len(first) > 1:
        for undefined in range(len(first)):
            cases.append([_undefined(o) if k == undefined else o for k, o in enumerate(outputs())])
    for case in cases:
        zeros = [_tensor(np.zeros(o._data.shape, o._data.dtype)) for o in case]
        try:
            grads = grad(case, diff_inputs, zeros, allow_unused=True)
        except RuntimeError as e:
            raise GradcheckError(
                f"Expected backward function to handle undefined output grads. {UNDEFINED_GRAD_NOTE}"
            ) from e
        for g in grads:
            if g is not None and np.any(g._data != 0):
                raise GradcheckError(
                    "Expected all input grads to be undefined or zero when all output grads are undefined or "
                    f"zero. {UNDEFINED_GRAD_NOTE}"
                )


def _is_tensor(x: Any) -> bool:
    from ..tensor import Tensor

    return isinstance(x, Tensor)


_UNDEFINED_GRAD: Any = None


def _undefined(output: Any) -> Any:
    """``output`` through an identity whose backward turns any gradient into an undefined one."""
    global _UNDEFINED_GRAD
    if _UNDEFINED_GRAD is None:
        from .function import Function

        class UndefinedGrad(Function):
            @staticmethod
            def forward(ctx: Any, x: Any) -> Any:
                return x.clone()

            @staticmethod
            def backward(ctx: Any, g: Any) -> Any:
                return None

        _UNDEFINED_GRAD = UndefinedGrad
    return _UNDEFINED_GRAD.apply(output)


def gradcheck(
    func: Callable[..., Any],
    inputs: Any,
    *,
    eps: float = 1e-6,
    atol: float = 1e-5,
    rtol: float = 1e-3,
    raise_exception: bool = True,
    nondet_tol: float = 0.0,
    check_undefined_grad: bool = True,
    check_grad_dtypes: bool = False,
    check_batched_grad: bool = False,
    check_batched_forward_grad: bool = False,
    check_forward_ad: bool = False,
    check_backward_ad: bool = True,
    fast_mode: bool = False,
    masked: bool | None = None,
) -> bool:
    """Check ``func``'s gradients against central finite differences (PyTorch's checks and
    messages). ``check_batched_grad`` is accepted; batched gradients are computed one vector at a
    time here (there is no vmap), so there is no separate batched path to check.

    >>> import retrograd as rg
    >>> x = rg.tensor([0.3, 0.7], dtype=rg.float64, requires_grad=True)
    >>> rg.autograd.gradcheck(lambda t: (t.sin() * t).sum(), (x,))
    True
    """
    if not (check_forward_ad or check_backward_ad):
        raise AssertionError("Expected at least one of check_forward_ad or check_backward_ad to be True")
    if check_batched_grad and not check_backward_ad:
        raise AssertionError("Setting check_batched_grad=True requires check_backward_ad to be True")
    if check_batched_forward_grad and not check_forward_ad:
        raise AssertionError("Setting check_batched_forward_grad=True requires check_forward_ad to be True")
    try:
        return _gradcheck(func, _as_tuple(inputs), eps, atol, rtol, nondet_tol, check_undefined_grad,
                          check_grad_dtypes, fast_mode, check_forward_ad, check_backward_ad)
    except GradcheckError:
        if raise_exception:
            raise
        return False


def _gradcheck(func: Callable[..., Any], inputs: tuple[Any, ...], eps: float, atol: float, rtol: float,
               nondet_tol: float, check_undefined_grad: bool, check_grad_dtypes: bool, fast_mode: bool,
               check_forward_ad: bool = False, check_backward_ad: bool = True) -> bool:
    diff = [i for i, t in enumerate(inputs) if _is_tensor(t) and t._requires_grad]
    if not diff:
        raise ValueError("gradcheck expects at least one input tensor to require gradient, but none of them have "
                         "requires_grad=True.")
    for i in diff:
        if inputs[i]._data.dtype not in (np.float64, np.complex128):
            warnings.warn(
                f"Input #{i} requires gradient and is not a double precision floating point or complex. This "
                "check will likely fail if all the inputs are not of double precision floating point or complex. ",
                UserWarning, stacklevel=3,
            )
    func_out = _as_tuple(func(*inputs))
    if any(_is_tensor(o) and o._data.dtype.kind == "b" for o in func_out):
        # PyTorch differences every tensor output (outb - outa), and a bool difference is refused.
        raise RuntimeError("Subtraction, the `-` operator, with two bool tensors is not supported. "
                           "Use the `^` or `logical_xor()` operator instead.")
    positions = _float_positions(func_out)
    if not any(func_out[pos].requires_grad for pos in positions):
        _check_no_differentiable_outputs(func, inputs, diff, func_out, positions, eps)
        return True
    if check_forward_ad:
        _forward_check(func, inputs, diff, func_out, positions, eps, atol, rtol)
    if not check_backward_ad:
        return True
    check = _fast_check if fast_mode else _slow_check
    check(func, inputs, diff, func_out, positions, eps, atol, rtol, nondet_tol, check_grad_dtypes)
    if check_undefined_grad:
        _check_undefined_grad(func, inputs, diff)
    return True


def _jvp_rows(func: Callable[..., Any], inputs: tuple[Any, ...], i: int, positions: list[int]) -> list[np.ndarray]:
    """The Jacobian of each output (``positions``) with respect to input ``i`` by forward AD, one
    JVP per (real) input element, laid out as ``_numerical_jacobians``: (input, output) elements."""
    from . import forward_ad

    data = inputs[i]._data
    rows: list[list[np.ndarray]] = [[] for _ in positions]
    for step in ((1, 1j) if data.dtype.kind == "c" else (1,)):
        for idx in np.ndindex(data.shape):
            onehot = np.zeros(data.shape, data.dtype)
            onehot[idx] = step
            with forward_ad.dual_level():
                args = list(inputs)
                args[i] = forward_ad.make_dual(inputs[i], _tensor(onehot))
                outs = _as_tuple(func(*args))
                for k, pos in enumerate(positions):
                    t = forward_ad.unpack_dual(outs[pos]).tangent
                    like = outs[pos]._data
                    rows[k].append(np.zeros(_real_size(like)) if t is None else _real_flat(np.asarray(t._data, like.dtype)))
    return [np.stack(r) if r else np.zeros((0, 0)) for r in rows]


def _forward_check(func: Callable[..., Any], inputs: tuple[Any, ...], diff: list[int], func_out: tuple[Any, ...],
                   positions: list[int], eps: float, atol: float, rtol: float) -> None:
    """``check_forward_ad``: the Jacobians computed with forward AD against finite differences."""
    numerical = _numerical_jacobians(func, inputs, diff, positions, eps, _sizes(func_out, positions))
    for row, i in enumerate(diff):
        analytical = _jvp_rows(func, inputs, i, positions)
        for k in range(len(positions)):
            n, a = numerical[row][k], analytical[k]
            if n.size == 0 and a.size == 0:
                continue
            if a.shape != n.shape or not np.allclose(a, n, rtol=rtol, atol=atol, equal_nan=True):
                dtype = inputs[i]._data.real.dtype
                raise GradcheckError(
                    f"Jacobian computed with forward mode mismatch for output {k:d} with respect to input {row:d},\n"
                    f"numerical:{_tensor(n.astype(dtype))}\nanalytical:{_tensor(a.astype(dtype))}\n")


def gradgradcheck(
    func: Callable[..., Any],
    inputs: Any,
    grad_outputs: Sequence[Any] | None = None,
    *,
    eps: float = 1e-6,
    atol: float = 1e-5,
    rtol: float = 1e-3,
    gen_non_contig_grad_outputs: bool = False,
    raise_exception: bool = True,
    nondet_tol: float = 0.0,
    check_undefined_grad: bool = True,
    check_grad_dtypes: bool = False,
    check_batched_grad: bool = False,
    check_fwd_over_rev: bool = False,
    check_rev_over_rev: bool = True,
    fast_mode: bool = False,
    masked: bool = False,
    seed: int = 0,
) -> bool:
    """Check second derivatives: gradcheck of the (create_graph) vector-Jacobian product.

    >>> import retrograd as rg
    >>> x = rg.tensor([0.3, 0.7], dtype=rg.float64, requires_grad=True)
    >>> rg.autograd.gradgradcheck(lambda t: t.exp() * t, (x,))
    True
    """
    from ..tensor import Tensor
    from . import grad

    if not (check_fwd_over_rev or check_rev_over_rev):
        raise AssertionError("Expected at least one of check_fwd_over_rev or check_rev_over_rev to be True")
    inputs = _as_tuple(inputs)
    diff = [i for i, t in enumerate(inputs) if isinstance(t, Tensor) and t._requires_grad]
    outs = _differentiable_outputs(_as_tuple(func(*inputs)))
    if grad_outputs is None:
        rng = np.random.default_rng(seed)
        grad_outputs = [Tensor._make(rng.standard_normal(o._data.shape).astype(o._data.dtype), True) for o in outs]
    else:
        grad_outputs = list(_as_tuple(grad_outputs))
    n = len(inputs)

    def vjp(*args: Any) -> tuple[Any, ...]:
        # The finite-difference pass calls this under no_grad; the vjp itself needs a graph.
        with enable_grad():
            ins, gos = args[:n], args[n:]
            outputs = _differentiable_outputs(_as_tuple(func(*ins)))
            pairs = [(o, g) for o, g in zip(outputs, gos) if o.requires_grad]
            if not pairs:
                return ()
            grads = grad([o for o, _ in pairs], [ins[i] for i in diff], [g for _, g in pairs],
                         create_graph=True, allow_unused=True)
        # Unused inputs get explicit zeros so every call returns the same outputs.
        return tuple(g if g is not None else ins[i] * 0 for i, g in zip(diff, grads))

    return gradcheck(vjp, inputs + tuple(grad_outputs), eps=eps, atol=atol, rtol=rtol,
                     raise_exception=raise_exception, nondet_tol=nondet_tol,
                     check_undefined_grad=check_undefined_grad, check_grad_dtypes=check_grad_dtypes,
                     check_batched_grad=check_batched_grad and check_rev_over_rev, fast_mode=fast_mode,
                     check_forward_ad=check_fwd_over_rev, check_backward_ad=check_rev_over_rev)
