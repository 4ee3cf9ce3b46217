"""Neural-network ops, one block per topic: ``softmax``/``log_softmax``; private elementwise
helpers under PyTorch's node names (and ``torch.norm``'s node); the linear layers' ``addmm`` and
``_trilinear``; activations; padding; pixel and channel shuffles; ``pdist``; ``embedding``/
``embedding_bag``; normalisation (batch, layer, group norm; instance norm's repeated affine
parameters); losses.

Dedicated rules where a composite would be unstable or where PyTorch records one node
(``softplus``, ``log_softmax``, ``binary_cross_entropy_with_logits``, ``native_batch_norm``...);
``cross_entropy`` composes ``log_softmax`` and ``nll_loss`` as in PyTorch. Every backward rule is
written in retrograd ops, so second derivatives come for free. A few elementwise helpers PyTorch
records under their own node names (``xlogy``, ``add``/``mul`` with a C++ scalar) are private
entries here; ``erf``, ``rsqrt`` and ``clamp_min`` are the elementwise table's own entries.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from .._dtype import REDUCED_FLOATS, scalar_type_name
from ..autograd.forward_ad import DUAL
from ..autograd.fp_errors import quiet_forward
from ..autograd.grad_mode import INFERENCE_CONTEXTS, STATE
from ..tensor import Tensor
from . import reduce as _R
from . import shape as _S
from .elementwise import CLAMP_COMPLEX, _cj, _sigmoid, erf, rsqrt, where  # noqa: F401 - rsqrt: for nn.functional.rms_norm
from .elementwise import clamp_min_scalar as clamp_min
from .op import Op, apply, prerun, with_array_rule
from .op import versioned_array as _array
from .saved_attrs import derived
from .shape import cat

_make = Tensor._make
_UINT64 = np.dtype(np.uint64)


def _check_float(x: np.ndarray, kernel: str) -> None:
    if x.dtype.kind not in "fcV":
        raise NotImplementedError(f'"{kernel}" not implemented for \'{scalar_type_name(x.dtype)}\'')


def _check_real_float(x: np.ndarray, kernel: str) -> None:
    """PyTorch's missing-kernel error unless ``x`` is a real float array: the activations, softmax
    family and losses have no complex kernel (NumPy would compare or exponentiate complex values)."""
    if x.dtype.kind not in "fV":
        raise NotImplementedError(f'"{kernel}" not implemented for \'{scalar_type_name(x.dtype)}\'')


def _softmax_kernel(x: np.ndarray, dim: int, name: str) -> None:
    last = x.ndim == 0 or dim == x.ndim - 1
    _check_real_float(x, f"{name}_lastdim_kernel_impl" if last else f"{name}_kernel_impl")


_HALF = np.dtype(np.float16)


def _in_float(fn: Any) -> Any:
    """Run a softmax-family kernel of half arrays in float32 and cast back, as PyTorch's CPU kernels
    do (its opmath type); other dtypes go straight through."""
    def kernel(*args: Any) -> np.ndarray:
        if args[0].dtype not in REDUCED_FLOATS:
            return fn(*args)  # type: ignore[no-any-return]
        arrays = [a.astype(np.float32) if isinstance(a, np.ndarray) else a for a in args]
        return fn(*arrays).astype(args[0].dtype)  # type: ignore[no-any-return]

    kernel.__name__ = fn.__name__
    return kernel


# -- softmax, log_softmax ---------------------------------------------------------------------
@_in_float
def _softmax(x: np.ndarray, dim: int) -> np.ndarray:
    _softmax_kernel(x, dim, "softmax")
    shifted = x - x.max(axis=dim, keepdims=True) if x.size else x
    e = np.exp(shifted)
    e /= np.add.reduce(e, axis=dim, keepdims=True)
    return e


@_in_float
def _log_softmax(x: np.ndarray, dim: int) -> np.ndarray:
    _softmax_kernel(x, dim, "log_softmax")
    if not x.size:
        return x.copy()
    shifted = x - np.maximum.reduce(x, axis=dim, keepdims=True)
    shifted -= np.log(np.add.reduce(np.exp(shifted), axis=dim, keepdims=True))
    return shifted


@_in_float
def _softmax_backward(grad: np.ndarray, out: np.ndarray, dim: int) -> np.ndarray:
    return out * (grad - np.add.reduce(grad * out, axis=dim, keepdims=True))


# The softmax family's JVPs, written out (each op's ``jvp=``): the transpose would cost a backward
# pass per call on a hot path, every cross-entropy under forward AD. ``rule(tangents, inputs,
# params, outputs)`` returns the output tangents; a tangent is None where an input has none.
def _softmax_jvp(tangents: Any, inputs: Any, params: Any, outputs: Any) -> Any:
    (t,), (result,), dim = tangents, outputs, params[0]
    if _on_arrays(t, result):
        r, ta = result._data, t._data
        try:
            return [Tensor._make(np.asarray(r * (ta - np.add.reduce(ta * r, axis=dim, keepdims=True))))]
        except RuntimeWarning:  # (warnings as errors: the tensor formula below is quiet about inf and NaN)
            pass
    return [result * (t - (t * result).sum(dim, keepdim=True))]


def _log_softmax_jvp(tangents: Any, inputs: Any, params: Any, outputs: Any) -> Any:
    (t,), (result,), dim = tangents, outputs, params[0]
    if _on_arrays(t, result):
        ta = t._data
        try:
            return [Tensor._make(np.asarray(ta - np.add.reduce(ta * np.exp(result._data), axis=dim, keepdims=True)))]
        except RuntimeWarning:  # (as in ``_softmax_jvp``)
            pass
    if type(dim) is int and 0 <= dim < result._data.ndim:  # (the sum's own path: what ``Tensor.sum``
        # runs after normalising ``dim``, which here costs as much as the recording; same node)
        return [t - _R.sum_dim.unary(t * result.exp(), (dim,), True, None)]
    return [t - (t * result.exp()).sum(dim, keepdim=True)]


def _on_arrays(t: Any, result: Any) -> bool:
    """Whether a softmax-family tangent can be computed on the arrays, the same operations as the
    tensor formula: no graph wanted (grad mode off: the backward pass of forward over reverse,
    or ``jvp(grad(f))``), float32/float64 (a half dtype rounds per op, as the formula does), not 0-d."""
    data = result._data
    return (not STATE.grad_enabled or not (t._requires_grad or result._requires_grad)) and data.ndim > 0 \
        and data.dtype in _FULL_FLOATS and t._data.dtype == data.dtype


_FULL_FLOATS = (np.dtype(np.float32), np.dtype(np.float64))


def _without_graph(*tensors: Any) -> bool:
    """Whether a tangent made from these needs no graph (then it is computed on their arrays:
    the softmax backward ops run once per backward pass in forward over reverse)."""
    return not STATE.grad_enabled or not any(t is not None and t._requires_grad for t in tensors)


def _arrays_of(*tensors: Any) -> list[Any]:
    return [None if t is None else t._data for t in tensors]


@_in_float
def _softmax_backward_tangent(g: np.ndarray, r: np.ndarray, tg: Any, tr: Any, dim: int) -> np.ndarray:
    out: Any = None
    if tg is not None:
        out = r * (tg - np.add.reduce(tg * r, axis=dim, keepdims=True))
    if tr is not None:
        part = (tr * (g - np.add.reduce(g * r, axis=dim, keepdims=True))
                - r * np.add.reduce(g * tr, axis=dim, keepdims=True))
        out = part if out is None else out + part
    return out  # type: ignore[no-any-return]


@_in_float
def _log_softmax_backward_tangent(g: np.ndarray, r: np.ndarray, tg: Any, tr: Any, dim: int) -> np.ndarray:
    e = np.exp(r)
    out: Any = None
    if tg is not None:
        out = tg - e * np.add.reduce(tg, axis=dim, keepdims=True)
    if tr is not None:
        part = -(e * tr) * np.add.reduce(g, axis=dim, keepdims=True)
        out = part if out is None else out + part
    return out  # type: ignore[no-any-return]


def _softmax_backward_jvp(tangents: Any, inputs: Any, params: Any, outputs: Any) -> Any:
    # out = r * (g - S(g r)), S the sum over dim: d out = dr * (g - S(g r)) + r * (dg - S(dg r + g dr))
    (tg, tr), (g, r), dim = tangents, inputs, params[0]
    if _without_graph(tg, tr, g, r):
        return [Tensor._make(np.asarray(_softmax_backward_tangent(*_arrays_of(g, r, tg, tr), dim)))]
    out = None
    if tg is not None:
        out = r * (tg - (tg * r).sum(dim, keepdim=True))
    if tr is not None:
        part = tr * (g - (g * r).sum(dim, keepdim=True)) - r * (g * tr).sum(dim, keepdim=True)
        out = part if out is None else out + part
    return [out]


def _log_softmax_backward_jvp(tangents: Any, inputs: Any, params: Any, outputs: Any) -> Any:
    # out = g - exp(r) * S(g): d out = dg - exp(r) * (S(dg) + dr * S(g))
    (tg, tr), (g, r), dim = tangents, inputs, params[0]
    if _without_graph(tg, tr, g, r):
        return [Tensor._make(np.asarray(_log_softmax_backward_tangent(*_arrays_of(g, r, tg, tr), dim)))]
    e = r.exp()
    out = tg - e * tg.sum(dim, keepdim=True) if tg is not None else None
    if tr is not None:
        part = -(e * tr) * g.sum(dim, keepdim=True)
        out = part if out is None else out + part
    return [out]


# PyTorch's fused backward of softmax, y * (g - sum(g * y)); its own vjp w.r.t. g is the same
# function of (gg, y), so it is differentiable again.
softmax_backward: Op = Op(
    "softmax_backward", _softmax_backward, node="SoftmaxBackwardDataBackward0", inputs=("grad", "result"),
    params=("dim",), dtype="promote",
    grads=(lambda gg, result, dim: softmax_backward(gg, result, dim),
           lambda gg, grad, result, dim: gg * (grad - (grad * result).sum(dim, keepdim=True))
           - grad * (gg * result).sum(dim, keepdim=True)), jvp=_softmax_backward_jvp)

softmax = Op("softmax", quiet_forward(_softmax), node="SoftmaxBackward0", params=("dim",),
             grads=(lambda grad, result, dim: softmax_backward(grad, result, dim),), jvp=_softmax_jvp)



def _safe_softmax(x: np.ndarray, dim: int) -> np.ndarray:
    # Rows that are entirely -inf (fully masked attention) give zeros instead of NaN.
    _softmax_kernel(x, dim, "softmax")
    if not x.size:
        return x.copy()
    top = np.max(x, axis=dim, keepdims=True)
    masked = np.isneginf(top)
    with np.errstate(invalid="ignore"):
        e = np.exp(x - np.where(masked, 0, top))
    total = np.sum(e, axis=dim, keepdims=True)
    return np.where(masked, 0, e / np.where(masked, 1, total)).astype(x.dtype, copy=False)


safe_softmax = Op("_safe_softmax", _safe_softmax, node="SafeSoftmaxBackward0", params=("dim",),
                  grads=(lambda grad, result, dim: result * (grad - (grad * result).sum(dim, keepdim=True)),),
                  jvp="transpose")


def _log_softmax_backward_full(grad: np.ndarray, out: np.ndarray, dim: int) -> np.ndarray:
    # grad - exp(out) * sum(grad), the same operations written into one new array.
    if grad.dtype != out.dtype or not out.ndim:  # (promoted dtypes; 0-d: NumPy gives scalars)
        return grad - np.exp(out) * np.add.reduce(grad, axis=dim, keepdims=True)  # type: ignore[no-any-return]
    scaled = np.exp(out)
    np.multiply(scaled, np.add.reduce(grad, axis=dim, keepdims=True), out=scaled)
    return np.subtract(grad, scaled, out=scaled)  # type: ignore[no-any-return]


_log_softmax_backward = _in_float(_log_softmax_backward_full)


def _plain_arrays(*tensors: Tensor) -> bool:
    """Whether a rule may compute on these tensors' arrays and wrap the result: plain float32/
    float64 arrays of one dtype, and nothing the op call path would add (a node under
    create_graph, a tangent under forward AD, the inference flag; a compile trace, which records
    the op calls: ``INFERENCE_CONTEXTS[0]`` alone, as the generated ``apply``'s array path asks).
    Inside a forward-AD level, tensors without a tangent at it give the ops' outputs none either
    (the root gradient of forward over reverse, which reaches the loss's rules)."""
    dtype = tensors[0]._data.dtype
    if INFERENCE_CONTEXTS[0] or dtype not in _FULL_FLOATS:
        return False
    tracked = STATE.grad_enabled
    level = DUAL[0]
    for t in tensors:
        data = t._data
        if type(data) is not np.ndarray or data.dtype != dtype or (tracked and t._requires_grad):
            return False
        if level is not None:
            fw = t._fw_grad
            if fw is not None and fw[0] is level:
                return False
    return True


def _log_softmax_grad(grad: Tensor, result: Tensor, dim: int) -> Tensor:
    """LogSoftmaxBackward0's rule, ``log_softmax_backward(grad, result, dim)``; without a graph to
    record, its kernel on the arrays (the op call path costs as much again as the kernel)."""
    if _plain_arrays(grad, result):
        try:
            return _make(_log_softmax_backward_full(grad._data, result._data, dim))
        except RuntimeWarning:  # (an overflow: the op call path runs it quietly)
            pass
    return log_softmax_backward(grad, result, dim)  # type: ignore[no-any-return]


def _keepdim_sum(x: np.ndarray, dim: int) -> np.ndarray:
    """``x.sum(dim, keepdim=True)``'s forward on an array (``reduce._sum``, the dim normalised as
    ``Tensor.sum`` does it): the array rules below compute what their tensor rules' ops compute."""
    return _R._sum(x, _R.normalize_dims(dim, x.ndim), True, None)


def _log_softmax_backward_grad_arrays(gg: np.ndarray, result: np.ndarray, dim: int) -> np.ndarray:
    # gg - sum(gg * exp(result)), as its rule's ops compute it.
    return np.subtract(gg, _keepdim_sum(np.multiply(gg, np.exp(result)), dim))  # type: ignore[no-any-return]


def _log_softmax_backward_result_grad_arrays(gg: np.ndarray, grad: np.ndarray, result: np.ndarray,
                                             dim: int) -> np.ndarray:
    # -gg * exp(result) * sum(grad), as its rule's ops compute it.
    return np.multiply(np.multiply(np.negative(gg), np.exp(result)), _keepdim_sum(grad, dim))  # type: ignore[no-any-return]


def _log_softmax_backward_result_grad(gg: Tensor, grad: Tensor, result: Tensor, dim: int) -> Tensor:
    """``-gg * exp(result) * sum(grad)``: the rule of the second backward of every cross entropy
    (a Hessian-vector product); on the arrays, the same operations, when there is no graph (the
    generated ``apply`` decides that first; this test serves other callers)."""
    if _plain_arrays(gg, grad, result):
        try:
            return _make(np.asarray(_log_softmax_backward_result_grad_arrays(gg._data, grad._data, result._data, dim)))
        except RuntimeWarning:  # (an overflow: the tensor ops run it quietly)
            pass
    return -gg * result.exp() * grad.sum(dim, keepdim=True)  # type: ignore[no-any-return]


# PyTorch's fused backward of log_softmax, g - exp(y) * sum(g); differentiable again through
# its own rules (vjp w.r.t. g: gg - sum(gg * exp(y)); w.r.t. y: -gg * exp(y) * sum(g)), each
# with its array form: both run in the second backward of every cross entropy.
log_softmax_backward: Op = Op(
    "log_softmax_backward", _log_softmax_backward, node="LogSoftmaxBackwardDataBackward0",
    inputs=("grad", "result"), params=("dim",), dtype="promote",
    grads=(with_array_rule(lambda gg, result, dim: gg - (gg * result.exp()).sum(dim, keepdim=True),
                           _log_softmax_backward_grad_arrays),
           with_array_rule(lambda gg, grad, result, dim: _log_softmax_backward_result_grad(gg, grad, result, dim),
                           _log_softmax_backward_result_grad_arrays)),
    jvp=_log_softmax_backward_jvp)


def _log_softmax_grad_tangent(tangents: Any, grad: np.ndarray, result: np.ndarray, dim: int) -> Any:
    # What ``log_softmax_backward``'s JVP computes for the rule's result, the same function.
    return _log_softmax_backward_tangent(grad, result, tangents[0], tangents[1], dim)


log_softmax = Op("log_softmax", quiet_forward(_log_softmax), node="LogSoftmaxBackward0", params=("dim",),
                 grads=(with_array_rule(_log_softmax_grad, lambda grad, result, dim: _log_softmax_backward_full(grad, result, dim),
                                        _log_softmax_grad_tangent),),
                 jvp=_log_softmax_jvp)


# -- private elementwise helpers with PyTorch's node names ------------------------------------

# ``erf``, ``rsqrt`` and ``clamp_min`` (ErfBackward0, RsqrtBackward0, ClampMinBackward0) are the
# elementwise table's own entries, imported above: one definition per op.

# ``tensor + scalar`` and ``tensor * scalar`` / ``tensor / scalar`` as recorded from C++ (the
# scalar is not wrapped in a tensor, so PyTorch's node is the Scalar overload: AddBackward1...).
add_scalar = Op("add", lambda x, other: np.add(x, other), node="AddBackward1", params=("other",),
                dtype="promote+params", grads=(lambda grad: grad,), jvp="elementwise")
mul_scalar = Op("mul", lambda x, other: np.multiply(x, other), node="MulBackward1", params=("other",),
                dtype="promote+params", grads=(lambda grad, other: grad * other,), jvp="elementwise")
sub_scalar = Op("sub", lambda x, other: np.subtract(x, other), node="SubBackward1", params=("other",),
                dtype="promote+params", grads=(lambda grad: grad,), jvp="elementwise")
div_scalar = Op("div", lambda x, other: np.true_divide(x, other), node="DivBackward1", params=("other",),
                dtype="promote+params", grads=(lambda grad, other: grad / other,), jvp="elementwise")

# ``torch.norm(x, p, dim, keepdim)``: the same values as ``linalg.vector_norm``, PyTorch's other node.
norm = Op("norm", _R._vector_norm, node="NormBackward1", params=("ord", "dim", "keepdim"),
          grads=(_R.vector_norm_backward,), jvp="transpose")


def _xlogy(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    with np.errstate(divide="ignore", invalid="ignore"):
        out = np.where(x == 0, 0.0, x * np.log(y))
    return np.where(np.isnan(y), np.nan, out).astype(np.result_type(x, y), copy=False)


def _xlogy_self_grad(grad: Tensor, self: Tensor, other: Tensor) -> Tensor:
    # PyTorch's xlogy(grad, other), 0 only where self == 0 and other <= 0: at self == 0 with
    # other > 0 the derivative is log(other), not 0.
    return apply(xlogy, (grad, other)).masked_fill((self == 0) & (other <= 0), 0.0)


xlogy = Op("xlogy", _xlogy, node="XlogyBackward0", inputs=("self", "other"), dtype="float",
           grads=(_xlogy_self_grad,
                  lambda grad, self, other: grad * self / other), jvp="elementwise")


# -- linear layers: addmm (linear with a bias), _trilinear (bilinear) -------------------------
_MM: Any = None  # linalg's mm kernel, imported on first use (a function-level import costs µs per call)


def _addmm(bias: np.ndarray, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    dtype = b.dtype
    if dtype in REDUCED_FLOATS:
        return _addmm_opmath(bias, a, b)
    if (a.ndim == 2 and b.ndim == 2 and a.shape[1] == b.shape[0] and a.dtype == dtype
            and bias.dtype == dtype):  # every nn.Linear call: nothing left for the checks to refuse
        out = a @ b
    else:
        out = _checked_mm(bias, a, b)
    if bias.ndim <= out.ndim and bias.shape == out.shape[out.ndim - bias.ndim:]:
        # The bias added into the product (a fresh array): no second result array.
        np.add(out, bias, out=out)
        return out
    return np.add(bias, out).astype(a.dtype, copy=False)


def _addmm_opmath(bias: np.ndarray, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """A float16/bfloat16 ``addmm``: the product and the bias added in float32, rounded once, as
    PyTorch's CPU kernel does (NumPy's bfloat16 ``@`` returns float32)."""
    if not a.dtype == bias.dtype == b.dtype:
        return _checked_mm(bias, a, b)  # raises PyTorch's dtype error
    wide = bias.astype(np.float32)
    out = _checked_mm(wide, a.astype(np.float32), b.astype(np.float32))
    return np.add(out, wide).astype(b.dtype)  # type: ignore[no-any-return]


def _checked_mm(bias: np.ndarray, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """``a @ b`` with PyTorch's errors for addmm's operands (dtypes, then mm's shape checks)."""
    global _MM
    if _MM is None:
        from .linalg import _mm as _MM
    dtype = b.dtype
    for name, x in (("self", bias), ("mat1", a)):
        if x.dtype != dtype:
            raise RuntimeError(f"{name} and mat2 must have the same dtype, but got {scalar_type_name(x.dtype)} "
                               f"and {scalar_type_name(dtype)}")
    return _MM(a, b)  # type: ignore[no-any-return]


# ``addmm(bias, input, weight.t())``: how ``linear`` runs on a matrix with a bias.
addmm = Op("addmm", _addmm, node="AddmmBackward0", inputs=("self", "mat1", "mat2"),
           grads=(lambda grad: grad,
                  with_array_rule(lambda grad, mat2: grad.mm(_cj(mat2).t()), lambda grad, mat2: np.matmul(grad, mat2.T),
                                  "multilinear"),
                  # (grad.T @ mat1).T: laid out as ``weight.t()`` is, so the weight's gradient comes
                  # out row-major like the weight (the gradient layout contract), with no copy.
                  with_array_rule(lambda grad, mat1: grad.t().mm(_cj(mat1)).t(),
                                  lambda grad, mat1: np.matmul(grad.T, mat1).T, "multilinear")),
           jvp="affine_multilinear")


def _trilinear(a: np.ndarray, w: np.ndarray, b: np.ndarray) -> np.ndarray:
    return np.einsum("mi,oij,mj->mo", a, w, b, optimize=True)


def _trilinear_grad(grad: Tensor, input1: Tensor, weight: Tensor, input2: Tensor,
                    needs: tuple[bool, ...]) -> tuple[Tensor | None, ...]:
    m, i = input1.shape
    o, _, j = weight.shape
    ga = gw = gb = None
    if needs[0] or needs[2]:
        # (M, O) @ (O, I*J) -> (M, I, J): the weight contracted with the output gradient.
        gw_flat = grad.mm(weight.reshape(o, i * j)).reshape(m, i, j)
        if needs[0]:
            ga = (gw_flat * input2.unsqueeze(1)).sum(2)
        if needs[2]:
            gb = (gw_flat * input1.unsqueeze(2)).sum(1)
    if needs[1]:
        outer = (input1.unsqueeze(2) * input2.unsqueeze(1)).reshape(m, i * j)
        gw = grad.t().mm(outer).reshape(o, i, j)
    return ga, gw, gb


# ``bilinear``'s core, ``out[m, o] = sum_ij a[m, i] w[o, i, j] b[m, j]``.
trilinear = Op("_trilinear", _trilinear, node="TrilinearBackward0", inputs=("input1", "weight", "input2"),
               grads=_trilinear_grad, jvp="multilinear")


# -- activations ------------------------------------------------------------------------------


def _hardtanh(x: np.ndarray, min_val: float, max_val: float) -> np.ndarray:
    # The input on a tie (-0.0 stays), NaN passes: PyTorch's clamp (which refuses complex).
    if x.dtype.kind == "c":
        raise NotImplementedError(CLAMP_COMPLEX)
    return np.minimum(max_val, np.maximum(min_val, x)).astype(x.dtype, copy=False)


# Rules in this block test the zeroed region and select (``where``), as PyTorch's kernels do: a NaN
# input keeps its gradient, and an inf/NaN upstream gradient never reaches a zeroed position.
# The rule reads the result (inside (min, max) exactly where the input is), so the in-place form
# ``hardtanh_`` needs no copy of the input; PyTorch records HardtanhBackward0 for both.
hardtanh = Op("hardtanh", _hardtanh, node="HardtanhBackward0", params=("min_val", "max_val"),
              grads=(lambda grad, result, min_val, max_val:
                     where((result <= min_val) | (result >= max_val), 0.0, grad),), jvp="elementwise")


def _leaky_relu(x: np.ndarray, negative_slope: float) -> np.ndarray:
    _check_real_float(x, "leaky_relu_cpu")
    return np.where(x > 0, x, x * negative_slope).astype(x.dtype, copy=False)


def _leaky_relu_inplace_grad(grad: Tensor, result: Tensor, negative_slope: float) -> Tensor:
    if negative_slope < 0:
        raise RuntimeError(
            "In-place leakyReLu backward calculation is triggered with a negative slope which is not supported. "
            "This is caused by calling in-place forward function with a negative slope, please call out-of-place "
            "version instead. File an issue at https://github.com/pytorch/pytorch if you do require supporting "
            "in-place leakRelu backward calculation with negative slope"
        )
    return where(result > 0, grad, grad * negative_slope)


leaky_relu = Op("leaky_relu", _leaky_relu, node="LeakyReluBackward0", params=("negative_slope",),
                grads=(lambda grad, self, negative_slope: where(self > 0, grad, grad * negative_slope),),
                jvp="elementwise")
leaky_relu_ = Op("leaky_relu", _leaky_relu, node="LeakyReluBackward1", params=("negative_slope",),
                 grads=(_leaky_relu_inplace_grad,), jvp="elementwise")

SELU_ALPHA = 1.6732632423543772848170429916717
SELU_SCALE = 1.0507009873554804934193349852946


def _elu(x: np.ndarray, alpha: float, scale: float, input_scale: float) -> np.ndarray:
    _check_real_float(x, "elu_cpu")
    negative = scale * alpha * np.expm1(np.minimum(x, 0) * input_scale)
    return np.where(x > 0, x * scale, negative).astype(x.dtype, copy=False)


def _elu_grad(grad: Tensor, self: Tensor, alpha: float, scale: float, input_scale: float) -> Tensor:
    # exp of the non-positive part only: no overflow where the branch is not taken.
    slope = (self.clamp(max=0) * input_scale).exp() * (scale * alpha * input_scale)
    return where(self <= 0, grad * slope, grad * scale)


def _elu_result_grad(grad: Tensor, result: Tensor, alpha: float, scale: float, input_scale: float) -> Tensor:
    if alpha < 0:
        raise RuntimeError(
            "In-place elu backward calculation is triggered with a negative slope which is not supported. "
            "This is caused by calling in-place forward function with a negative slope, please call out-of-place "
            "version instead."
        )
    return where(result <= 0, grad * ((result + scale * alpha) * input_scale), grad * scale)


_ELU_PARAMS = ("alpha", "scale", "input_scale")
elu = Op("elu", _elu, node="EluBackward0", params=_ELU_PARAMS, grads=(_elu_grad,), jvp="elementwise")
elu_ = Op("elu", _elu, node="EluBackward1", params=_ELU_PARAMS, grads=(_elu_result_grad,), jvp="elementwise")
celu = Op("celu", _elu, node="CeluBackward0", params=_ELU_PARAMS, grads=(_elu_grad,), jvp="elementwise")
celu_ = Op("celu", _elu, node="CeluBackward1", params=_ELU_PARAMS, grads=(_elu_result_grad,), jvp="elementwise")


def _threshold(x: np.ndarray, threshold: float, value: float) -> np.ndarray:
    if x.dtype.kind == "c":  # (integers are thresholded; complex numbers have no order)
        raise NotImplementedError(f'"threshold_cpu" not implemented for \'{scalar_type_name(x.dtype)}\'')
    return np.where(x <= threshold, value, x).astype(x.dtype, copy=False)


threshold = Op("threshold", _threshold, node="ThresholdBackward0", params=("threshold", "value"),
               grads=(lambda grad, self, threshold: where(self <= threshold, 0.0, grad),), jvp="elementwise")
# In place PyTorch tests the result against the threshold (ThresholdBackward1).
threshold_ = Op("threshold", _threshold, node="ThresholdBackward1", params=("threshold", "value"),
                grads=(lambda grad, result, threshold: where(result <= threshold, 0.0, grad),), jvp="elementwise")

_SQRT_HALF = math.sqrt(0.5)
_INV_SQRT_2PI = 1.0 / math.sqrt(2.0 * math.pi)
_GELU_K = math.sqrt(2.0 / math.pi)
_GELU_C = 0.044715


def _gelu(x: np.ndarray, approximate: str) -> np.ndarray:  # (run in float32 for 16-bit floats: _in_float)
    _check_real_float(x, "GeluKernelImpl")
    if approximate == "tanh":
        out = 0.5 * x * (1.0 + np.tanh(_GELU_K * (x + _GELU_C * x * x * x)))
    else:
        out = 0.5 * x * (1.0 + erf.forward(x * _SQRT_HALF))
    return out.astype(x.dtype, copy=False)


def _gelu_grad(grad: Tensor, self: Tensor, approximate: str) -> Tensor:
    if approximate == "tanh":
        x2 = self * self
        t = (_GELU_K * (self + _GELU_C * x2 * self)).tanh()
        slope = 0.5 * (1 + t) + 0.5 * self * (1 - t * t) * (_GELU_K * (1 + 3 * _GELU_C * x2))
        return grad * slope
    cdf = 0.5 * (1 + apply(erf, (self * _SQRT_HALF,)))
    pdf = (-0.5 * (self * self)).exp() * _INV_SQRT_2PI
    return grad * (cdf + self * pdf)


gelu = Op("gelu", _in_float(_gelu), node="GeluBackward0", params=("approximate",), grads=(_gelu_grad,),
          jvp="elementwise")


def _softplus(x: np.ndarray, beta: float, threshold: float) -> np.ndarray:
    _check_real_float(x, "softplus_cpu")
    z = x * beta
    with np.errstate(over="ignore", divide="ignore", invalid="ignore"):
        # log(1 + e^z) = max(z, 0) + log1p(e^-|z|): no overflow for large |z|.
        soft = (np.maximum(z, 0) + np.log1p(np.exp(-np.abs(z)))) / beta
    return np.where(z > threshold, x, soft).astype(x.dtype, copy=False)


softplus = Op("softplus", _softplus, node="SoftplusBackward0", params=("beta", "threshold"),
              grads=(lambda grad, self, beta, threshold:
                     where(self * beta > threshold, grad, grad * (self * beta).sigmoid()),), jvp="elementwise")


def _log_sigmoid(x: np.ndarray) -> np.ndarray:
    _check_real_float(x, "log_sigmoid_cpu")
    return (np.minimum(x, 0) - np.log1p(np.exp(-np.abs(x)))).astype(x.dtype, copy=False)


log_sigmoid = Op("log_sigmoid", _log_sigmoid, node="LogSigmoidBackward0",
                 grads=(lambda grad, self: grad * (-self).sigmoid(),), jvp="elementwise")


def _silu(x: np.ndarray) -> np.ndarray:
    _check_float(x, "silu_cpu")
    return (x * _sigmoid(x)).astype(x.dtype, copy=False)


def _silu_grad(grad: Tensor, self: Tensor) -> Tensor:
    s = self.sigmoid()
    return grad * (s * (1 + self * (1 - s)))


silu = Op("silu", _silu, node="SiluBackward0", grads=(_silu_grad,), jvp="elementwise")


def _mish(x: np.ndarray) -> np.ndarray:
    _check_real_float(x, "mish_cpu")
    return (x * np.tanh(_softplus(x, 1.0, 20.0))).astype(x.dtype, copy=False)


def _mish_grad(grad: Tensor, self: Tensor) -> Tensor:
    t = apply(softplus, (self, 1.0, 20.0)).tanh()
    return grad * (t + self * self.sigmoid() * (1 - t * t))


mish = Op("mish", _mish, node="MishBackward0", grads=(_mish_grad,), jvp="elementwise")


# PyTorch's kernel multiplies by 1/6 rounded to float32, in every dtype.
_ONE_SIXTH_F32 = float(np.float32(1.0 / 6.0))


def _hardsigmoid(x: np.ndarray) -> np.ndarray:
    _check_real_float(x, "hardsigmoid_cpu")
    return (np.clip(x + 3.0, 0.0, 6.0) / 6.0).astype(x.dtype, copy=False)


hardsigmoid = Op("hardsigmoid", _hardsigmoid, node="HardsigmoidBackward0",
                 grads=(lambda grad, self: where((self > -3.0) & (self < 3.0), grad * _ONE_SIXTH_F32, 0.0),),
                 jvp="elementwise")


def _hardswish(x: np.ndarray) -> np.ndarray:
    _check_real_float(x, "hardswish_cpu")
    return (x * np.clip(x + 3.0, 0.0, 6.0) / 6.0).astype(x.dtype, copy=False)


def _hardswish_grad(grad: Tensor, self: Tensor) -> Tensor:
    inner = where(self < 3.0, grad * (self / 3.0 + 0.5), grad)
    return where(self <= -3.0, 0.0, inner)


hardswish = Op("hardswish", _hardswish, node="HardswishBackward0", grads=(_hardswish_grad,), jvp="elementwise")


def _hardshrink(x: np.ndarray, lambd: float) -> np.ndarray:
    _check_real_float(x, "hardshrink_cpu")
    return np.where(np.abs(x) <= lambd, 0, x).astype(x.dtype, copy=False)


hardshrink = Op("hardshrink", _hardshrink, node="HardshrinkBackward0", params=("lambd",),
                grads=(lambda grad, self, lambd: where(self.abs() <= lambd, 0.0, grad),), jvp="elementwise")


def _softshrink(x: np.ndarray, lambd: float) -> np.ndarray:
    _check_real_float(x, "softshrink_check")
    if lambd < 0:
        raise RuntimeError(f"lambda must be in range [0, {np.finfo(x.dtype).max:g}] for input dtype "
                           f"{scalar_type_name(x.dtype)}, but found {lambd:g}")
    # NaN is outside [-lambd, lambd]: it passes through, as in PyTorch.
    return np.where(np.abs(x) <= lambd, 0, np.where(x > lambd, x - lambd, x + lambd)).astype(x.dtype, copy=False)


softshrink = Op("softshrink", _softshrink, node="SoftshrinkBackward0", params=("lambd",),
                grads=(lambda grad, self, lambd: where(self.abs() <= lambd, 0.0, grad),), jvp="elementwise")


def _prelu(x: np.ndarray, w: np.ndarray) -> np.ndarray:
    _check_real_float(x, "prelu_cpu")
    return np.where(x > 0, x, w * x).astype(x.dtype, copy=False)


prelu_kernel = Op("_prelu_kernel", _prelu, node="PreluKernelBackward0", inputs=("self", "weight"),
                  grads=(lambda grad, self, weight: where(self > 0, grad, grad * weight),
                         lambda grad, self: where(self > 0, 0.0, grad * self)), jvp="transpose")


def prelu(input: Tensor, weight: Tensor) -> Tensor:  # noqa: A002
    """``x`` for positive ``x``, else ``weight * x``, with one slope per channel (dim 1) or one in all:
    PyTorch's shape checks, then ``_prelu_kernel`` with the weight shaped to broadcast.

    >>> import retrograd as rg
    >>> from retrograd.ops import nn
    >>> nn.prelu(rg.tensor([[-1.0, 2.0]]), rg.tensor([0.25])).tolist()
    [[-0.25, 2.0]]
    """
    if input._data.dtype != weight._data.dtype:
        raise RuntimeError(f"prelu: Type promoting not supported. Got {scalar_type_name(input._data.dtype)} and "
                           f"{scalar_type_name(weight._data.dtype)}")
    if weight.numel() != 1:
        if input.dim() == 0:
            raise RuntimeError("Not allow zero-dim input tensor.")
        channels = input.shape[1] if input.dim() > 1 else 1
        if channels != weight.numel():
            raise RuntimeError(f"Mismatch of parameter numbers and input channel size. Found parameter numbers = "
                               f"{weight.numel()} and channel size = {channels}.")
    if weight.dim() > 1:
        raise RuntimeError(f"prelu: Expected `weight` to be a scalar or 1D tensor, but got: ndim = {weight.dim()}")
    if input.dim() >= 2:
        shape = [1] * input.dim()
        shape[1] = weight.numel()
        weight = weight.reshape(shape)
    elif input.dim() == 0:
        weight = weight.reshape(())  # one slope for a 0-d input: the result stays 0-d, as in PyTorch
    return apply(prelu_kernel, (input, weight))  # type: ignore[no-any-return]


def _rrelu(x: np.ndarray, noise: Any) -> np.ndarray:
    # (evaluation's one mean slope is PyTorch's leaky_relu, and named so in its error)
    _check_real_float(x, "rrelu_with_noise_out_cpu" if isinstance(noise, np.ndarray) else "leaky_relu_cpu")
    return np.where(x > 0, x, x * noise).astype(x.dtype, copy=False)


def _rrelu_slope(noise: Any, like: Tensor) -> Any:
    return _make(noise.astype(like._data.dtype, copy=False)) if isinstance(noise, np.ndarray) else noise


# ``noise`` is the slope of each non-positive element (sampled when training, (lower + upper) / 2 otherwise).
rrelu_with_noise = Op("rrelu_with_noise", _rrelu, node="RreluWithNoiseBackward0", params=("noise",),
                      grads=(lambda grad, self, noise: where(self > 0, grad, grad * _rrelu_slope(noise, grad)),),
                      jvp="transpose")
rrelu_with_noise_ = Op("rrelu_with_noise", _rrelu, node="RreluWithNoiseBackward1", params=("noise",),
                       grads=(lambda grad, result, noise: where(result > 0, grad, grad * _rrelu_slope(noise, grad)),),
                       jvp="transpose")


def _glu_halves(x: np.ndarray, dim: int) -> tuple[np.ndarray, np.ndarray]:
    if x.shape[dim] % 2:
        raise RuntimeError(f"Halving dimension must be even, but dimension {dim} is size {x.shape[dim]}")
    half = x.shape[dim] // 2
    return np.take(x, np.arange(half), axis=dim), np.take(x, np.arange(half, 2 * half), axis=dim)


def _glu(x: np.ndarray, dim: int) -> np.ndarray:
    a, b = _glu_halves(x, dim)  # (the halving check comes first, as in PyTorch)
    _check_real_float(x, "glu_cpu")
    return (a * _sigmoid(b)).astype(x.dtype, copy=False)


def _glu_grad(grad: Tensor, self: Tensor, dim: int) -> Tensor:
    half = self.shape[dim] // 2
    a = self.narrow(dim, 0, half)
    s = self.narrow(dim, half, half).sigmoid()
    return apply(cat, (grad * s, grad * a * s * (1 - s), dim))  # type: ignore[no-any-return]


glu = Op("glu", _glu, node="GluBackward0", params=("dim",), grads=(_glu_grad,), jvp="transpose")


# -- padding ----------------------------------------------------------------------------------


def _constant_pad(x: np.ndarray, pad: tuple[int, ...], value: Any) -> np.ndarray:
    """``pad`` is PyTorch's order: (last-dim left, last-dim right, next-to-last left, ...)."""
    shape = list(x.shape)
    src: list[Any] = [slice(None)] * x.ndim
    dst: list[Any] = [slice(None)] * x.ndim
    for k in range(len(pad) // 2):
        d = x.ndim - 1 - k
        left, right = pad[2 * k], pad[2 * k + 1]
        size = x.shape[d]
        kept = size - max(-left, 0) - max(-right, 0)  # negative pads crop first, as PyTorch narrows
        if kept < 0:
            raise RuntimeError("narrow(): length must be non-negative.")
        shape[d] = kept + max(left, 0) + max(right, 0)
        src[d] = slice(max(-left, 0), max(-left, 0) + kept)
        dst[d] = slice(max(left, 0), max(left, 0) + kept)
    result = np.full(shape, value, dtype=x.dtype)
    result[tuple(dst)] = x[tuple(src)]
    return result


# Its gradient crops what was padded (and pads what was cropped): the same op with negated pads.
constant_pad_nd = Op("constant_pad_nd", _constant_pad, node="ConstantPadNdBackward0", params=("pad", "value"),
                     grads=(lambda grad, pad: _constant_pad_grad(grad, pad),), jvp="transpose")


def _constant_pad_grad(grad: Tensor, pad: tuple[int, ...]) -> Tensor:
    return apply(constant_pad_nd, (grad, tuple(-p for p in pad), 0))  # type: ignore[no-any-return]


class PadIndices(tuple):  # type: ignore[type-arg]
    """The source indices of a reflection/replication pad, one array per padded dim (last first),
    with the padding they were made from (``pad``: PyTorch's node keeps it as ``padding``)."""

    pad: tuple[int, ...]


def pad_indices(shape: tuple[int, ...], pad: tuple[int, ...], mode: str) -> PadIndices:
    """For each padded dim (last first), the source index of every output position."""
    out = []
    for k in range(len(pad) // 2):
        size = shape[len(shape) - 1 - k]
        left, right = pad[2 * k], pad[2 * k + 1]
        pos = np.arange(-left, size + right)
        if mode == "reflect":
            period = 2 * (size - 1) if size > 1 else 1
            pos = np.abs(pos) % period
            pos = np.where(pos >= size, period - pos, pos)
        elif mode == "replicate":
            pos = np.clip(pos, 0, size - 1)
        else:  # circular
            pos = pos % size
        out.append(pos)
    indices = PadIndices(out)
    indices.pad = tuple(pad)
    return indices


def _gather_pad(x: np.ndarray, indices: tuple[np.ndarray, ...]) -> np.ndarray:
    for k, idx in enumerate(indices):
        x = np.take(x, idx, axis=x.ndim - 1 - k)
    return x


def _scatter_pad(g: np.ndarray, shape: tuple[int, ...], indices: tuple[np.ndarray, ...]) -> np.ndarray:
    # Undo the gathers in reverse order, summing the gradient of every copy into its source.
    for k in reversed(range(len(indices))):
        axis = g.ndim - 1 - k
        target = list(g.shape)
        target[axis] = shape[axis]
        out = np.zeros(target, dtype=g.dtype)
        moved = np.moveaxis(out, axis, 0)
        np.add.at(moved, indices[k], np.moveaxis(g, axis, 0))
        g = out
    return g


def _make_pad_ops(kind: str, dims: int) -> Op:
    backward = Op(f"{kind}_pad{dims}d_backward", _scatter_pad,
                  node=f"{kind}Pad{dims}DBackwardBackward0", params=("input_shape", "indices"),
                  grads=(lambda grad, indices: apply(forward, (grad, indices)),), jvp="linear")
    # The input is saved, as PyTorch's node saves it (ours reads its shape).
    forward = Op(f"{kind}_pad{dims}d", _gather_pad, node=f"{kind}Pad{dims}DBackward0", params=("indices",),
                 grads=(lambda grad, self, indices: apply(backward, (grad, tuple(self.shape), indices)),), jvp="linear",
                 saved={"self": "self", "padding": derived("indices", lambda indices: getattr(indices, "pad", None))})
    return forward


PAD_OPS = {(mode, dims): _make_pad_ops(kind, dims)
           for mode, kind in (("reflect", "Reflection"), ("replicate", "Replication"))
           for dims in (1, 2, 3)}


# -- pixel and channel shuffles ---------------------------------------------------------------


def _pixel_shuffle(x: np.ndarray, r: int) -> np.ndarray:
    *lead, c, h, w = x.shape
    y = x.reshape(*lead, c // (r * r), r, r, h, w)
    n = len(lead)
    y = y.transpose(*range(n), n, n + 3, n + 1, n + 4, n + 2)
    return y.reshape(*lead, c // (r * r), h * r, w * r)


def _pixel_unshuffle(x: np.ndarray, r: int) -> np.ndarray:
    *lead, c, h, w = x.shape
    y = x.reshape(*lead, c, h // r, r, w // r, r)
    n = len(lead)
    y = y.transpose(*range(n), n, n + 2, n + 4, n + 1, n + 3)
    return y.reshape(*lead, c * r * r, h // r, w // r)


def _shuffle_grad(grad: Tensor, factor: int, up: bool) -> Tensor:
    return apply(pixel_unshuffle if up else pixel_shuffle, (grad, factor))  # type: ignore[no-any-return]


pixel_shuffle = Op("pixel_shuffle", _pixel_shuffle, node="PixelShuffleBackward0", params=("upscale_factor",),
                   grads=(lambda grad, upscale_factor: _shuffle_grad(grad, upscale_factor, True),), jvp="linear")
pixel_unshuffle = Op("pixel_unshuffle", _pixel_unshuffle, node="PixelUnshuffleBackward0",
                     params=("downscale_factor",),
                     grads=(lambda grad, downscale_factor: _shuffle_grad(grad, downscale_factor, False),), jvp="linear")


def _channel_shuffle(x: np.ndarray, groups: int) -> np.ndarray:
    n, c = x.shape[0], x.shape[1]
    y = x.reshape(n, groups, c // groups, *x.shape[2:])
    return np.swapaxes(y, 1, 2).reshape(x.shape)


# Shuffling by ``groups`` is undone by shuffling by ``channels // groups``.
channel_shuffle = Op("channel_shuffle", _channel_shuffle, node="ChannelShuffleBackward0", params=("groups",),
                     grads=(lambda grad, groups: _channel_shuffle_grad(grad, groups),), jvp="linear")


def _channel_shuffle_grad(grad: Tensor, groups: int) -> Tensor:
    return apply(channel_shuffle, (grad, grad.shape[1] // groups))  # type: ignore[no-any-return]


# -- pairwise distances: pdist ----------------------------------------------------------------
def _pdist(x: np.ndarray, p: float) -> np.ndarray:
    i, j = np.triu_indices(x.shape[0], 1)
    return _R._vector_norm(x[i] - x[j], p, (1,), False)


def _pdist_grad(grad: Tensor, self: Tensor, result: Tensor, p: float) -> Tensor:
    n = self.shape[0]
    i, j = np.triu_indices(n, 1)
    diff = apply(_S.index, (self, i)) - apply(_S.index, (self, j))
    g = _R.vector_norm_backward(grad, diff, result, p, (1,), False)
    if p != 1 and p != np.inf:
        # PyTorch's kernel selects 0 for a pair at distance 0 (no NaN from an inf/NaN gradient).
        g = where(result.unsqueeze(1) == 0, 0.0, g)
    shape = tuple(self.shape)
    return apply(_S.index_backward, (g, shape, i)) - apply(_S.index_backward, (g, shape, j))  # type: ignore[no-any-return]


pdist = Op("pdist", _pdist, node="PdistBackward0", params=("p",), grads=(_pdist_grad,), jvp="transpose")


# -- embedding --------------------------------------------------------------------------------


def _embedding(weight: np.ndarray, indices: Any, coeff: Any) -> np.ndarray:
    indices = _array(indices)
    if weight.ndim != 2:
        raise RuntimeError("'weight' must be 2-D")
    if indices.size and (indices.min() < 0 or indices.max() >= weight.shape[0]):
        raise IndexError("index out of range in self")
    return weight[indices]


def _embedding_dense_backward(grad: np.ndarray, indices: np.ndarray, num_weights: int) -> np.ndarray:
    out = np.zeros((num_weights, grad.shape[-1]), dtype=grad.dtype)
    np.add.at(out, indices.reshape(-1), grad.reshape(-1, grad.shape[-1]))
    return out


# The scatter-add that is embedding's gradient; its own gradient gathers rows again.
embedding_dense_backward = Op(
    "embedding_dense_backward", _embedding_dense_backward, node="EmbeddingDenseBackwardBackward0",
    params=("indices", "num_weights"),
    grads=(lambda grad, indices: _embedding_lookup(grad, indices),), jvp="transpose")


def _embedding_lookup(weight: Tensor, indices: np.ndarray) -> Tensor:
    return apply(embedding, (weight, indices, None))  # type: ignore[no-any-return]


def _embedding_grad(grad: Tensor, weight_shape: tuple[int, ...], indices: Any, coeff: Any) -> Tensor:
    # ``coeff`` (per looked-up row) zeroes padding_idx and divides by the frequency when asked.
    if coeff is not None:
        grad = grad * _make(coeff.astype(grad._data.dtype, copy=False))
    return apply(embedding_dense_backward, (grad, _array(indices), weight_shape[0]))  # type: ignore[no-any-return]


# The indices are read again by backward: a tensor given there is kept with its version
# (``versioned=``), as PyTorch's.
embedding = Op("embedding", _embedding, node="EmbeddingBackward0", inputs=("weight",), params=("indices", "coeff"),
               grads=(_embedding_grad,), jvp="transpose", versioned=("indices",),
               # PyTorch's names (its padding_idx, scale_grad_by_freq, sparse: folded into ``coeff``)
               saved={"indices": "indices", "weight_sym_argsize_0": derived("weight_sym_sizes", lambda shape: shape[0])})


def embedding_coefficients(indices: np.ndarray, num_weights: int, padding_idx: int,
                           scale_grad_by_freq: bool) -> np.ndarray | None:
    """Per looked-up row factor of its gradient (None when all are 1)."""
    if padding_idx < 0 and not scale_grad_by_freq:
        return None
    coeff = np.ones(indices.shape + (1,), dtype=np.float64)
    if scale_grad_by_freq:
        counts = np.bincount(indices.reshape(-1), minlength=num_weights)
        coeff = coeff / counts[indices][..., None]
    if padding_idx >= 0:
        coeff = coeff * (indices != padding_idx)[..., None]
    return coeff

def _embedding_bag(weight: np.ndarray, psw: Any, indices: np.ndarray, bags: np.ndarray, num_bags: int, mode: str,
                   coeff: Any, grad_scale: Any, input_indices: Any, input_offsets: Any) -> np.ndarray:
    """``bags`` gives each kept index its bag; ``coeff`` (mean: 1/count) scales each kept row;
    ``grad_scale`` (scale_grad_by_freq: 1/frequency) only scales the gradient. ``indices`` and
    ``bags`` are computed from the caller's ``input_indices`` and ``input_offsets``, which the node
    keeps with their version only (``versioned=``): PyTorch's keeps them for backward."""
    rows = weight[indices]
    if psw is not None:
        rows = rows * psw[:, None]
    if mode == "max":
        out = np.full((num_bags, weight.shape[1]), -np.inf, dtype=weight.dtype)
        np.maximum.at(out, bags, rows)
        return np.where(np.isneginf(out), 0, out).astype(weight.dtype, copy=False)
    out = np.zeros((num_bags, weight.shape[1]), dtype=weight.dtype)
    np.add.at(out, bags, rows if coeff is None else rows * coeff[:, None])
    return out


def _bag_max_mask(weight: np.ndarray, result: np.ndarray, indices: np.ndarray, bags: np.ndarray) -> np.ndarray:
    """1 where a kept row gives its bag's maximum in that column (the first such row on ties)."""
    rows = weight[indices]
    hit = rows == result[bags]
    position = np.where(hit, np.arange(len(indices))[:, None], len(indices))
    first = np.full(result.shape, len(indices))
    np.minimum.at(first, bags, position)
    return (position == first[bags]).astype(weight.dtype)


def _embedding_bag_grad(grad: Tensor, weight: Tensor, per_sample_weights: Any, result: Tensor, indices: np.ndarray,
                        bags: np.ndarray, mode: str, coeff: Any, grad_scale: Any, input_indices: Any,
                        input_offsets: Any, needs: tuple[bool, ...]) -> tuple[Tensor | None, Tensor | None]:
    # (``input_indices``/``input_offsets`` are asked for to be read, which checks their version:
    # written since the forward, ``indices`` and ``bags`` would no longer be theirs)
    per_row = apply(_S.index, (grad, bags))
    gw = gp = None
    if needs[0]:
        g = per_row
        if mode == "max":
            g = g * _make(_bag_max_mask(weight._data, result._data, indices, bags))
        if per_sample_weights is not None:
            g = g * per_sample_weights.unsqueeze(1)
        for factor in (coeff, grad_scale):
            if factor is not None:
                g = g * _make(factor.astype(grad._data.dtype, copy=False)[:, None])
        gw = apply(embedding_dense_backward, (g, indices, weight.shape[0]))
    if needs[1]:
        gp = (per_row * apply(embedding, (weight, indices, None))).sum(1)
    return gw, gp


embedding_bag = Op("embedding_bag", _embedding_bag, node="EmbeddingBagBackward0",
                   inputs=("weight", "per_sample_weights"),
                   params=("indices", "bags", "num_bags", "mode", "coeff", "grad_scale", "input_indices",
                           "input_offsets"), grads=_embedding_bag_grad,
                   jvp="transpose", versioned=("input_indices", "input_offsets"))


# -- normalisation ----------------------------------------------------------------------------


def _standardize_np(x: np.ndarray, axes: tuple[int, ...], eps: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(x - mean) * invstd, with the biased variance; also returns mean and var."""
    mean = np.mean(x, axis=axes, keepdims=True)
    centered = x - mean
    var = np.mean(centered * centered, axis=axes, keepdims=True)
    return centered / np.sqrt(var + eps), mean, var


def standardize(x: Tensor, dims: tuple[int, ...], eps: float) -> tuple[Tensor, Tensor]:
    """The same in retrograd ops (for backward rules): x-hat and 1/std."""
    centered = x - x.mean(dims, keepdim=True)
    invstd = ((centered * centered).mean(dims, keepdim=True) + eps) ** -0.5
    return centered * invstd, invstd


def standardize_grad(g: Tensor, xhat: Tensor, invstd: Tensor, dims: tuple[int, ...]) -> Tensor:
    """Vector-Jacobian product of x -> x-hat for an incoming gradient ``g`` on x-hat."""
    return invstd * (g - g.mean(dims, keepdim=True) - xhat * (g * xhat).mean(dims, keepdim=True))


def _affine(out: np.ndarray, weight: Any, bias: Any, shape: tuple[int, ...]) -> np.ndarray:
    if weight is not None:
        out = out * weight.reshape(shape)
    if bias is not None:
        out = out + bias.reshape(shape)
    return out


def _channel_shape(ndim: int, channels: int) -> tuple[int, ...]:
    return (1, channels) + (1,) * (ndim - 2)


def _check_same_dtype(*arrays: Any) -> None:
    dtypes = {a.dtype for a in arrays if a is not None}
    if len(dtypes) > 1:
        raise RuntimeError("mixed dtype (CPU): all inputs must share same datatype.")


def _batch_norm(x: np.ndarray, weight: Any, bias: Any, running_mean: Any, running_var: Any, training: bool,
                momentum: float, eps: float) -> np.ndarray:
    channels = x.shape[1]
    running_mean, running_var = _array(running_mean), _array(running_var)
    for name, t in (("weight", weight), ("bias", bias), ("running_mean", running_mean), ("running_var", running_var)):
        size = t.size if t is not None else channels
        if size != channels:
            raise RuntimeError(f"{name} should contain {channels} elements not {size}")
    _check_same_dtype(x, weight, bias)
    axes = (0,) + tuple(range(2, x.ndim))
    shape = _channel_shape(x.ndim, channels)
    if training:
        out, mean, var = _standardize_np(x, axes, eps)
        if running_mean is not None:
            n = x.size // max(channels, 1)
            _update_running(running_mean, mean.reshape(-1), momentum)
            _update_running(running_var, var.reshape(-1) * (n / max(n - 1, 1)), momentum)
    else:
        rm, rv = running_mean.reshape(shape), running_var.reshape(shape)
        out = (x - rm) / np.sqrt(rv + eps)
    return _affine(out, weight, bias, shape).astype(x.dtype, copy=False)


def _update_running(stat: Any, value: np.ndarray, momentum: float) -> None:
    if stat is None:
        return
    stat[...] = (1 - momentum) * stat + momentum * value  # PyTorch does not bump the version here


def _channel_affine_grads(grad: Tensor, xhat: Tensor, dims: tuple[int, ...],
                          needs: tuple[bool, ...]) -> tuple[Tensor | None, Tensor | None]:
    """The per-channel weight and bias gradients of batch and group norm (summed over ``dims``)."""
    return (grad * xhat).sum(dims) if needs[1] else None, grad.sum(dims) if needs[2] else None


def _batch_norm_grad(grad: Tensor, self: Tensor, weight: Any, running_mean: Any, running_var: Any,
                     training: bool, eps: float, needs: tuple[bool, ...]) -> tuple[Tensor | None, ...]:
    dims = (0,) + tuple(range(2, self.dim()))
    shape = _channel_shape(self.dim(), self.shape[1])
    if training:
        xhat, invstd = standardize(self, dims, eps)
    else:
        invstd = _make(1 / np.sqrt(_array(running_var).reshape(shape) + eps))
        xhat = (self - _make(_array(running_mean).reshape(shape))) * invstd
    gx = None
    if needs[0]:
        g = grad if weight is None else grad * weight.reshape(shape)
        gx = standardize_grad(g, xhat, invstd, dims) if training else g * invstd
    return (gx, *_channel_affine_grads(grad, xhat, dims, needs))


native_batch_norm = Op(
    "native_batch_norm", quiet_forward(_batch_norm), node="NativeBatchNormBackward0", inputs=("self", "weight", "bias"),
    params=("running_mean", "running_var", "training", "momentum", "eps"),
    # PyTorch's names (its ``result1``/``result2``, the batch statistics, are not kept: ours
    # recompute them in backward)
    saved={"input": "self", "weight": "weight", "running_mean": "running_mean", "running_var": "running_var",
           "training": "training", "eps": "eps"},
    grads=_batch_norm_grad, jvp="transpose", versioned=("running_mean", "running_var"))


def _layer_norm(x: np.ndarray, weight: Any, bias: Any, normalized_shape: tuple[int, ...], eps: float) -> np.ndarray:
    k = len(normalized_shape)
    if k == 0:
        raise RuntimeError(
            "Expected normalized_shape to be at least 1-dimensional, i.e., containing at least one element, but "
            "got normalized_shape = []"
        )
    shape_str = "[" + ", ".join(str(s) for s in normalized_shape) + "]"
    for name, t in (("weight", weight), ("bias", bias)):
        if t is not None and t.shape != normalized_shape:
            raise RuntimeError(
                f"Expected {name} to be of same shape as normalized_shape, but got {name} of shape "
                f"[{', '.join(str(s) for s in t.shape)}] and normalized_shape = {shape_str}"
            )
    if x.ndim < k or x.shape[x.ndim - k:] != normalized_shape:
        raise RuntimeError(
            f"Given normalized_shape={shape_str}, expected input with shape [*, {shape_str[1:]}, but got input of "
            f"size[{', '.join(str(s) for s in x.shape)}]"
        )
    _check_same_dtype(x, weight, bias)
    out, _, _ = _standardize_np(x, tuple(range(x.ndim - k, x.ndim)), eps)
    return _affine(out, weight, bias, normalized_shape).astype(x.dtype, copy=False)


def _layer_norm_grad(grad: Tensor, self: Tensor, weight: Any, bias: Any, normalized_shape: tuple[int, ...],
                     eps: float, needs: tuple[bool, ...]) -> tuple[Tensor | None, ...]:
    # ``bias`` is asked for only to be read: PyTorch's node saves it, so a write to it between
    # forward and backward is the saved tensor's version error there too.
    del bias
    k = len(normalized_shape)
    dims = tuple(range(self.dim() - k, self.dim()))
    lead = tuple(range(self.dim() - k))
    xhat, invstd = standardize(self, dims, eps)
    gx = gw = gb = None
    if needs[0]:
        gx = standardize_grad(grad if weight is None else grad * weight, xhat, invstd, dims)
    if needs[1]:
        gw = (grad * xhat).sum(lead) if lead else grad * xhat
    if needs[2]:
        gb = grad.sum(lead) if lead else grad
    return gx, gw, gb


native_layer_norm = Op(
    "native_layer_norm", _layer_norm, node="NativeLayerNormBackward0", inputs=("self", "weight", "bias"),
    params=("normalized_shape", "eps"),
    # PyTorch's names (not kept: its ``result1``/``result2``, the statistics)
    saved={"input": "self", "weight": "weight", "bias": "bias", "normalized_shape": "normalized_shape"},
    grads=_layer_norm_grad, jvp="transpose")


def _group_norm(x: np.ndarray, weight: Any, bias: Any, num_groups: int, eps: float) -> np.ndarray:
    n, c = x.shape[0], x.shape[1]
    shape_str = "[" + ", ".join(str(s) for s in x.shape) + "]"
    if c % num_groups:
        raise RuntimeError(
            f"Expected number of channels in input to be divisible by num_groups, but got input of shape {shape_str} "
            f"and num_groups={num_groups}"
        )
    for name, t in (("weight", weight), ("bias", bias)):
        if t is not None and (t.ndim != 1 or t.shape[0] != c):
            raise RuntimeError(
                f"Expected {name} to be a vector of size equal to the number of channels in input, but got {name} of "
                f"shape [{', '.join(str(s) for s in t.shape)}] and input of shape {shape_str}"
            )
    _check_same_dtype(x, weight, bias)
    grouped, _, _ = _standardize_np(x.reshape(n, num_groups, -1), (2,), eps)
    return _affine(grouped.reshape(x.shape), weight, bias, _channel_shape(x.ndim, c)).astype(x.dtype, copy=False)


def _group_norm_grad(grad: Tensor, self: Tensor, weight: Any, num_groups: int, eps: float,
                     needs: tuple[bool, ...]) -> tuple[Tensor | None, ...]:
    n, c = self.shape[0], self.shape[1]
    shape = _channel_shape(self.dim(), c)
    dims = (0,) + tuple(range(2, self.dim()))
    grouped = self.reshape(n, num_groups, -1)
    xhat_g, invstd = standardize(grouped, (2,), eps)
    xhat = xhat_g.reshape(self.shape)
    gx = None
    if needs[0]:
        g = grad if weight is None else grad * weight.reshape(shape)
        gx = standardize_grad(g.reshape(n, num_groups, -1), xhat_g, invstd, (2,)).reshape(self.shape)
    return (gx, *_channel_affine_grads(grad, xhat, dims, needs))


native_group_norm = Op(
    "native_group_norm", _group_norm, node="NativeGroupNormBackward0", inputs=("self", "weight", "bias"),
    params=("num_groups", "eps"),
    # PyTorch's names, its sizes read from the input's (not kept: ``result1``/``result2``)
    saved={"input": "self", "weight": "weight", "eps": "eps", "group": "num_groups",
           "N": derived("self_sym_sizes", lambda shape: shape[0]),
           "C": derived("self_sym_sizes", lambda shape: shape[1]),
           "HxW": derived("self_sym_sizes", lambda shape: math.prod(shape[2:]))},
    grads=_group_norm_grad, jvp="transpose")


def _repeat_vector(x: np.ndarray, times: int) -> np.ndarray:
    return np.tile(x, times)


# ``weight.repeat(n)`` of a vector (instance_norm's per-sample affine parameters).
repeat_vector = Op("repeat", _repeat_vector, node="RepeatBackward0", params=("times",),
                   grads=(lambda grad, self_shape, times: grad.reshape(times, self_shape[0]).sum(0),), jvp="linear")


# -- losses -----------------------------------------------------------------------------------


def reduce_array(loss: np.ndarray, reduction: str, dtype: Any) -> np.ndarray:
    if reduction == "none":
        return loss.astype(dtype, copy=False)
    if reduction == "sum":
        return np.asarray(loss.sum(), dtype=dtype)
    if loss.size == 0:
        return np.asarray(np.nan, dtype=dtype)
    return np.asarray(loss.mean(), dtype=dtype)


def _reduced(grad: Tensor, reduction: str, numel: int) -> Tensor:
    """The gradient of the reduction, to multiply by the pointwise derivative."""
    return grad / numel if reduction == "mean" and numel else grad


def _mse_loss(x: np.ndarray, t: np.ndarray, reduction: str) -> np.ndarray:
    _check_real_float(x, "mse_cpu")
    d = x - t
    return reduce_array(d * d, reduction, d.dtype)


def _mse_grad(grad: Tensor, self: Tensor, target: Tensor, reduction: str) -> Tensor:
    return _reduced(grad, reduction, self.numel()) * (2 * (self - target))


mse_loss = Op("mse_loss", _mse_loss, node="MseLossBackward0", inputs=("self", "target"), params=("reduction",),
              saved=("self", "target"),  # (PyTorch's reduction is an enum number, ours its name)
              dtype="promote",
              grads=(_mse_grad,
                     lambda grad, self, target, reduction: -_mse_grad(grad, self, target, reduction)), jvp="transpose")


def _smooth_l1_loss(x: np.ndarray, t: np.ndarray, reduction: str, beta: float) -> np.ndarray:
    _check_real_float(x, "smooth_l1_cpu")
    d = np.abs(x - t)
    return reduce_array(np.where(d < beta, 0.5 * d * d / beta, d - 0.5 * beta), reduction, d.dtype)


def _smooth_l1_grad(grad: Tensor, self: Tensor, target: Tensor, reduction: str, beta: float) -> Tensor:
    diff = self - target
    # The linear region is tested, so a NaN difference falls in the quadratic one (NaN), as in PyTorch.
    return _reduced(grad, reduction, self.numel()) * where(diff.abs() >= beta, diff.sign(), diff / beta)


smooth_l1_loss = Op("smooth_l1_loss", _smooth_l1_loss, node="SmoothL1LossBackward0", inputs=("self", "target"),
                    params=("reduction", "beta"), dtype="promote",
                    grads=(_smooth_l1_grad,
                           lambda grad, self, target, reduction, beta:
                           -_smooth_l1_grad(grad, self, target, reduction, beta)), jvp="transpose")


def _huber_loss(x: np.ndarray, t: np.ndarray, reduction: str, delta: float) -> np.ndarray:
    _check_real_float(x, "huber_cpu")
    d = np.abs(x - t)
    return reduce_array(np.where(d < delta, 0.5 * d * d, delta * (d - 0.5 * delta)), reduction, d.dtype)


def _huber_grad(grad: Tensor, self: Tensor, target: Tensor, reduction: str, delta: float) -> Tensor:
    diff = self - target
    return _reduced(grad, reduction, self.numel()) * where(diff.abs() >= delta, diff.sign() * delta, diff)


huber_loss = Op("huber_loss", _huber_loss, node="HuberLossBackward0", inputs=("self", "target"),
                params=("reduction", "delta"), dtype="promote",
                grads=(_huber_grad,
                       lambda grad, self, target, reduction, delta: -_huber_grad(grad, self, target, reduction, delta)),
                jvp="transpose")

_BCE_EPSILON = float(np.float32(1e-12))  # PyTorch's EPSILON is a float literal, in every dtype


def _binary_cross_entropy(x: np.ndarray, t: np.ndarray, weight: Any, reduction: str) -> np.ndarray:
    if t.dtype != x.dtype:
        raise RuntimeError(f"Found dtype {scalar_type_name(t.dtype)} but expected {scalar_type_name(x.dtype)}")
    _check_real_float(x, "binary_cross_entropy")
    if ((x < 0) | (x > 1)).any():
        raise RuntimeError("all elements of input should be between 0 and 1")
    if ((t < 0) | (t > 1)).any():
        raise RuntimeError("all elements of target should be between 0 and 1")
    with np.errstate(divide="ignore"):
        # PyTorch clamps each log at -100 so a confident wrong prediction gives a finite loss.
        loss = (t - 1) * np.maximum(np.log1p(-x), -100.0) - t * np.maximum(np.log(x), -100.0)
    if weight is not None:
        loss = loss * _array(weight)
    return reduce_array(loss, reduction, x.dtype)


def _bce_self_grad(grad: Tensor, self: Tensor, target: Tensor, weight: Any, reduction: str) -> Tensor:
    out = _reduced(grad, reduction, self.numel()) * (self - target) / apply(
        clamp_min, ((1 - self) * self, _BCE_EPSILON))
    return out if weight is None else out * weight


def _bce_target_grad(grad: Tensor, self: Tensor, weight: Any, reduction: str) -> Tensor:
    # PyTorch's -logit(self), unclamped: ±inf where the prediction is exactly 0 or 1.
    out = ((1 - self).log() - self.log()) * grad
    if weight is not None:
        out = out * weight
    return out / self.numel() if reduction == "mean" and self.numel() else out


binary_cross_entropy = Op(
    "binary_cross_entropy", _binary_cross_entropy, node="BinaryCrossEntropyBackward0", inputs=("self", "target"),
    params=("weight", "reduction"), grads=(_bce_self_grad, _bce_target_grad), jvp="transpose", versioned=("weight",))


def _bce_with_logits(x: np.ndarray, t: np.ndarray, weight: Any, pos_weight: Any, reduction: str) -> np.ndarray:
    log_sig = np.minimum(x, 0) - np.log1p(np.exp(-np.abs(x)))  # stable for any |x|
    if pos_weight is not None:
        log_sig = log_sig * ((_array(pos_weight) - 1) * t + 1)
    loss = (1 - t) * x - log_sig
    if weight is not None:
        loss = loss * _array(weight)
    return reduce_array(loss, reduction, np.result_type(x, t))


def _bcel_self_grad(grad: Tensor, self: Tensor, target: Tensor, weight: Any, pos_weight: Any,
                    reduction: str) -> Tensor:
    s = self.sigmoid()
    if pos_weight is None:
        d = s - target
    else:
        pt = pos_weight * target
        d = s * (pt + 1 - target) - pt
    out = _reduced(grad, reduction, self.numel()) * d
    return out if weight is None else out * weight


def _bcel_target_grad(grad: Tensor, self: Tensor, weight: Any, pos_weight: Any, reduction: str) -> Tensor:
    d = -self if pos_weight is None else -self - (pos_weight - 1) * apply(log_sigmoid, (self,))
    out = _reduced(grad, reduction, self.numel()) * d
    return out if weight is None else out * weight


binary_cross_entropy_with_logits = Op(
    "binary_cross_entropy_with_logits", _bce_with_logits, node="BinaryCrossEntropyWithLogitsBackward0",
    inputs=("self", "target"), params=("weight", "pos_weight", "reduction"), dtype="promote",
    grads=(_bcel_self_grad, _bcel_target_grad), jvp="transpose", versioned=("weight", "pos_weight"))


def _rows(n: int) -> np.ndarray:
    """``arange(n)``, read-only and kept per row count: the row index of every pick by class."""
    rows = _ROWS.get(n)
    if rows is None:
        if len(_ROWS) >= 64:  # (batch sizes seen are few; bound the cache all the same)
            _ROWS.clear()
        rows = _ROWS[n] = np.arange(n)
        rows.flags.writeable = False
    return rows


_ROWS: dict[int, np.ndarray] = {}


def _nll_scores(x: np.ndarray) -> np.ndarray:
    """Scores as (M, C): one row per prediction, classes along dim 1 of the input."""
    if x.ndim == 1:
        return x[None, :]
    if x.ndim == 2:
        return x
    return np.moveaxis(x, 1, -1).reshape(-1, x.shape[1])


def _nll_targets(target: np.ndarray, classes: int, weight: Any, ignore_index: int,
                 dtype: Any) -> tuple[np.ndarray, Any]:
    """The picked class per row (0 where ignored) and each row's weight; ``None`` stands for
    all ones (no class weights and nothing ignored: the common case takes fewer passes)."""
    flat = target.reshape(-1).astype(np.int64, copy=False)
    if flat.size and not 0 <= ignore_index < classes:
        # The common case in one reduction: every target in range (a negative int64 seen as
        # uint64 is beyond any class count), so none can be the ignored index.
        if np.maximum.reduce(flat.view(np.uint64)) < classes:
            return flat, (weight[flat].astype(dtype, copy=False) if weight is not None else None)
    elif flat.size:  # in two reductions: every target in range, none ignored
        low, high = np.minimum.reduce(flat), np.maximum.reduce(flat)
        if 0 <= low and high < classes and not low <= ignore_index <= high:
            return flat, (weight[flat].astype(dtype, copy=False) if weight is not None else None)
    valid = flat != ignore_index
    if flat.size and valid.all():
        if flat.min() < 0 or flat.max() >= classes:
            bad = (flat < 0) | (flat >= classes)
            raise IndexError(f"Target {int(flat[bad][0])} is out of bounds.")
        return flat, (weight[flat].astype(dtype, copy=False) if weight is not None else None)
    bad = valid & ((flat < 0) | (flat >= classes))
    if bad.any():
        raise IndexError(f"Target {int(flat[bad][0])} is out of bounds.")
    safe = np.where(valid, flat, 0)
    w = weight[safe] if weight is not None else np.ones(len(safe), dtype)
    return safe, (w * valid).astype(dtype, copy=False)


# The last (N,) target tensor's array a forward found all in [0, C) and none ignored (by
# ``_nll_targets`` or the fused forward), with C and the tensor's version then: a backward given
# that array at that version scatters by it without checking it again. The version is what
# makes this safe: a write in place bumps it, and the node's own check (``versioned=``) refuses
# such a target anyway, but another forward may have been recorded with it since (with an
# ``ignore_index`` that lets it past). Held strongly, so ``is`` cannot match a new array at a
# reused address; replaced at once, so threads read a consistent record.
CHECKED_TARGETS: list[tuple[Any, int, int]] = [(None, 0, 0)]


def _version(tensor: Tensor) -> int:
    counter = tensor._version_counter  # (made on first need: none yet is version 0)
    return 0 if counter is None else counter.value  # type: ignore[no-any-return]


def _nll_loss(x: np.ndarray, target: Any, weight: Any, reduction: str, ignore_index: int) -> np.ndarray:
    _check_real_float(x, "nll_loss_out_frame")
    tensor, target, weight = target, _array(target), _array(weight)
    if x.ndim == 1 and target.ndim == 1:  # a (C,) input's target of one: one 0-d target
        target = target.reshape(())
    scores = _nll_scores(x)
    safe, w = _nll_targets(target, scores.shape[1], weight, ignore_index, x.dtype)
    if w is None and x.ndim == 2 and target.ndim == 1 and tensor is not target:
        CHECKED_TARGETS[0] = (target, scores.shape[1], _version(tensor))  # (w None: no weights, all valid)
    picked = scores[_rows(len(safe)), safe]
    losses = -picked if w is None else -picked * w
    if reduction == "none":
        return losses.reshape(target.shape).astype(x.dtype, copy=False)
    if reduction == "sum":
        return np.asarray(np.add.reduce(losses), dtype=x.dtype)
    if w is None and len(safe):
        return np.asarray(np.add.reduce(losses) / len(safe), dtype=x.dtype)
    total = len(safe) if w is None else w.sum()
    with np.errstate(invalid="ignore", divide="ignore"):  # all targets ignored: NaN, as PyTorch
        return np.asarray(losses.sum() / total, dtype=x.dtype)


def _nll_loss_grad(grad: Tensor, self_shape: tuple[int, ...], self_dtype: Any, target: Any, weight: Any,
                   reduction: str, ignore_index: int) -> Tensor:
    # Linear in the input: grad times constant coefficients (-weight at the target class), so
    # the rule is differentiable again.
    if weight is None and reduction != "none" and len(self_shape) == 2 and not 0 <= ignore_index < self_shape[1]:
        fast = _nll_loss_grad_plain(grad, self_shape, self_dtype, target, reduction)
        if fast is not None:
            return fast
    target, weight = _array(target), _array(weight)
    classes = self_shape[0] if len(self_shape) == 1 else self_shape[1]
    safe, w = _nll_targets(target, classes, weight, ignore_index, self_dtype)
    if w is None:
        w = (1.0 / len(safe) if len(safe) else 0.0) if reduction == "mean" else 1.0
    elif reduction == "mean":
        total = w.sum()
        w = w / total if total else w * 0  # all targets ignored: a NaN loss, but a zero gradient
    coeff = np.zeros((len(safe), classes), self_dtype)
    coeff[_rows(len(safe)), safe] = -w
    if len(self_shape) == 1:
        coeff_full = coeff[0]
    elif len(self_shape) == 2:
        coeff_full = coeff
    else:
        moved = (self_shape[0],) + tuple(self_shape[2:]) + (classes,)
        coeff_full = np.ascontiguousarray(np.moveaxis(coeff.reshape(moved), -1, 1))
    if reduction == "none" and len(self_shape) > 1:
        grad = grad.unsqueeze(1)
    return grad * _make(coeff_full)


def _nll_loss_grad_plain(grad: Tensor, self_shape: tuple[int, ...], self_dtype: Any, target: Any,
                         reduction: str) -> Tensor | None:
    """The gradient of a mean or sum ``nll_loss`` of (N, C) scores without class weights, as one
    array, when no graph is wanted: ``-grad`` (over N for the mean) at each row's target class,
    zeros elsewhere, as PyTorch's kernel fills it. Only for the target tensor its forward found
    valid, unwritten since (``CHECKED_TARGETS``: not checked again); ``None`` for others, and
    where the product must be recorded (create_graph, forward AD) or dtypes differ: the general rule."""
    checked, classes, version = CHECKED_TARGETS[0]
    g = grad._data
    if type(target) is not Tensor or checked is not target._data or version != _version(target) \
            or classes != self_shape[1] or not _plain_arrays(grad) or g.dtype != self_dtype or g.ndim:
        return None
    target = checked
    n = self_shape[0]
    # The general rule's coefficient times grad, the same rounding: grad * dtype(-1/n or -1).
    value = g * np.asarray(-1.0 / n if reduction == "mean" else -1.0, self_dtype)
    coeff = np.zeros(self_shape, self_dtype)
    coeff[_rows(n), target] = value
    return _make(coeff)


# The target and class weights are read again by backward: the node keeps them with their
# versions, and refuses them changed in place (``versioned=``), as PyTorch does.
_NLL_PARAMS = ("target", "weight", "reduction", "ignore_index")
def _nll_loss_jvp(tangents: Any, inputs: Any, params: Any, outputs: Any) -> Any:
    """``nll_loss`` is linear in its input: the tangent is ``nll_loss`` of the input's tangent.
    Where ``nll_of_checked_targets`` gives it on the arrays, the node is recorded around that
    value (``prerun``): the bits and the node of the op's own call, without its target checks."""
    (t,) = tangents
    value = nll_of_checked_targets(t, *params)
    if value is None:
        return [apply(nll_loss, (t, *params))]
    if t._requires_grad and STATE.grad_enabled:
        return [prerun(nll_loss)(t, value, *params)]
    return [Tensor._make(value)]


def nll_of_checked_targets(x: Tensor, target: Any, weight: Any, reduction: str, ignore_index: int) -> Any:
    """``nll_loss(x, target)``'s array (mean or sum) in cross-entropy's case: (N, C) float32/float64
    scores, no class weights, and the targets a forward has just checked (``CHECKED_TARGETS``:
    all in [0, C), none the ignored index), which are picked straight away; None otherwise."""
    data = x._data
    if not (weight is None and reduction != "none" and type(data) is np.ndarray and data.ndim == 2
            and data.dtype in _FULL_FLOATS and type(target) is Tensor):
        return None
    checked, classes, version = CHECKED_TARGETS[0]
    rows = data.shape[0]
    if not (checked is target._data and classes == data.shape[1] and rows == len(checked) and rows
            and not 0 <= ignore_index < classes and version == _version(target)):
        return None
    total = np.add.reduce(data[_rows(rows), checked])  # -sum(-p) is sum(p) negated, bit for bit
    return np.asarray(-total / rows if reduction == "mean" else -total, data.dtype)


nll_loss = Op("nll_loss", _nll_loss, node="NllLossBackward0", params=_NLL_PARAMS, grads=(_nll_loss_grad,),
              jvp=_nll_loss_jvp,
              versioned=("target", "weight"))
nll_loss2d = Op("nll_loss2d", _nll_loss, node="NllLoss2DBackward0", params=_NLL_PARAMS, grads=(_nll_loss_grad,),
                jvp="linear", versioned=("target", "weight"))


def _log_softmax_nll(x: np.ndarray, target_tensor: Tensor, reduction: str) -> tuple[np.ndarray, np.ndarray] | None:
    """``log_softmax(x, 1)`` and the ``nll_loss`` of it in one pass, for ``cross_entropy``'s common
    case: (N, C) float32/float64 scores, N int64 class indices, no class weights. The same values
    as the two forwards (``_log_softmax``, ``_nll_loss``) with half the NumPy calls: one check of
    the targets (which the backward then trusts, ``CHECKED_TARGETS``), no copies of them.
    ``None`` where the general path must run (no rows, a target out of range: its error)."""
    n, classes = x.shape
    target = target_tensor._data
    # One reduction checks 0 <= target < C: a negative int64 seen as uint64 is beyond any C.
    if not n or np.maximum.reduce(target.view(_UINT64)) >= classes:
        return None
    CHECKED_TARGETS[0] = (target, classes, _version(target_tensor))
    logp = x - np.maximum.reduce(x, axis=1, keepdims=True)
    logp -= np.log(np.add.reduce(np.exp(logp), axis=1, keepdims=True))
    picked = logp[_rows(n), target]
    if reduction == "none":
        return logp, -picked
    total = np.add.reduce(picked)  # -sum(-p) is sum(p) negated, bit for bit
    return logp, np.asarray(-total / n if reduction == "mean" else -total, x.dtype)


log_softmax_nll = quiet_forward(_log_softmax_nll)


def _soft_margin_loss(x: np.ndarray, target: Any, reduction: str) -> np.ndarray:
    z = -_array(target) * x
    if z.dtype != x.dtype and z.dtype.kind == "c":  # (the loss is written in the input's real dtype)
        raise RuntimeError(f"result type {scalar_type_name(z.dtype)} can't be cast to the desired output type "
                           f"{scalar_type_name(x.dtype)}")
    if z.dtype.kind == "c":  # (no order for the stable form: PyTorch's log(1 + exp(z)) as written)
        return reduce_array(np.log1p(np.exp(z)), reduction, z.dtype)
    loss = np.maximum(z, 0) + np.log1p(np.exp(-np.abs(z)))  # log(1 + exp(z)), stable
    return reduce_array(loss, reduction, x.dtype)


def _soft_margin_grad(grad: Tensor, self: Tensor, target: Any, reduction: str) -> Tensor:
    t = _make(_array(target).astype(self._data.dtype, copy=False))
    return _reduced(grad, reduction, self.numel()) * (-t * (-t * self).sigmoid())


soft_margin_loss = Op("soft_margin_loss", _soft_margin_loss, node="SoftMarginLossBackward0",
                      params=("target", "reduction"), grads=(_soft_margin_grad,), jvp="transpose",
                      versioned=("target",))


def _multi_margin_parts(shape: tuple[int, ...], target: Any, weight: Any) -> tuple[np.ndarray, ...]:
    n, c = (1, shape[0]) if len(shape) == 1 else shape
    target, weight = _array(target), _array(weight)
    t = target.reshape(n, 1).astype(np.int64, copy=False)
    others = np.arange(c)[None, :] != t
    w = np.ones((n, 1)) if weight is None else weight[t]
    return t, others, w


def _multi_margin_loss(x: np.ndarray, target: Any, p: int, margin: float, weight: Any,
                       reduction: str) -> np.ndarray:
    _check_real_float(x, "multi_margin_loss_cpu_kernel")
    x2 = x.reshape(-1, x.shape[-1])
    t, others, w = _multi_margin_parts(x.shape, target, weight)
    z = np.maximum(margin - np.take_along_axis(x2, t, 1) + x2, 0) * others
    losses = ((z if p == 1 else z * z) * w).sum(1) / x2.shape[1]
    if reduction == "none" and x.ndim == 1:
        return losses.reshape(_array(target).shape).astype(x.dtype, copy=False)
    return reduce_array(losses, reduction, x.dtype)


def _multi_margin_grad(grad: Tensor, self: Tensor, target: Any, p: int, margin: float, weight: Any,
                       reduction: str) -> Tensor:
    x2 = self.reshape(-1, self.shape[-1])
    n, c = x2.shape
    t, others, w = _multi_margin_parts(tuple(self.shape), target, weight)
    index = _make(t)
    z = (margin - x2.gather(1, index)) + x2
    active = _make(others) & (z > 0)
    slope = where(active, 1.0, 0.0) if p == 1 else where(active, 2 * z, 0.0)
    g = grad.reshape(-1, 1) if reduction == "none" else _reduced(grad, reduction, n)
    per_class = slope * _make(np.asarray(w, dtype=self._data.dtype) / c) * g
    dx = per_class - _make((~others).astype(self._data.dtype)) * per_class.sum(1, keepdim=True)
    return dx.reshape(self.shape)


multi_margin_loss = Op("multi_margin_loss", _multi_margin_loss, node="MultiMarginLossBackward0",
                       params=("target", "p", "margin", "weight", "reduction"), grads=(_multi_margin_grad,),
                       jvp="transpose", versioned=("target", "weight"))


def _multilabel_parts(x: np.ndarray, target: Any) -> tuple[np.ndarray, np.ndarray]:
    """Per (sample, class): how often it is listed as a target (before the first -1), and target-ness."""
    t = _array(target).reshape(-1, x.shape[-1])
    listed = np.cumprod(t != -1, axis=1).astype(bool)
    counts = np.zeros(t.shape, dtype=np.int64)
    rows = np.broadcast_to(np.arange(t.shape[0])[:, None], t.shape)
    np.add.at(counts, (rows[listed], t[listed]), 1)
    return counts, counts > 0


def _multilabel_margin_loss(x: np.ndarray, target: Any, reduction: str) -> np.ndarray:
    x2 = x.reshape(-1, x.shape[-1])
    counts, is_target = _multilabel_parts(x, target)
    # margins[n, j, i] = 1 - (x[j] - x[i]) for listed targets j and non-targets i
    margins = np.maximum(1 - x2[:, :, None] + x2[:, None, :], 0) * counts[:, :, None] * ~is_target[:, None, :]
    losses = margins.sum((1, 2)) / x2.shape[1]
    if reduction == "none":
        return losses.reshape(x.shape[:-1]).astype(x.dtype, copy=False)
    return reduce_array(losses, reduction, x.dtype)


def _multilabel_margin_grad(grad: Tensor, self: Tensor, target: Any, reduction: str) -> Tensor:
    # Piecewise linear: constant coefficients times the incoming gradient.
    x2 = self._data.reshape(-1, self.shape[-1])
    counts, is_target = _multilabel_parts(self._data, target)
    active = (1 - x2[:, :, None] + x2[:, None, :] > 0) * counts[:, :, None] * ~is_target[:, None, :]
    coeff = (active.sum(1) - active.sum(2)) / x2.shape[1]  # +1 per active pair for i, -1 for j
    g = grad.reshape(-1, 1) if reduction == "none" else _reduced(grad, reduction, x2.shape[0])
    return (g * _make(coeff.astype(self._data.dtype))).reshape(self.shape)


multilabel_margin_loss = Op("multilabel_margin_loss", _multilabel_margin_loss, node="MultilabelMarginLossBackward0",
                            params=("target", "reduction"), grads=(_multilabel_margin_grad,), jvp="transpose",
                            versioned=("target",))


# ``at::norm(x, p)`` over every element (``torch.norm_except_dim(v, p, -1)``): the Scalar overload's node.
norm_all = Op("norm", _R._vector_norm, node="NormBackward0", params=("ord", "dim", "keepdim"),
              grads=(_R.vector_norm_backward,), jvp="transpose")


# -- ctc_loss: log-space forward-backward over the blank-extended targets -------------------------


def _ctc_extended(target: np.ndarray, blank: int) -> np.ndarray:
    ext = np.full(2 * len(target) + 1, blank, dtype=np.int64)
    ext[1::2] = target
    return ext


def _ctc_one(lp: np.ndarray, target: np.ndarray, blank: int) -> tuple[float, np.ndarray]:
    """One sequence: (negative log-likelihood, PyTorch's gradient w.r.t. ``lp`` (T, C) for a unit
    upstream gradient: ``exp(lp) - posterior`` over the frames used)."""
    steps = lp.shape[0]
    ext = _ctc_extended(target, blank)
    size = len(ext)
    neg = -np.inf
    # s - 2 is a valid predecessor where the label is not blank and differs from the one two back
    skip = np.zeros(size, bool)
    skip[2:] = (ext[2:] != blank) & (ext[2:] != ext[:-2])
    emit = lp[:, ext]  # (T, S)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        alpha = np.full((steps, size), neg)
        if steps:
            alpha[0, 0] = emit[0, 0]
            if size > 1:
                alpha[0, 1] = emit[0, 1]
        for t in range(1, steps):
            prev = alpha[t - 1]
            one = np.full(size, neg)
            one[1:] = prev[:-1]
            two = np.full(size, neg)
            two[2:] = prev[:-2]
            two = np.where(skip, two, neg)
            alpha[t] = np.logaddexp(np.logaddexp(prev, one), two) + emit[t]
        beta = np.full((steps, size), neg)
        if steps:
            beta[-1, -1] = emit[-1, -1]
            if size > 1:
                beta[-1, -2] = emit[-1, -2]
        skip_next = np.zeros(size, bool)
        skip_next[:-2] = skip[2:]
        for t in range(steps - 2, -1, -1):
            nxt = beta[t + 1]
            one = np.full(size, neg)
            one[:-1] = nxt[1:]
            two = np.full(size, neg)
            two[:-2] = nxt[2:]
            two = np.where(skip_next, two, neg)
            beta[t] = np.logaddexp(np.logaddexp(nxt, one), two) + emit[t]
        if steps == 0:
            nll = 0.0 if size == 1 else np.inf
        else:
            nll = -float(np.logaddexp(alpha[-1, -1], alpha[-1, -2] if size > 1 else neg))
        grad = np.exp(lp)
        if steps and np.isfinite(nll):
            both = alpha + beta  # (T, S), each path's emission at t counted twice
            lcab = np.full(lp.shape, neg)
            for s in range(size):
                lcab[:, ext[s]] = np.logaddexp(lcab[:, ext[s]], both[:, s])
            grad = grad - np.exp(lcab + nll - lp)
    return nll, grad


def _ctc_targets(targets: np.ndarray, target_lengths: Any) -> list[np.ndarray]:
    if targets.ndim == 2:  # padded (N, S)
        return [targets[b, :n] for b, n in enumerate(target_lengths)]
    offsets = np.concatenate(([0], np.cumsum(target_lengths)))  # concatenated (sum(target_lengths),)
    return [targets[offsets[b]:offsets[b + 1]] for b in range(len(target_lengths))]


def _ctc_forward(lp: np.ndarray, targets: Any, input_lengths: tuple[int, ...],
                 target_lengths: tuple[int, ...], blank: int, zero_infinity: bool) -> tuple[np.ndarray, np.ndarray]:
    batched = lp.ndim == 3
    x = lp if batched else lp[:, None]
    targets = _array(targets)
    work = x.astype(np.float64)
    losses = np.empty(x.shape[1], np.float64)
    grads = np.zeros(x.shape, np.float64)
    for b, target in enumerate(_ctc_targets(targets, target_lengths)):
        n = input_lengths[b]
        losses[b], grads[:n, b] = _ctc_one(work[:n, b], target.astype(np.int64), blank)
        if zero_infinity and np.isinf(losses[b]):
            grads[:, b] = 0
    out = losses.astype(lp.dtype)
    grads = grads.astype(lp.dtype)
    return (out if batched else out[0]), (grads if batched else grads[:, 0])


def _int_tuple(values: Any) -> tuple[int, ...]:
    """Lengths as PyTorch's node gives them back: a tuple of ints."""
    return tuple(int(v) for v in (values.tolist() if hasattr(values, "tolist") else values))


def _ctc_grad(grad: Any, result1: Tensor, self_shape: tuple[int, ...]) -> Tensor:
    g = grad[0]
    scale = g.reshape(1, -1, 1) if len(self_shape) == 3 else g.reshape(1, 1)
    return scale * result1


ctc_loss = Op("_ctc_loss", _ctc_forward, node="CtcLossBackward0", inputs=("log_probs",),
              params=("targets", "input_lengths", "target_lengths", "blank", "zero_infinity"), outputs=2,
              differentiable_outputs=(True, False),
              # (the gradient was computed by the forward; ``targets`` is read only for its version
              # check: PyTorch's node keeps them, and refuses them written in place)
              grads=(lambda grad, result1, log_probs_shape, targets: _ctc_grad(grad, result1, log_probs_shape),),
              jvp="transpose", versioned=("targets",),
              # PyTorch's names. Not kept: ``log_probs`` and ``result0`` (the loss); ``result1`` is
              # ours, the gradient the forward computed (PyTorch's: the forward variables alpha).
              saved={"blank": "blank", "input_lengths": derived("input_lengths", _int_tuple),
                     "target_lengths": derived("target_lengths", _int_tuple), "targets": "targets",
                     "zero_infinity": "zero_infinity", "result1": "result1"})
