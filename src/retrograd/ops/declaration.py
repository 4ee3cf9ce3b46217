"""What an ``Op`` entry declares, checked when the entry is made.

An ``Op`` (``ops/op.py``) is two things: this frozen ``Declaration`` (the entry as written) and
the run plan the dispatcher derives from it (save plans, fast-path flags, call paths, node
class). A misspelt option fails here, at import of the op table, with the valid choices named,
instead of silently taking a slow or wrong path at run time:

>>> from retrograd.ops.declaration import Declaration
>>> Declaration("exp", abs, dtype="promte")
Traceback (most recent call last):
...
ValueError: Op 'exp': dtype='promte' is not one of 'float', 'float_unary', 'promote', 'promote+params', 'promote_values', 'same'
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any

# How an op's output dtype follows its inputs (``ops/op.py``, ``_cast_arrays``):
DTYPE_RULES = frozenset({
    "same",            # no cast: the forward sees the inputs' own dtypes
    "float_unary",     # integers become the default float
    "promote",         # PyTorch's type promotion over the inputs
    "promote+params",  # the same, scalar params counting too
    "promote_values",  # promotion over all inputs but the first (``where``'s condition)
    "float",           # promotion, then integers become the default float
})

# The public forms of an op (PyTorch's ``variants:``): ``retrograd.<name>``, ``Tensor.<name>``,
# ``Tensor.<name>_``.
VARIANTS = frozenset({"function", "method", "inplace"})

# How a public form converts an argument before the op sees it (``convert={"dim": "dims"}``;
# ops/variants.py writes the conversion into the form):
CONVERSIONS = frozenset({
    "scalar",  # a Python number or tensor passes, a NumPy value becomes one (as operators' operands)
    "dim",     # one dim, wrapped and range-checked against the tensor (``reduce.normalize_dim``)
    "dims",    # None, a dim or dims: a sorted tuple (``reduce.normalize_dims``)
    "int",     # ``int(value)``
    "float",   # ``float(value)``
    "tensor",  # must be a Tensor: PyTorch's TypeError for a number (``atan2(): argument 'other' ...``)
    "integer",  # must be an int (not a bool or float): PyTorch's TypeError (``mvlgamma(): argument 'p' ...``)
    "index",   # an index or mask, a Tensor or array-like, as a NumPy array (``shape._index_array``)
    "versioned_index",  # the same, a Tensor kept as itself: for a ``versioned=`` param (``shape.versioned_index``)
    "mask",    # must be a Tensor (PyTorch's TypeError otherwise), as its NumPy array
    "versioned_mask",  # the same, the Tensor kept as itself: for a ``versioned=`` param (``shape.versioned_index``)
    "str",     # must be a str: PyTorch's TypeError otherwise (``scatter_reduce(): argument 'reduce' ...``)
    "bool",    # must be a bool: PyTorch's TypeError otherwise (``put(): argument 'accumulate' ...``)
})

# How an op carries tangents in forward-mode AD (``jvp=``; ops/forward.py derives each, and
# docs/api/forward_ad.md says when each is exact). A function instead is the rule itself:
# ``rule(tangents, inputs, params, outputs) -> output tangents``.
JVP_DERIVATIONS = frozenset({
    "linear",              # linear in its differentiable inputs jointly: the op of the tangents
    "multilinear",         # linear in each input separately: sum of the op with one tangent each
    "affine_multilinear",  # beta * input + alpha * multilinear(rest)
    "elementwise",         # a real elementwise op: its (self-adjoint) VJP rules of the tangents
    "transpose",           # the VJP rule's transpose, by differentiating it in the gradient
    "unsupported",         # PyTorch's "Trying to use forward AD with ..." error (as PyTorch)
})

# Rule parameter names with a fixed meaning, which no input or param may take. (An input may be
# called ``result``, as ``tanh_backward``'s is: a rule's ``result`` then means that input.)
RESERVED_NAMES = frozenset({"needs"})


def _choices(options: frozenset[str]) -> str:
    return ", ".join(repr(o) for o in sorted(options))


class Declaration:
    """One op-table entry as declared: validated on creation, never changed afterwards.

    >>> import numpy as np
    >>> Declaration("mul", np.multiply, inputs=("self", "other"), dtype="promote").inputs
    ('self', 'other')

    (A frozen dataclass's behaviour, written out: ``@dataclass`` and its module cost a tenth of
    what ``import retrograd`` adds to ``import numpy``. The fields are the annotated names below,
    ``_FIELDS``, each default the class attribute.)
    """

    name: str
    forward: Callable[..., Any]
    node: str | None = None
    inputs: tuple[str, ...] = ("self",)
    params: tuple[str, ...] = ()
    grads: Sequence[Callable[..., Any] | None] | Callable[..., Any] | None = None
    dtype: str = "same"
    view: bool = False
    outputs: int = 1
    differentiable_outputs: tuple[bool, ...] | None = None
    saved: Sequence[str] | Mapping[str, Any] | None = None
    variants: tuple[str, ...] = ()
    # How the public forms look (ops/variants.py makes them from these; see docs/adding_an_op.md):
    aliases: tuple[str, ...] = ()         # more public names (``arcsin``; ``arcsin_`` in place)
    signature: str | None = None          # the parameters after the tensor, as Python text
    convert: Mapping[str, str] | None = None  # argument -> a conversion in CONVERSIONS
    operators: tuple[str, ...] = ()       # Tensor dunders that are the op's own call path
    hot: bool = False                     # the method form is the op's own call path, too
    # A NumPy ufunc that can write ``self op= other`` into its first argument (``out=self``), so
    # that ``x.add_(y)`` under no_grad does so (ops/inplace.py).
    inplace_ufunc: Any = None
    # The JVP (forward AD): a kind in JVP_DERIVATIONS or a rule function; every differentiable
    # entry declares one (tests/ops/test_jvp_declared.py), a non-differentiable one none.
    jvp: str | Callable[..., Any] | None = None
    # Params that a caller may give as a Tensor whose data the backward reads (a loss's target,
    # an index): the node keeps such a tensor with its version, and a rule reading it gets it back
    # only if it was not written in place since (PyTorch's version error otherwise), as an input.
    versioned: tuple[str, ...] = ()

    def __init__(
        self,
        name: str,
        forward: Callable[..., Any],
        node: str | None = None,
        inputs: tuple[str, ...] = ("self",),
        params: tuple[str, ...] = (),
        grads: Sequence[Callable[..., Any] | None] | Callable[..., Any] | None = None,
        dtype: str = "same",
        view: bool = False,
        outputs: int = 1,
        differentiable_outputs: tuple[bool, ...] | None = None,
        saved: Sequence[str] | Mapping[str, Any] | None = None,
        variants: tuple[str, ...] = (),
        aliases: tuple[str, ...] = (),
        signature: str | None = None,
        convert: Mapping[str, str] | None = None,
        operators: tuple[str, ...] = (),
        hot: bool = False,
        inplace_ufunc: Any = None,
        jvp: str | Callable[..., Any] | None = None,
        versioned: tuple[str, ...] = (),
    ) -> None:
        # (one dict update, not a frozen dataclass's object.__setattr__ per field)
        self.__dict__.update(
            name=name, forward=forward, node=node, inputs=inputs, params=params, grads=grads, dtype=dtype,
            view=view, outputs=outputs, differentiable_outputs=differentiable_outputs, saved=saved,
            variants=variants, aliases=aliases, signature=signature, convert=convert, operators=operators,
            hot=hot, inplace_ufunc=inplace_ufunc, jvp=jvp, versioned=versioned)
        self.__post_init__()

    def _values(self) -> tuple[Any, ...]:
        return tuple(getattr(self, field) for field in _FIELDS)

    def __repr__(self) -> str:
        return f"Declaration({', '.join(f'{field}={getattr(self, field)!r}' for field in _FIELDS)})"

    def __eq__(self, other: object) -> bool:
        if other.__class__ is not self.__class__:
            return NotImplemented
        return self._values() == other._values()  # type: ignore[attr-defined]

    def __hash__(self) -> int:
        return hash(self._values())

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError(f"cannot assign to field {name!r}")  # (frozen)

    def __delattr__(self, name: str) -> None:
        raise AttributeError(f"cannot delete field {name!r}")

    def __post_init__(self) -> None:
        name = self.name
        if not isinstance(name, str) or not name:
            raise ValueError(f"Op name must be a non-empty string, got {name!r}")
        where = f"Op {name!r}"
        if not callable(self.forward):
            raise TypeError(f"{where}: forward must be callable, got {type(self.forward).__name__}")
        if self.dtype not in DTYPE_RULES:
            raise ValueError(f"{where}: dtype={self.dtype!r} is not one of {_choices(DTYPE_RULES)}")
        # Sequences given as lists or a bare string are normalised (a bare string is one name).
        for field in ("inputs", "params", "variants", "aliases", "operators", "versioned"):
            value = getattr(self, field)
            object.__setattr__(self, field, (value,) if isinstance(value, str) else tuple(value))
        for variant in self.variants:
            if variant not in VARIANTS:
                raise ValueError(f"{where}: variants has {variant!r}, which is not one of {_choices(VARIANTS)}")
        if len(set(self.variants)) != len(self.variants):
            raise ValueError(f"{where}: variants {self.variants} repeats a form")
        if not self.inputs:
            raise ValueError(f"{where}: an op takes at least one input")
        names = [self.inputs[0][1:] if len(self.inputs) == 1 and self.inputs[0].startswith("*") else n
                 for n in self.inputs] + list(self.params)
        for n in names:
            if not isinstance(n, str) or not n.isidentifier():
                raise ValueError(f"{where}: input and param names must be identifiers, got {n!r}")
            if n in RESERVED_NAMES:
                raise ValueError(f"{where}: {n!r} means something else to a backward rule; rename the input")
        if len(set(names)) != len(names):
            raise ValueError(f"{where}: input and param names must be distinct, got {tuple(names)}")
        for n in self.versioned:
            if n not in self.params:
                raise ValueError(f"{where}: versioned names {n!r}, which is not one of its params {self.params}")
        if self.node is not None and (not isinstance(self.node, str) or not self.node.isidentifier()):
            raise ValueError(f"{where}: node must be a class name, got {self.node!r}")
        if type(self.view) is not bool:
            raise TypeError(f"{where}: view must be True or False, got {self.view!r}")
        if type(self.outputs) is not int or self.outputs == 0 or self.outputs < -1:
            raise ValueError(f"{where}: outputs must be a positive count or -1 (any), got {self.outputs!r}")
        if self.differentiable_outputs is not None:
            flags = tuple(self.differentiable_outputs)
            object.__setattr__(self, "differentiable_outputs", flags)
            if self.outputs > 0 and len(flags) != self.outputs:
                raise ValueError(f"{where}: differentiable_outputs has {len(flags)} flags for {self.outputs} outputs")
        self._check_forms(where, names[1:])
        if self.inplace_ufunc is not None and not callable(self.inplace_ufunc):
            raise TypeError(f"{where}: inplace_ufunc must be a NumPy ufunc, got {self.inplace_ufunc!r}")
        if self.jvp is not None:
            self._check_jvp(where)

    def _check_jvp(self, where: str) -> None:
        """``jvp=``: a known derivation or a rule function, and only on a differentiable op."""
        if self.grads is None:
            raise ValueError(f"{where}: jvp={self.jvp!r} declared, and the op is not differentiable (no grads)")
        if isinstance(self.jvp, str):
            if self.jvp not in JVP_DERIVATIONS:
                raise ValueError(f"{where}: jvp={self.jvp!r} is not one of {_choices(JVP_DERIVATIONS)}, "
                                 "or a rule function")
        elif not callable(self.jvp):
            raise TypeError(f"{where}: jvp must be one of {_choices(JVP_DERIVATIONS)} or a rule function, "
                            f"got {type(self.jvp).__name__}")

    def _check_forms(self, where: str, arguments: list[str]) -> None:
        """The fields that shape the public forms: names that exist, a signature that passes
        every argument, operators and ``hot`` only where a call path can serve them."""
        for alias in self.aliases:
            if not alias.isidentifier():
                raise ValueError(f"{where}: alias {alias!r} is not an identifier")
        if self.aliases and not self.variants:
            raise ValueError(f"{where}: aliases name public forms, and the entry declares no variants")
        for alias in self.aliases:
            if alias.endswith("_") and "inplace" not in self.variants:
                raise ValueError(f"{where}: alias {alias!r} names an in-place form, and the entry has none")
        if self.signature is not None:
            if not self.variants:
                raise ValueError(f"{where}: a signature shapes public forms, and the entry declares no variants")
            declared = signature_names(self.signature, where)
            if sorted(declared) != sorted(arguments):
                raise ValueError(f"{where}: signature ({self.signature}) must name the arguments after the "
                                 f"first input exactly once: {tuple(arguments)}")
        for name, conversion in dict(self.convert or {}).items():
            if name not in arguments:
                raise ValueError(f"{where}: convert names {name!r}, which is not an argument after the first "
                                 f"input: {tuple(arguments)}")
            if conversion not in CONVERSIONS:
                raise ValueError(f"{where}: convert has {conversion!r}, which is not one of {_choices(CONVERSIONS)}")
        for name in self.operators:
            if not (name.startswith("__") and name.endswith("__") and name[2:-2].isidentifier()):
                raise ValueError(f"{where}: operators takes dunder names, got {name!r}")
        single = len(self.inputs) == 1 and not self.params and not self.inputs[0].startswith("*")
        if self.operators and not (single or (len(self.inputs) == 2 and len(arguments) <= 2)):
            raise ValueError(f"{where}: operators need a one-input op or a two-input op")
        if type(self.hot) is not bool:
            raise TypeError(f"{where}: hot must be True or False, got {self.hot!r}")
        if self.hot and not (single and "method" in self.variants):
            raise ValueError(f"{where}: hot binds the method form to the one-input call path: "
                             "a one-input op without params, with a 'method' variant")


_FIELDS = ("name", "forward", "node", "inputs", "params", "grads", "dtype", "view", "outputs", "differentiable_outputs",
           "saved", "variants", "aliases", "signature", "convert", "operators", "hot", "inplace_ufunc", "jvp",
           "versioned")


def signature_names(signature: str, where: str = "signature") -> list[str]:
    """The argument names of a public form's signature text (after the tensor), checked to be
    plain parameters (no ``*args``/``**kwargs``: every argument reaches the op by name).

    >>> signature_names("other, *, alpha=1")
    ['other', 'alpha']
    """
    names = _SIGNATURE_NAMES.get(signature)
    if names is None:
        names = _plain_signature_names(signature)
    if names is None:
        import ast

        try:
            tree = ast.parse(f"def f(self, {signature}): pass")
        except SyntaxError:
            raise ValueError(f"{where}: signature {signature!r} is not a Python parameter list") from None
        args = tree.body[0].args  # type: ignore[attr-defined]
        if args.vararg is not None or args.kwarg is not None:
            raise ValueError(f"{where}: signature {signature!r} may not take *args or **kwargs")
        names = _SIGNATURE_NAMES[signature] = tuple(a.arg for a in (*args.posonlyargs, *args.args, *args.kwonlyargs))[1:]
    return list(names)


# Signatures already parsed (many entries share one text, and parsing was most of the checks' cost
# at import), only those that passed the checks.
_SIGNATURE_NAMES: dict[str, tuple[str, ...]] = {}

# Nearly every signature is names, ``*`` and literal defaults (``dim=None``, ``dims=(0, 1)``,
# ``rtol=1e-05``). Those are read by this pattern instead of ``ast.parse`` (a third of the
# entries' checks at import); anything else takes the parser.
_LITERAL = r"(?:None|True|False|-?\d+(?:\.\d*)?(?:e-?\d+)?|\(\s*\)|\((?:\s*-?\d+\s*,)+\s*(?:-?\d+\s*)?\))"
_PARAMETER = re.compile(rf"\s*(\*|[A-Za-z_]\w*)\s*(=\s*{_LITERAL})?\s*")


def _plain_signature_names(signature: str) -> tuple[str, ...] | None:
    """The names of a signature made only of plain parameters with literal defaults, or None
    when it has anything else (the caller then parses it): what ``ast.parse`` would accept."""
    names: list[str] = []
    keyword_only = defaulted = False
    position, end = 0, len(signature)
    while True:
        match = _PARAMETER.match(signature, position)
        if match is None:
            return None
        name, default = match.groups()
        if name == "*":
            if keyword_only or default is not None:
                return None
            keyword_only = True
        else:
            if default is None and defaulted and not keyword_only:
                return None  # a non-default parameter after a default one: the parser says so
            defaulted = defaulted or default is not None
            names.append(name)
        position = match.end()
        if position == end:
            break
        if signature[position] != ",":
            return None
        position += 1
    if name == "*" or len(set(names)) != len(names):
        return None  # a bare trailing ``*``, a repeated name: the parser's (or the checks') message
    _SIGNATURE_NAMES[signature] = result = tuple(names)
    return result
