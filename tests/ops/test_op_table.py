"""The op table is the one place an op is defined: no public name is defined twice, the public
surface is the same as before the table declared variants, each entry's declared variants exist and
agree with the function form, and the Tensor layer does not reach up into ``nn``."""

from __future__ import annotations

import ast
import subprocess
import sys
import types
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import retrograd as rg
import retrograd.nn.functional as F
from retrograd.ops import nn as ops_nn

SRC = Path(rg.__file__).parent
# Module-level imports, not API.
_NOT_API = frozenset({"Any", "annotations", "TYPE_CHECKING", "Callable", "Sequence"})

# The public surface of the code before this change (dir() of the modules, typing names and
# submodules left out), written down from a run of it: the API contract these tests hold.
FUNCTIONS_BEFORE = frozenset("""
    FloatTensor Generator Size Tensor abs absolute acos acosh add addcdiv addcmul addmm addmv all
    allclose amax amin any arange arccos arccosh arcsin arcsinh arctan arctan2 arctanh argmax argmin
    argsort argwhere as_tensor asin asinh atan atan2 atanh baddbmm block_diag bmm bool
    broadcast_shapes broadcast_tensors broadcast_to cat ceil cholesky chunk clamp clamp_max
    clamp_min clip clone concat concatenate cos cosh count_nonzero cumprod cumsum default_generator
    det device diag diag_embed diagonal dist div divide dot double dsplit dtype einsum empty
    empty_like enable_grad eq equal erf erfc erfinv exp exp2 expm1 eye fix flatten flip fliplr
    flipud float float16 float32 float64 float_power floor fmod frac from_numpy full full_like
    gather ge ger get_default_dtype greater gt half hsplit hypot index_add index_select
    inference_mode initial_seed inner int int16 int32 int64 int8 inverse
    is_anomaly_check_nan_enabled is_anomaly_enabled is_floating_point is_grad_enabled
    is_inference_mode_enabled is_tensor isclose isfinite isinf isnan kron kthvalue le lerp less
    linspace load log log10 log1p log2 log_softmax logaddexp logaddexp2 logdet logical_and
    logical_not logical_or logsumexp long lt manual_seed masked_fill masked_select matmul
    matrix_power max maximum mean median meshgrid min minimum mm mode moveaxis movedim msort mul
    multiply mv nan_to_num nanmean nanmedian nansum narrow ne neg negative no_grad nonzero norm
    normal numel ones ones_like outer permute pow prod rand rand_like randint randint_like randn
    randn_like randperm ravel reciprocal relu remainder repeat_interleave reshape roll round rsqrt
    rsub save scatter scatter_add seed select set_anomaly_enabled set_default_dtype set_grad_enabled
    set_printoptions short sigmoid sign sin sinh slogdet softmax sort split split_with_sizes sqrt
    square squeeze stack std std_mean sub subtract sum svd swapaxes swapdims t take take_along_dim
    tan tanh tensor tensor_split tensordot tile topk trace transpose tril triu true_divide trunc
    uint8 unbind unflatten unsqueeze var var_mean vdot vsplit where zeros zeros_like
""".split())

TENSOR_METHODS_BEFORE = frozenset("""
    T abs abs_ absolute acos acos_ acosh acosh_ add add_ addcdiv addcdiv_ addcmul addcmul_ addmm
    addmm_ addmv all amax amin any arccos arccos_ arccosh arccosh_ arcsin arcsin_ arcsinh arcsinh_
    arctan arctan2 arctan2_ arctan_ arctanh arctanh_ argmax argmin argsort argwhere asin asin_ asinh
    asinh_ atan atan2 atan2_ atan_ atanh atanh_ backward baddbmm bmm bool broadcast_to byte ceil
    ceil_ cholesky chunk clamp clamp_ clamp_max clamp_max_ clamp_min clamp_min_ clip clip_ clone
    contiguous copy_ cos cos_ cosh cosh_ count_nonzero cpu cuda cumprod cumprod_ cumsum cumsum_ data
    det detach detach_ device diag diag_embed diagonal dim dist div div_ divide divide_ dot double
    dsplit dtype element_size eq erf erf_ erfc erfc_ erfinv erfinv_ exp exp2 exp2_ exp_ expand
    expand_as expm1 expm1_ fill_ fix fix_ flatten flip fliplr flipud float float_power float_power_
    floor floor_ fmod fmod_ frac frac_ gather ge ger grad grad_fn greater gt half hardshrink hsplit
    hypot hypot_ index_add index_add_ index_select inner int inverse is_complex is_contiguous
    is_cuda is_floating_point is_inference is_leaf item kron kthvalue le lerp lerp_ less log log10
    log10_ log1p log1p_ log2 log2_ log_ log_softmax logaddexp logaddexp2 logdet logical_and
    logical_not logical_or logsumexp long lt mT masked_fill masked_fill_ masked_select matmul
    matrix_power max mean median min mm mode moveaxis movedim msort mul mul_ multiply mv nan_to_num
    nan_to_num_ nanmean nanmedian nansum narrow ndim ndimension ne neg neg_ negative nelement
    new_empty new_full new_ones new_tensor new_zeros nonzero norm numel numpy outer output_nr
    permute pow pow_ prelu prod ravel reciprocal reciprocal_ register_hook
    register_post_accumulate_grad_hook relu relu_ remainder remainder_ repeat repeat_interleave
    requires_grad requires_grad_ reshape reshape_as retain_grad retains_grad roll round round_ rsqrt
    rsqrt_ scatter scatter_ scatter_add scatter_add_ select shape short sigmoid sigmoid_ sign sign_
    sin sin_ sinh sinh_ size slogdet softmax sort split split_with_sizes sqrt sqrt_ square square_
    squeeze std stride sub sub_ subtract subtract_ sum sum_to_size svd swapaxes swapdims t take
    take_along_dim tan tan_ tanh tanh_ tensor_split tile to tolist topk trace transpose tril tril_
    triu triu_ true_divide true_divide_ trunc trunc_ type type_as unbind unflatten unsqueeze var
    vdot view view_as vsplit where zero_
""".split())

FUNCTIONAL_BEFORE = frozenset("""
    STATE Size Tensor adaptive_avg_pool1d adaptive_avg_pool2d adaptive_max_pool1d
    adaptive_max_pool1d_with_indices adaptive_max_pool2d adaptive_max_pool2d_with_indices
    alpha_dropout apply apply_inplace avg_pool1d avg_pool2d batch_norm bilinear binary_cross_entropy
    binary_cross_entropy_with_logits broadcast_error celu celu_ channel_shuffle conv1d conv2d conv3d
    conv_transpose1d conv_transpose2d conv_transpose3d cosine_embedding_loss cosine_similarity
    cross_entropy dropout dropout1d dropout2d dropout3d elu elu_ embedding embedding_bag
    feature_alpha_dropout fold gaussian_nll_loss gelu glu group_norm gumbel_softmax hardshrink
    hardsigmoid hardswish hardtanh hardtanh_ hinge_embedding_loss huber_loss instance_norm
    interpolate kl_div l1_loss layer_norm leaky_relu leaky_relu_ linear local_response_norm
    log_softmax logsigmoid margin_ranking_loss max_pool1d max_pool1d_with_indices max_pool2d
    max_pool2d_with_indices mish mse_loss multi_margin_loss multilabel_margin_loss
    multilabel_soft_margin_loss native_channel_shuffle nll_loss no_grad normalize normalize_dim
    one_hot pad pairwise_distance pdist pixel_shuffle pixel_unshuffle poisson_nll_loss prelu relu
    relu6 relu_ rms_norm rrelu rrelu_ scalar_type_name scaled_dot_product_attention selu selu_
    sigmoid silu smooth_l1_loss soft_margin_loss softmax softmin softplus softshrink softsign tanh
    tanhshrink threshold threshold_ triplet_margin_loss triplet_margin_with_distance_loss unfold
    upsample upsample_bilinear upsample_nearest
""".split())


def _public(module: Any) -> set[str]:
    return {n for n in dir(module) if not n.startswith("_") and n not in _NOT_API
            and not isinstance(getattr(module, n), types.ModuleType)}


# Names added on purpose since the list was written.
FUNCTIONS_ADDED = frozenset({"is_warn_always_enabled", "set_warn_always"})
# Issue #12, the shape / linear-algebra / creation ops.
FUNCTIONS_ADDED |= frozenset(
    "rot90 unsafe_split unsafe_split_with_sizes unsafe_chunk diagflat atleast_1d atleast_2d atleast_3d hstack vstack "
    "row_stack dstack column_stack cartesian_prod combinations adjoint tril_indices triu_indices vander logspace "
    "range scalar_tensor bartlett_window blackman_window hamming_window hann_window kaiser_window empty_strided "
    "empty_permuted addr addbmm addmv_ cross pinverse matrix_exp chain_matmul select_scatter slice_scatter "
    "diagonal_scatter".split()
)
TENSOR_METHODS_BEFORE |= frozenset(
    "rot90 unsafe_split unsafe_split_with_sizes unsafe_chunk diagflat adjoint H mH new_empty_strided addr addr_ addbmm "
    "addbmm_ addmv_ baddbmm_ cross pinverse matrix_exp select_scatter slice_scatter diagonal_scatter unfold "
    "fill_diagonal_".split()
)


def test_public_functions_unchanged() -> None:
    assert _public(rg) == FUNCTIONS_BEFORE | FUNCTIONS_ADDED


def test_tensor_methods_unchanged() -> None:
    assert {n for n in dir(rg.Tensor) if not n.startswith("_")} == TENSOR_METHODS_BEFORE


def test_functional_names_kept() -> None:
    assert FUNCTIONAL_BEFORE <= _public(F)


def _module_level_definitions(path: Path) -> list[str]:
    """Names a module binds at its top level (defs, classes, assignments) plus names it binds in
    bulk from string tuples (``_METHOD_FUNCTIONS`` and friends in ``_functions.py``)."""
    tree = ast.parse(path.read_text())
    names: list[str] = []
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            names.append(node.name)
        elif isinstance(node, ast.Assign):
            names += [t.id for t in node.targets if isinstance(t, ast.Name)]
    return names


def _class_method_definitions(path: Path, cls: str) -> list[str]:
    tree = ast.parse(path.read_text())
    (body,) = [n.body for n in tree.body if isinstance(n, ast.ClassDef) and n.name == cls]
    # A property's setter repeats the property's name: not a second definition.
    return [n.name for n in body if isinstance(n, ast.FunctionDef)
            and not any(isinstance(d, ast.Attribute) and d.attr in ("setter", "deleter") for d in n.decorator_list)]


def test_functions_module_defines_each_name_once() -> None:
    import retrograd._functions as fn

    bulk = [*fn._METHOD_FUNCTIONS, *fn._ELEMENTWISE_FUNCTIONS, *fn._REDUCTION_FUNCTIONS,
            *fn._SHAPE_FUNCTIONS, *fn._LINALG_FUNCTIONS, *fn._VARIANT_FUNCTIONS]
    explicit = [n for n in _module_level_definitions(SRC / "_functions.py") if not n.startswith("_")]
    names = bulk + explicit
    assert sorted({n for n in names if names.count(n) > 1}) == []


def test_tensor_defines_each_method_once() -> None:
    names = _class_method_definitions(SRC / "tensor.py", "Tensor")
    twice = sorted({n for n in names if names.count(n) > 1 and not n.startswith("__")})
    assert twice == []


@pytest.mark.parametrize("module", ["elementwise", "reduce", "shape", "linalg", "nn", "conv", "indexing",
                                    "inplace"])
def test_op_modules_define_each_name_once(module: str) -> None:
    names = [n for n in _module_level_definitions(SRC / "ops" / f"{module}.py") if not n.startswith("_")]
    assert sorted({n for n in names if names.count(n) > 1}) == []


def test_nn_ops_reuse_the_elementwise_erf_and_clamp_min() -> None:
    from retrograd.ops import elementwise

    # One entry per PyTorch node name: gelu's and the losses' erf / clamp_min are the table's own.
    assert ops_nn.erf is elementwise.erf
    assert ops_nn.clamp_min is elementwise.clamp_min_scalar
    assert ops_nn.rsqrt is elementwise.rsqrt
    x = rg.tensor([-3.0, -0.5, 0.0, 0.7, 2.5], dtype=rg.float64, requires_grad=True)
    assert rg.autograd.gradcheck(lambda t: F.gelu(t), (x,))
    assert rg.autograd.gradgradcheck(lambda t: F.gelu(t), (x,))
    assert rg.autograd.gradgradcheck(lambda t: F.rms_norm(t, (5,)), (x,))
    assert rg.autograd.gradcheck(lambda t: F.hinge_embedding_loss(t, rg.tensor([1.0, -1, -1, 1, -1],
                                                                                 dtype=rg.float64)), (x,))


def test_gelu_matches_torch(torch: Any) -> None:
    data = np.linspace(-6, 6, 41)
    # float32 loses ~2e-7 in 1 + erf(x) at negative x (as before this change); float64 is exact.
    for dtype, atol in (("float32", 1e-6), ("float64", 1e-14)):
        ours = F.gelu(rg.tensor(data, dtype=getattr(rg, dtype)))
        theirs = torch.nn.functional.gelu(torch.tensor(data, dtype=getattr(torch, dtype)))
        np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=1e-6, atol=atol)
        assert str(ours.dtype) == str(theirs.dtype)


def test_tensor_layer_does_not_import_nn() -> None:
    # ``Tensor.prelu`` is the op table's prelu: using it loads no ``retrograd.nn``.
    code = ("import sys, retrograd as rg\n"
            "y = rg.tensor([[-1.0, 2.0]]).prelu(rg.tensor([0.25]))\n"
            "assert y.tolist() == [[-0.25, 2.0]], y\n"
            "assert not [m for m in sys.modules if m.startswith('retrograd.nn')], sorted(sys.modules)\n")
    subprocess.run([sys.executable, "-c", code], check=True, env={"PYTHONPATH": str(SRC.parent)})
    tree = ast.parse((SRC / "tensor.py").read_text())
    imported = [n.module for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)]
    assert not [m for m in imported if m and (m == "nn" or m.startswith("nn."))]


def test_prelu_forms_agree_with_torch(torch: Any) -> None:
    x = np.array([[-1.0, 2.0, -3.0], [4.0, -5.0, 0.0]])
    w = np.array([0.25, 0.5, 0.1])
    expected = torch.tensor(x).prelu(torch.tensor(w)).numpy()
    for form in (lambda a, b: a.prelu(b), F.prelu, ops_nn.prelu):
        np.testing.assert_allclose(form(rg.tensor(x), rg.tensor(w)).numpy(), expected)


def _declared() -> list[Any]:
    from retrograd.ops import variants

    return variants.declared()


def test_declared_variants_exist_publicly() -> None:
    entries = _declared()
    assert len(entries) >= 12
    for op in entries:
        if "function" in op.variants:
            assert callable(getattr(rg, op.name)), op.name
        if "method" in op.variants:
            assert callable(getattr(rg.Tensor, op.name)), op.name
        if "inplace" in op.variants:
            assert callable(getattr(rg.Tensor, op.name + "_")), op.name


# (every other declared form: tests/ops/test_variant_forms.py)
@pytest.mark.parametrize("name", [op.name for op in _declared()
                                  if op.n_args == 1 and set(op.variants) == {"function", "method", "inplace"}])
def test_variants_behave_as_the_function_form(name: str, torch: Any) -> None:
    data = np.array([0.1, 0.4, 0.7, 0.9])  # inside every declared op's domain (erfinv: |x| < 1)
    fn = getattr(rg, name)
    x = rg.tensor(data, dtype=rg.float64, requires_grad=True)
    y = fn(x)
    expected = getattr(torch, name)(torch.tensor(data, dtype=torch.float64))
    np.testing.assert_allclose(y.detach().numpy(), expected.numpy(), rtol=1e-12)
    assert type(y.grad_fn).__name__ == type(getattr(torch, name)(
        torch.tensor(data, requires_grad=True)).grad_fn).__name__
    (g_fn,) = rg.autograd.grad(y.sum(), x)
    x2 = rg.tensor(data, dtype=rg.float64, requires_grad=True)
    y2 = getattr(x2, name)()
    np.testing.assert_array_equal(y2.detach().numpy(), y.detach().numpy())
    (g_method,) = rg.autograd.grad(y2.sum(), x2)
    np.testing.assert_array_equal(g_method.numpy(), g_fn.numpy())
    # In place: same values and gradient through the rewritten history, the version bumped.
    leaf = rg.tensor(data, dtype=rg.float64, requires_grad=True)
    z = leaf.clone()
    assert getattr(z, name + "_")() is z and z._version == 1
    np.testing.assert_array_equal(z.detach().numpy(), y.detach().numpy())
    (g_inplace,) = rg.autograd.grad(z.sum(), leaf)
    np.testing.assert_allclose(g_inplace.numpy(), g_fn.numpy(), rtol=1e-15)
    assert rg.autograd.gradgradcheck(fn, (x,))
    # PyTorch's arity errors, for the function form as for the method.
    with pytest.raises(TypeError):
        getattr(rg.tensor(data), name)(1)


def test_variants_are_checked_where_declared() -> None:
    from retrograd.ops import variants
    from retrograd.ops.op import Op

    with pytest.raises(ValueError, match="'fuction', which is not one of"):
        Op("bad", np.negative, grads=None, variants=("fuction",))
    # An in-place form may be an entry of its own (asinh_'s AsinhBackward1): the method form is
    # looked for among all entries, where the forms are bound.
    with pytest.raises(ValueError, match="needs the 'method' variant"):
        variants.declared([types.SimpleNamespace(a=Op("bad", np.negative, grads=None, variants=("inplace",)))])
    module = types.SimpleNamespace(a=Op("twin", np.negative, grads=None, variants=("method",)),
                                   b=Op("twin", np.positive, grads=None, variants=("method",)))
    with pytest.raises(ValueError, match="two entries"):
        variants.declared([module])

    class Hand:
        def twin(self) -> None: ...

    with pytest.raises(ValueError, match="defined by hand"):
        variants.bind_methods(Hand, [module.a])
    assert Hand.twin.__qualname__ == "test_variants_are_checked_where_declared.<locals>.Hand.twin"


def test_one_input_variant_methods_have_no_extra_frame() -> None:
    # The derived method is the same single call into ``apply`` a hand-written method was.
    import dis

    calls = [i for i in dis.get_instructions(rg.Tensor.erf) if i.opname.startswith("CALL")]
    assert len(calls) == 1
