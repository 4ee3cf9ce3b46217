"""The public forms of op-table entries, derived from each entry's declaration (PyTorch's
``variants:`` in ``native_functions.yaml``).

An entry declares which forms it has: ``"function"`` (``retrograd.<name>(input, ...)``),
``"method"`` (``Tensor.<name>(...)``) and ``"inplace"`` (``Tensor.<name>_(...)``, the name derived),
and how they look (fields of ``ops/declaration.py``): ``aliases`` (more names: ``arcsin`` for the
function and method, ``arcsin_`` for the in-place form), ``signature`` (the parameters after the
tensor as Python text, keywords and defaults included: ``"other, *, alpha=1"``), ``convert`` (what
is done to an argument first, one of ``CONVERSIONS`` below), ``operators`` (Tensor dunders that are
the op's own call path, ``__add__``) and ``hot`` (the method is the op's own one-input call path,
no wrapper frame). Two entries may share a public name as PyTorch's ``Tensor``/``Scalar``
overloads do: the same signature, some arguments tensor inputs of one and params of the other
(``fmod``, ``clamp``); the form calls the first when any of them is a Tensor. An in-place form
may be an entry of its own (``asinh_inplace``: PyTorch records ``AsinhBackward1``).

This module is the one binding point: the end of ``tensor.py`` calls ``bind_methods`` and
``_functions.py`` calls ``bind_functions``, so a new op is one entry plus its opdb sample. The
forms are written as Python source (``forms_source``), with the declared signature, so that
``inspect.signature`` shows it and a wrong call raises Python's TypeError as a ``def`` would, and
compiled, registered with ``linecache`` like all generated code. Which forms exist (and any
clash) is settled at import; each form's code is made on its first lookup (``_Forms.make``:
``Tensor.erfc`` through a ``_Method`` placeholder on the class, ``retrograd.erfc`` through the
functions module's ``__getattr__``), then stored where it was looked up, so later lookups are
plain hits. The operators and ``hot`` methods are the ops' own call paths (``op.unary``), set
in the placeholder's place on first lookup too, so that import makes no node class. Only the eagerly imported topics are read (``nn`` and ``linalg`` load on first use).

>>> import inspect
>>> import retrograd as rg
>>> from retrograd.ops import elementwise
>>> elementwise.exp2.variants
('function', 'method', 'inplace')
>>> rg.exp2(rg.tensor([3.0])).tolist(), rg.tensor([3.0]).exp2_().tolist()
([8.0], [8.0])
>>> inspect.signature(rg.Tensor.add)
<Signature (self, other, *, alpha=1)>
"""

from __future__ import annotations

import ast
import builtins
from _thread import RLock
from collections.abc import Callable, Iterable
from typing import Any

from ..autograd.anomaly_mode import GENERATED_FILE_PREFIX
from .op import Op, _compile, apply

FUNCTION, METHOD, INPLACE = "function", "method", "inplace"
OPERATOR = "operator"  # (not a declared variant: an entry's ``operators``, served with its methods)
_BUILTINS = frozenset(dir(builtins))
# The topics whose entries are public at ``import retrograd`` (ops/__init__ imports them).
TOPICS = ("elementwise", "reduce", "shape", "indexing")


def declared(modules: Iterable[Any] | None = None) -> list[Op]:
    """The entries of ``modules`` (default: the eagerly imported topics) that declare public
    forms, checked: one entry per public name, or a Tensor/Scalar overload pair.

    >>> from retrograd.ops import variants
    >>> "erf" in [op.name for op in variants.declared()]
    True
    """
    if modules is None:
        import importlib

        modules = [importlib.import_module(f"{__package__}.{topic}") for topic in TOPICS]
    entries: list[Op] = []
    seen: set[int] = set()  # (by identity: a list's ``in`` compared each entry with all before it)
    for module in modules:
        for value in vars(module).values():
            if isinstance(value, Op) and id(value) not in seen and (value.declaration.variants
                                                                     or value.declaration.operators):
                seen.add(id(value))
                entries.append(value)
    for form in (FUNCTION, METHOD, INPLACE):
        _public_forms(entries, form)  # (raises for a clash)
    return entries


# -- which entries serve which public name -----------------------------------------------------
def arguments(op: Op) -> list[str]:
    """The arguments after the tensor, in the public form's order (the declared signature's)."""
    signature = op.declaration.signature
    if signature is None:  # (the declaration's names, as the plan's: read at import, before any plan)
        return [*op.declaration.inputs[1:], *op.declaration.params]
    names = _SIGNATURE_NAMES.get(signature)
    if names is None:  # (parsed once per signature text)
        from .declaration import signature_names

        names = _SIGNATURE_NAMES[signature] = signature_names(signature)
    return list(names)


_SIGNATURE_NAMES: dict[str, list[str]] = {}


def _signature(op: Op) -> str:
    signature = op.declaration.signature
    return signature if signature is not None else ", ".join(arguments(op))


def _overload(a: Op, b: Op, name: str) -> tuple[Op, Op, tuple[str, ...]]:
    """(tensor entry, scalar entry, the arguments that tell them apart) for two entries under one
    public name: the same signature, those arguments tensor inputs of one and params of the other
    (the form takes the tensor entry when any of them is a Tensor, as ``clamp`` does)."""
    if arguments(a) == arguments(b) and _signature(a) == _signature(b) and _conversions(a) == _conversions(b):
        a_inputs, b_inputs = a.declaration.inputs, b.declaration.inputs
        differ = tuple(n for n in arguments(a) if (n in a_inputs) != (n in b_inputs))
        if differ and all(n in a_inputs for n in differ):
            return a, b, differ
        if differ and all(n in b_inputs for n in differ):
            return b, a, differ
    raise ValueError(f"{name}: two entries declare variants under one public name, and they are not a "
                     "Tensor/Scalar overload pair (the same signature, one argument a tensor input of one "
                     "and a param of the other)")


def _public_forms(entries: list[Op], form: str) -> list[tuple[str, tuple[Op, ...]]]:
    """``(public name, entries)`` for one form; two entries are an overload pair (tensor first).
    (Worked out once per list of entries: ``declared`` and both binding points ask.)"""
    key = (form, tuple(entries))
    forms = _PUBLIC_FORMS.get(key)
    if forms is None:
        forms = _PUBLIC_FORMS[key] = _find_public_forms(entries, form)
    return forms


_PUBLIC_FORMS: dict[tuple[str, tuple[Op, ...]], list[tuple[str, tuple[Op, ...]]]] = {}


def _find_public_forms(entries: list[Op], form: str) -> list[tuple[str, tuple[Op, ...]]]:
    by_name: dict[str, list[Op]] = {}
    for op in entries:
        if form in op.declaration.variants:  # (the declaration's: the plan is made on first use)
            # An alias names the function and method forms; one ending in ``_`` the in-place form.
            if form == INPLACE:
                names = [op.name + "_", *(a for a in op.declaration.aliases if a.endswith("_"))]
            else:
                names = [op.name, *(a for a in op.declaration.aliases if not a.endswith("_"))]
            for name in names:
                by_name.setdefault(name, []).append(op)
    if form == INPLACE:  # (an in-place form may be its own entry: PyTorch's AsinhBackward1)
        methods = {name for name, _ in _public_forms(entries, METHOD)}
        for name in by_name:
            if name[:-1] not in methods:
                raise ValueError(f"{name}: an 'inplace' variant needs the 'method' variant")
    forms = []
    for name, ops in by_name.items():
        if len(ops) > 2:
            raise ValueError(f"{name}: two entries declare variants under one public name")
        forms.append((name, tuple(ops) if len(ops) == 1 else _overload(ops[0], ops[1], name)[:2]))
    return forms


# -- the source of the forms -------------------------------------------------------------------
def _global(op: Op) -> str:
    """The generated source's name for an entry, its op and node names (``fmod_FmodBackward1``):
    an overload pair's two entries differ in the node; an in-place form's own entry is marked
    (``masked_scatter__MaskedScatterBackward0``), as its node may be the method's."""
    inplace_only = op.declaration.variants == (INPLACE,)
    return f"{op.name}{'_' if inplace_only else ''}_{op.node_name}"


# What each conversion (``convert=``, ops/declaration.py) writes, for an argument and the tensor.
CONVERSIONS = {
    "scalar": "coerce({0})",
    "dim": "normalize_dim({0}, {tensor}._data.ndim)",
    "dims": "normalize_dims({0}, {tensor}._data.ndim)",
    "int": "int({0})",
    "float": "float({0})",
    "tensor": "require_tensor({name!r}, {0}, {position}, {0!r})",
    "integer": "require_int({name!r}, {0}, {position}, {0!r})",
    "index": "index_array({0})",
    "versioned_index": "versioned_index({0})",
    "mask": "require_tensor({name!r}, {0}, {position}, {0!r})._data",
    "versioned_mask": "versioned_index(require_tensor({name!r}, {0}, {position}, {0!r}))",
    "str": "require_type({name!r}, {0}, {0!r}, str)",
    "bool": "require_type({name!r}, {0}, {0!r}, bool)",
}


def require_type(name: str, value: Any, argument: str, kind: type) -> Any:
    """PyTorch's TypeError for an argument of the wrong Python type (a str or bool argument), as
    worded for an argument given by keyword (a form cannot tell how it was given; PyTorch adds
    the position for a positional one).

    >>> require_type("put", 0.5, "accumulate", bool)
    Traceback (most recent call last):
    TypeError: put(): argument 'accumulate' must be bool, not float
    """
    if isinstance(value, kind):
        return value
    raise TypeError(f"{name}(): argument '{argument}' must be {kind.__name__}, not {type(value).__name__}")


def _conversions(op: Op) -> dict[str, str]:
    return dict(op.declaration.convert or {})


def _convert(op: Op, argument: str, name: str, tensor: str) -> str:
    """The expression of one declared conversion (PyTorch counts a function's input as position 1)."""
    position = arguments(op).index(argument) + (2 if tensor == "input" else 1)
    return CONVERSIONS[_conversions(op)[argument]].format(argument, tensor=tensor, name=name, position=position)


def _call(op: Op, ref: str, name: str, tensor: str, form: str, converted: tuple[str, ...] = ()) -> str:
    """The one call a form makes for ``op``: the op's own call path where it has one (the same
    call a hand-written method made), else ``apply`` / ``apply_inplace``; each argument converted
    as declared (but those ``converted`` already)."""
    convert = _conversions(op)
    args = ", ".join([tensor, *(_convert(op, n, name, tensor) if n in convert and n not in converted else n
                                for n in (*op.inputs[1:], *op.params))])
    if form == INPLACE:
        return f"apply_inplace({ref}, ({args},))"
    if op.unary_fast:
        return f"{ref}.unary({args})"
    if op.binary_fast:
        return f"{ref}.binary({args})"
    return f"apply({ref}, ({args},))"


def _form_source(name: str, pair: tuple[Op, ...], form: str) -> str:
    op = pair[0]
    first = "input" if form == FUNCTION else "self"
    signature = _signature(op)
    where = ", ".join(f"{p.name!r} ({p.node_name})" for p in pair)
    # PyTorch's names may be Python's builtins (``abs``, ``input``, ``min``): said so for ruff.
    codes = [code for code, hit in (("A001", name in _BUILTINS), ("A002", {first, *arguments(op)} & _BUILTINS)) if hit]
    shadows = f"  # noqa: {', '.join(codes)}" if codes else ""
    lines = [f"def {name}({first}{', ' if signature else ''}{signature}):{shadows}  # {form} of {where}"]
    if form == FUNCTION:  # (a number first becomes a tensor)
        lines.append(f"    input = to_tensor(input, {name!r})  # noqa: A001")
    if len(pair) == 1:
        lines.append(f"    return {_call(op, _global(op), name, first, form)}")
    else:
        by = _overload(pair[0], pair[1], name)[2]
        for n in by:
            if n in _conversions(op):  # converted once, then the overloads are told apart
                noqa = "  # noqa: A001" if n in _BUILTINS else ""
                lines.append(f"    {n} = {_convert(op, n, name, first)}{noqa}")
        calls = [_call(o, _global(o), name, first, form, converted=by) for o in pair]
        test = " or ".join(f"isinstance({n}, Tensor)" for n in by)
        lines += [f"    if {test}:", f"        return {calls[0]}", f"    return {calls[1]}"]
    return "\n".join(lines) + "\n"


def forms_source(entries: Iterable[Op], forms: tuple[str, ...]) -> tuple[str, dict[str, tuple[Op, ...]]]:
    """The Python source of every public form of ``entries`` in ``forms`` (hot methods and
    operators, which are the call paths themselves, are not written), and the entries each
    function name serves. The source reads its globals: the entries by ``_global`` name,
    ``apply``, ``apply_inplace``, ``Tensor``, ``coerce`` and ``to_tensor``.

    >>> from retrograd.ops import elementwise, variants
    >>> print(variants.forms_source([elementwise.exp2], ("method",))[0].strip())
    def exp2(self):  # method of 'exp2' (Exp2Backward0)
        return exp2_Exp2Backward0.unary(self)
    """
    entries = list(entries)
    chunks = []
    served: dict[str, tuple[Op, ...]] = {}
    for form in forms:
        for name, pair in _public_forms(entries, form):
            if form == METHOD and pair[0].declaration.hot:
                continue
            # (an alias is the same function under another name, as ``arcsin = asin`` was)
            if name != pair[0].name + ("_" if form == INPLACE else ""):
                continue
            chunks.append(_form_source(name, pair, form))
            served[name] = pair
    return "\n\n".join(chunks), served


class _Forms:
    """The forms of one binding point (``Tensor``'s methods, or ``retrograd``'s functions), each
    written, compiled and registered with ``linecache`` on its first use (``make``): making all
    of them at import, with the plans of their ops, cost ``import retrograd`` milliseconds.
    What exists, and any clash, is known at import; only the code waits."""

    def __init__(self, entries: list[Op], forms: tuple[str, ...], label: str, qualprefix: str,
                 namespace: dict[str, Any]) -> None:
        self.label, self.qualprefix, self.namespace = label, qualprefix, namespace
        # public name -> (form, the name the source defines, the entries it serves); an alias
        # shares its form's function (``arcsin`` is ``asin``), made once for all its names.
        self.forms: dict[str, tuple[str, str, tuple[Op, ...]]] = {}
        self.names: dict[tuple[str, str], list[str]] = {}
        for form in forms:
            for name, pair in _public_forms(entries, form):
                defined = pair[0].name + ("_" if form == INPLACE else "")
                self.forms[name] = (form, defined, pair)
                self.names.setdefault((form, defined), []).append(name)
        self.made: dict[str, Callable[..., Any]] = {}

    def add_operators(self, entries: list[Op]) -> None:
        """Serve the entries' ``operators`` (``__add__``) too, each made on its first lookup
        (``make``) like the methods: making them at import made the node classes and call paths
        of a score of ops, half of what ``import retrograd`` spent in the op table."""
        for op in entries:
            for name in op.declaration.operators:  # (a later entry's operator wins, as it did)
                if name in self.forms:
                    self.names[self.forms[name][:2]].remove(name)
                # One function for all of an op's operators (``__add__ is __radd__``).
                self.forms[name] = (OPERATOR, op.name, (op,))
                self.names.setdefault((OPERATOR, op.name), []).append(name)

    def eager(self, name: str) -> bool:
        """Whether the form is a call path itself (a ``hot`` method), no generated wrapper."""
        form, _, pair = self.forms[name]
        return form == METHOD and pair[0].declaration.hot

    def make(self, name: str) -> Callable[..., Any]:
        """The function of public name ``name``, made on the first call (for all its names)."""
        made = self.made.get(name)
        if made is not None:
            return made
        with _MAKING:  # (two threads make one function, so ``Tensor.add is Tensor.add``)
            made = self.made.get(name)
            if made is not None:
                return made
            form, defined, pair = self.forms[name]
            if self.eager(name):
                function = pair[0].unary  # the call path itself, one frame shorter
            elif form == OPERATOR:  # the op's own call path (a binary one passes the params' defaults)
                op = pair[0]
                function = op.unary if op.n_inputs == 1 else op.operator(self.namespace["coerce"], *_defaults(op))
            else:
                if "apply" not in self.namespace:
                    _helpers(self.namespace)
                for op in pair:
                    if self.namespace.setdefault(_global(op), op) is not op:
                        raise ValueError(f"{_global(op)}: two entries with one op name and node name")
                filename = (f"{GENERATED_FILE_PREFIX}{self.label}: {self.qualprefix}{defined} "
                            "(ops/variants.py, forms_source)>")
                function = _compile(_form_source(defined, pair, form), filename, self.namespace, defined)
                function.__qualname__ = self.qualprefix + defined
            for alias in self.names[(form, defined)]:
                self.made[alias] = function
            return function


_MAKING = RLock()


def _helpers(namespace: dict[str, Any]) -> None:
    """The names the forms' source reads besides the entries (see ``forms_source``)."""
    from ..tensor import Tensor
    from .elementwise import require_int, require_tensor
    from .inplace import apply_inplace  # ops.inplace imports the Tensor this binds to
    from .reduce import normalize_dim, normalize_dims
    from .shape import _index_array, versioned_index

    namespace.update({"apply": apply, "apply_inplace": apply_inplace, "Tensor": Tensor,
                      "normalize_dim": normalize_dim, "normalize_dims": normalize_dims,
                      "require_tensor": require_tensor, "require_int": require_int, "index_array": _index_array,
                      "versioned_index": versioned_index, "require_type": require_type})


class _Method:
    """What ``Tensor.<name>`` is until its first lookup: then the method is made
    (``_Forms.make``) and set on the class in its place, so every later call is a plain
    attribute hit, as for a ``def``. ``hasattr``, ``dir`` and ``inspect.signature`` see it as
    the method it becomes."""

    __slots__ = ("cls", "forms", "name")

    def __init__(self, cls: type, forms: _Forms, name: str) -> None:
        self.cls, self.forms, self.name = cls, forms, name

    def __get__(self, instance: Any, owner: type | None = None) -> Any:
        function = self.forms.make(self.name)
        with _MAKING:
            if vars(self.cls).get(self.name) is self:  # (a subclass may look it up first)
                setattr(self.cls, self.name, function)
        return function if instance is None else function.__get__(instance, owner)


def bind_all() -> int:
    """Make every public form still waiting for its first lookup; returns how many were made.
    Nothing needs it (a form is made when it is looked up): it is there for what reads every
    generated source at once (``tests/ops/test_generated_source.py``).

    >>> import retrograd as rg
    >>> from retrograd.ops import variants
    >>> variants.bind_all() >= 0 and type(vars(rg.Tensor)["erfc"]).__name__
    'function'
    """
    count = 0
    for look_up, forms in list(_BINDINGS):
        for name in forms.forms:
            count += name not in forms.made
            look_up(name)
    return count


# (``look_up(name)`` as users do it, the forms): what ``bind_all`` walks, one per binding point.
_BINDINGS: list[tuple[Callable[[str], Any], _Forms]] = []


def bind_methods(cls: type, entries: Iterable[Op], coerce: Callable[[Any], Any] | None = None) -> None:
    """Set ``cls.<name>`` / ``cls.<name>_`` (aliases too) for the entries' ``method`` and
    ``inplace`` variants, and their ``operators``; a name the class already defines is an error
    (one definition per op). ``coerce`` does the ``"scalar"`` conversion (and an operator's other
    operand): a number or tensor passes, anything else becomes ``NotImplemented``. Every method
    and operator is made on its first lookup (``_Method``); the operators and ``hot`` methods are
    then the ops' own call paths, as fast as if they had been set at import.

    >>> import retrograd as rg
    >>> rg.Tensor.erfc.__qualname__
    'Tensor.erfc'
    """
    entries = list(entries)
    forms = _Forms(entries, (METHOD, INPLACE), f"{cls.__name__} methods from the op table", f"{cls.__name__}.",
                   {"coerce": coerce, "__name__": cls.__module__})
    forms.add_operators(entries)
    methods: dict[str, Any] = {name: _Method(cls, forms, name) for name in forms.forms}
    for name in methods:  # (checked before any is set: nothing half-bound)
        if name in vars(cls):
            raise ValueError(f"{cls.__name__}.{name} is defined by hand and by an entry's variants")
    for name, method in methods.items():
        setattr(cls, name, method)
    _BINDINGS.append((lambda name: getattr(cls, name), forms))


def bind_functions(namespace: dict[str, Any], entries: Iterable[Op], to_tensor: Callable[[Any, str], Any],
                   coerce: Callable[[Any], Any]) -> list[str]:
    """Make ``namespace`` (``retrograd._functions``) serve the entries' ``function`` variants
    (aliases too), each made on its first lookup: the module's ``__getattr__``, set here, makes
    it and stores it in ``namespace``, so later lookups are plain hits. The first argument may be
    a number (``to_tensor(value, name)`` makes it a tensor, and refuses other non-tensors as PyTorch
    does). Returns the names served.

    >>> import inspect, retrograd as rg
    >>> inspect.signature(rg.add)
    <Signature (input, other, *, alpha=1)>
    """
    entries = list(entries)
    forms = _Forms(entries, (FUNCTION,), "retrograd functions from the op table", "",
                   {"coerce": coerce, "to_tensor": to_tensor, "__name__": namespace["__name__"]})
    for name in forms.forms:
        if name in namespace:
            raise ValueError(f"{name} is defined by hand and by an entry's variants")
    module = namespace["__name__"]

    def __getattr__(name: str) -> Any:  # noqa: N807 - a module's ``__getattr__`` (PEP 562)
        if name not in forms.forms:
            raise AttributeError(f"module {module!r} has no attribute {name!r}")
        function = forms.make(name)
        if function.__doc__ is None:
            function.__doc__ = (f"``retrograd.{function.__name__}(input, {_signature(forms.forms[name][2][0])})``: "
                                f"the op table's ``{function.__name__}``.\n\n"
                                f"    >>> import retrograd as rg\n    >>> callable(rg.{name})\n    True\n")
        namespace[name] = function
        return function

    def __dir__() -> list[str]:  # noqa: N807 - a module's ``__dir__`` (PEP 562)
        return sorted({*namespace, *forms.forms})

    for hook in ("__getattr__", "__dir__"):
        if hook in namespace:
            raise ValueError(f"{module} has a {hook} of its own")
    namespace.update(__getattr__=__getattr__, __dir__=__dir__)
    _BINDINGS.append((__getattr__, forms))
    return list(forms.forms)


def _defaults(op: Op) -> tuple[Any, ...]:
    """The params' default values from the declared signature (an operator passes them)."""
    signature = op.declaration.signature
    if signature is None:
        return ()
    args = ast.parse(f"def f(self, {signature}): pass").body[0].args  # type: ignore[attr-defined]
    values: dict[str, Any] = {}
    positional = [*args.posonlyargs, *args.args]
    for arg, default in zip(positional[len(positional) - len(args.defaults):], args.defaults):
        values[arg.arg] = ast.literal_eval(default)
    for arg, default in zip(args.kwonlyargs, args.kw_defaults):
        if default is not None:
            values[arg.arg] = ast.literal_eval(default)
    return tuple(values[p] for p in op.params)
