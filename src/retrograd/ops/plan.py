"""The run plan of an op: what the dispatcher derives from a ``Declaration``, once.

An ``Op`` (``ops/op.py``) is its frozen ``Declaration`` (``ops/declaration.py``, the entry as
written) plus this ``Plan``, built from it at one point (``Plan(declaration)``): which inputs get
an edge, what each backward rule's arguments are (``(kind, index)`` pairs, below), which slots
each rule needs saved and the save plans of the one- and two-input call paths, and which calls
take the inline paths (``unary_fast``, ``binary_fast``). The plan never changes after it is
made. The call paths read its fields on the op itself (``op.unary_fast``): ``Op`` copies them
into its own attributes when it is made, so a read costs one attribute lookup, as it did when
they were computed there.

>>> import numpy as np
>>> from retrograd.ops.declaration import Declaration
>>> plan = Plan(Declaration("mul", np.multiply, inputs=("self", "other"), dtype="promote",
...                         grads=(lambda grad, other: grad * other, lambda grad, self: grad * self)))
>>> plan.binary_fast, plan.binary_saves[1]  # only x tracked: save ``other`` for x's rule
(True, (False, True, False))
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .declaration import Declaration
from .saved_attrs import check_saved_names

# How a rule parameter is resolved at backward time (codes precomputed per rule at registration;
# ``ARG_EXPRESSIONS`` in ops/op.py says what each reads from the node).
# VERSIONED is a param declared ``versioned=``: a tensor kept with its version, checked when read.
SAVED, PARAM, SHAPE, DTYPE, NEEDS, SHAPES, SAVED_ALL, VERSIONED = range(8)


class Plan:
    """The fields the dispatcher derives from a declaration (see the module docstring)."""

    def __init__(self, declaration: Declaration) -> None:
        name, forward, node, grads = declaration.name, declaration.forward, declaration.node, declaration.grads
        dtype, view, outputs = declaration.dtype, declaration.view, declaration.outputs
        differentiable_outputs, saved = declaration.differentiable_outputs, declaration.saved
        inputs, params = declaration.inputs, declaration.params
        self.name = name
        self.variants = declaration.variants  # public forms, bound by ops/variants.py
        self.forward = forward
        self.variadic = len(inputs) == 1 and inputs[0].startswith("*")
        self.inputs = (inputs[0][1:],) if self.variadic else tuple(inputs)
        self.params = tuple(params)
        # Positions of the params a node keeps with their version (``Declaration.versioned``);
        # None for the ops without, so a recording path tests one constant.
        self.versioned_params = tuple(self.params.index(n) for n in declaration.versioned) or None
        self.n_inputs = len(self.inputs)
        self.n_outputs = outputs  # -1: the forward returns a tuple of any length
        self.dtype_rule = dtype
        self.view = view
        self.differentiable_outputs = tuple(differentiable_outputs or (True,) * max(outputs, 1))
        self.differentiable = grads is not None
        # The JVP as declared (ops/forward.py reads it); None for a non-differentiable op.
        self.jvp = declaration.jvp
        self.joint_rule: Callable[..., Any] | None = None
        self.rules: tuple[Callable[..., Any] | None, ...] = (None,) * self.n_inputs
        self.rule_args: tuple[tuple[tuple[int, int], ...], ...] = ((),) * self.n_inputs
        self.joint_args: tuple[tuple[int, int], ...] = ()
        # Which saved slots (inputs, then outputs) each input's rule needs.
        self.saves_for: tuple[frozenset[int], ...] = (frozenset(),) * self.n_inputs
        if self.variadic and grads is not None and not callable(grads):
            raise ValueError(f"{name}: a variadic op takes one joint backward rule")
        if callable(grads):
            self.joint_rule = grads
            self.joint_args = self._arg_specs(grads)
            slots = frozenset(i for kind, i in self.joint_args if kind in (SAVED, SAVED_ALL))
            self.saves_for = (slots,) * self.n_inputs
        elif grads is not None:
            if len(grads) != self.n_inputs:
                raise ValueError(f"{name}: one backward rule per input expected")
            self.rules = tuple(grads)
            self.rule_args = tuple(self._arg_specs(r) if r is not None else () for r in grads)
            self.saves_for = tuple(
                frozenset(i for kind, i in specs if kind == SAVED) for specs in self.rule_args
            )
        # Inputs without a rule (an index, a mask, a target) get no edge, as in PyTorch.
        if self.joint_rule is not None or self.variadic:
            self.diff_inputs: tuple[int, ...] = tuple(range(self.n_inputs))
        else:
            self.diff_inputs = tuple(i for i, r in enumerate(self.rules) if r is not None)
        self.all_inputs_differentiable = len(self.diff_inputs) == self.n_inputs
        # (rule, arg specs) per edge, in edge order: what OpNode.apply walks.
        self.edge_rules = (
            tuple((self.rules[i], self.rule_args[i]) for i in self.diff_inputs) if self.joint_rule is None else ()
        )
        self.saves_self = any(0 in slots for slots in self.saves_for)
        # Whether some rule reads an input's shape or dtype (then it is kept for every input).
        all_specs = [s for specs in (*self.rule_args, self.joint_args) for s in specs]
        self.uses_meta = any(kind in (SHAPE, DTYPE, SHAPES) for kind, _ in all_specs)
        # For two-input ops: what to save, indexed by a_tracked + 2 * b_tracked.
        self.binary_saves: tuple[tuple[bool, bool, bool], ...] = ()
        if self.n_inputs == 2 and not self.variadic:
            plans = []
            for tracked in range(4):
                wanted: frozenset[int] = frozenset()
                if tracked & 1:
                    wanted |= self.saves_for[0]
                if tracked & 2:
                    wanted |= self.saves_for[1]
                plans.append((0 in wanted, 1 in wanted, 2 in wanted))
            self.binary_saves = tuple(plans)
        # For one-input ops: (save the input, save the result).
        self.unary_saves = (0 in self.saves_for[0], 1 in self.saves_for[0]) if self.n_inputs == 1 else (False, False)
        # Shapes of call that ``unary`` / ``binary`` (ops/op.py) run without the generic detours.
        plain = (outputs == 1 and not view and not self.variadic and self.differentiable
                 and self.all_inputs_differentiable)
        self.unary_fast = (outputs == 1 and not self.variadic and self.differentiable and self.n_inputs == 1
                           and self.all_inputs_differentiable and dtype in ("same", "float_unary"))
        self.binary_fast = plain and self.n_inputs == 2 and dtype in ("same", "promote", "float")
        self.n_args = self.n_inputs + len(self.params)  # what a call passes (variadic ops: any)
        self.inplace_ufunc: Any = declaration.inplace_ufunc  # does ``self op= other`` with out=self
        self.node_name = node or f"{name.capitalize()}Backward0"
        # PyTorch's saved-attribute names for the node (``_saved_self``...), when they are not
        # the rules' own parameter names (ops/saved_attrs.py).
        self.saved_names = saved
        if saved is not None:
            check_saved_names(self)
        self.__class__ = _SealedPlan  # from here on it never changes

    def fields(self) -> dict[str, Any]:
        """The plan's fields by name (what ``Op`` copies into its own attributes)."""
        return dict(vars(self))

    def _arg_specs(self, rule: Callable[..., Any]) -> tuple[tuple[int, int], ...]:
        code = getattr(rule, "__code__", None)
        if code is not None:  # much cheaper than inspect.signature, and there are hundreds of rules
            names = list(code.co_varnames[1:code.co_argcount])  # the first receives the gradient
        else:
            import inspect

            names = list(inspect.signature(rule).parameters)[1:]
        specs = []
        for arg in names:
            if self.variadic and arg == self.inputs[0]:
                specs.append((SAVED_ALL, 0))
            elif self.variadic and arg == self.inputs[0] + "_shapes":
                specs.append((SHAPES, 0))
            elif arg in self.inputs:
                specs.append((SAVED, self.inputs.index(arg)))
            elif arg == "result":
                specs.append((SAVED, self.n_inputs))
            elif arg.startswith("result") and arg[6:].isdigit():
                specs.append((SAVED, self.n_inputs + int(arg[6:])))
            elif arg.endswith("_shape") and arg[:-6] in self.inputs:
                specs.append((SHAPE, self._edge_index(arg[:-6])))
            elif arg.endswith("_dtype") and arg[:-6] in self.inputs:
                specs.append((DTYPE, self._edge_index(arg[:-6])))
            elif arg in self.params:
                index = self.params.index(arg)
                specs.append((VERSIONED if index in (self.versioned_params or ()) else PARAM, index))
            elif arg == "needs":
                specs.append((NEEDS, 0))
            else:
                raise ValueError(f"{self.name}: backward rule asks for unknown {arg!r}")
        return tuple(specs)

    def _edge_index(self, name: str) -> int:
        """Position of a differentiable input among the node's edges (metadata is kept per edge)."""
        index = self.inputs.index(name)
        rules = self.rules if self.joint_rule is None and not self.variadic else None
        if rules is not None and rules[index] is None:
            raise ValueError(f"{self.name}: the shape of non-differentiable input {name!r} is not kept")
        return index if rules is None else sum(1 for r in rules[:index] if r is not None)


class _SealedPlan(Plan):
    """A finished plan: derived from its declaration, it never changes. (Sealing by switching
    the class keeps the hundreds of assignments in ``Plan.__init__`` plain: an overridden
    ``__setattr__`` there cost import time.)"""

    __slots__ = ()

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError(f"the plan of op {self.name!r} is derived from its declaration and never changes")
