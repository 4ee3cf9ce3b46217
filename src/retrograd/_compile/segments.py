"""Graph breaks in the middle of a function: compile the parts before and after the break.

Dynamo resumes a frame after a break by rewriting bytecode; retrograd does the same at the level
of the function's statements, from its source. The first trace keeps the line of every break
(``Tracer.break_lines``); the function's body is cut into runs of statements that do not break
(each becomes its own generated function, compiled with ``CompiledFunction``) and runs of
statements that do (each becomes a plain function, run eagerly at every call). An ``if`` statement
holding a break is cut further: its test is an eager part, and each branch is cut as a body is, so
the branches of Python control flow on a tensor value are compiled. A compiled part that breaks on
its own first trace (a branch the first trace did not take) is cut the same way at its own breaks.
A call binds the arguments, then runs the parts in order, handing each the local variables it
reads and taking back the ones later parts read. A compiled part's outputs carry its
``CompiledFunctionBackward`` node, whose edges lead into the eager part's autograd graph (and on
into the part before), so the backward through all of them is the engine's ordinary backward.

A function is split only when that is safe to do from its source: a ``def`` (not a lambda, a
generator, a coroutine or a ``functools.wraps`` wrapper) whose source is available and is its own,
with no ``return`` before its last statement, no ``yield``, ``global``, ``nonlocal``, ``del``,
``:=`` or ``match``, no ``super()``/``locals()`` (they depend on the frame), and every break on a
line of its body. Otherwise the whole call falls back to eager, as before.
"""

from __future__ import annotations

import ast
import functools
import inspect
import textwrap
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

_SCOPES = (ast.Lambda, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.ListComp, ast.SetComp,
           ast.DictComp, ast.GeneratorExp)
_REFUSED = (ast.Yield, ast.YieldFrom, ast.Await, ast.Global, ast.Nonlocal, ast.NamedExpr, ast.Match, ast.Delete)
_FRAME_NAMES = frozenset(("super", "locals", "vars", "exec", "eval", "dir", "__class__"))
_SIMPLE = (ast.Assign, ast.AnnAssign, ast.AugAssign, ast.Expr, ast.Import, ast.ImportFrom, ast.FunctionDef,
           ast.ClassDef, ast.Assert, ast.Pass, ast.Return)


def _scan(stmt: ast.stmt) -> tuple[set[str], set[str]] | None:
    """(names read, names bound) by one top-level statement in the function's own scope; None
    when the statement cannot be moved into a function of its own."""
    loads: set[str] = set()
    stores: set[str] = set()
    stack: list[ast.AST] = [stmt]
    while stack:  # (a loop, not recursion: the depth is the source's nesting, but cheap either way)
        node = stack.pop()
        if isinstance(node, _SCOPES):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                stores.add(node.name)
            # Every name read inside a nested scope may be one of ours it closes over.
            loads.update(n.id for n in ast.walk(node) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load))
            continue
        if isinstance(node, _REFUSED) or (isinstance(node, ast.Return) and node is not stmt):
            return None
        if isinstance(node, ast.Name):
            (loads if isinstance(node.ctx, ast.Load) else stores).add(node.id)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            stores.update((a.asname or a.name).split(".")[0] for a in node.names)
        stack.extend(ast.iter_child_nodes(node))
    return loads, stores


@dataclass
class Part:
    """One run of statements: ``call(*(env[n] for n in ins))`` gives ``outs`` (or the return value)."""

    call: Any  # a CompiledFunction, or the part's plain function
    ins: list[str]
    outs: list[str]
    returns: bool
    compiled: bool  # a ``CompiledFunction`` (else it runs eagerly: it holds a break)
    source_lines: tuple[int, int]
    # An ``if`` statement holding a break: ``call`` evaluates its test (eagerly), then the parts
    # of the branch it selects run (each branch cut into parts as the function's body is).
    branches: tuple[list[Part], list[Part]] | None = None


class Segmented:
    """A guard variant whose function broke: its parts, run in order (see the module docstring)."""

    def __init__(self, fn: Callable[..., Any], module: Any, parts: list[Part],
                 free: list[tuple[str, Any]]) -> None:
        self.fn = fn
        self.module = module
        self.parts = parts
        self.free = free
        self.signature = inspect.signature(fn)

    def run(self, call_original: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        module = self.module
        if module is not None and (module._forward_hooks or module._forward_pre_hooks):
            return call_original(*args, **kwargs)  # calling forward directly would skip them
        try:
            bound = self.signature.bind(*args, **kwargs) if module is None else \
                self.signature.bind(module, *args, **kwargs)
        except TypeError:
            return call_original(*args, **kwargs)  # the function's own error
        bound.apply_defaults()
        env = {name: cell.cell_contents for name, cell in self.free}  # closures are read afresh
        env.update(bound.arguments)
        return _run(self.parts, env)

    def all_parts(self) -> list[Part]:
        """Every part, the branches' parts and the parts of parts cut further included, in source order."""
        found: list[Part] = []
        stack = list(reversed(self.parts))
        while stack:
            part = stack.pop()
            inner = part.call.last_segmented if part.compiled else None
            if inner is not None:
                stack.extend(reversed(inner.parts))
                continue
            found.append(part)
            if part.branches is not None:
                stack.extend(reversed(part.branches[0] + part.branches[1]))
        return found

    @property
    def code(self) -> str:
        """The compiled parts' generated source, each under a header naming its lines."""
        texts = []
        for part in self.all_parts():
            first, last = part.source_lines
            if part.branches is not None:
                texts.append(f"# line {first}: the test of an if statement, eager (graph break)\n")
            elif part.compiled:
                body = part.call.code or "(not compiled yet, or broke)\n"
                texts.append(f"# lines {first}-{last}: compiled\n{body}")
            else:
                texts.append(f"# lines {first}-{last}: eager (graph break)\n")
        return "\n".join(texts)


class _SubPlan(Segmented):
    """A part that broke on its own trace, cut further: takes the part's inputs, gives its outputs."""

    def __init__(self, parts: list[Part], ins: list[str], outs: list[str], returns: bool) -> None:
        self.parts = parts
        self.ins = ins
        self.outs = outs
        self.returns = returns

    def run(self, call_original: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        env = dict(zip(self.ins, args))
        result = _run(self.parts, env)
        return result if self.returns else tuple(env[n] for n in self.outs)


def target_function(fn: Any, module: Any) -> Any:
    """The plain Python function whose lines a trace can locate breaks in, or None."""
    func = type(module).forward if module is not None and fn is module else fn
    if not inspect.isfunction(func) or func.__name__ == "<lambda>" or hasattr(func, "__wrapped__"):
        return None
    if func.__code__.co_flags & (inspect.CO_GENERATOR | inspect.CO_COROUTINE | inspect.CO_ASYNC_GENERATOR):
        return None
    return func


def split(fn: Any, module: Any, break_lines: list[int | None],
          compile_part: Callable[..., Any]) -> Segmented | None:
    """Cut ``fn`` (or ``module``'s forward) at the statements holding ``break_lines``; None when it
    cannot be done safely (see the module docstring). ``compile_part`` wraps a part to compile."""
    func = target_function(fn, module)
    if func is None or not break_lines or any(line is None for line in break_lines):
        return None
    try:
        lines, start = inspect.getsourcelines(func)
        tree = ast.parse(textwrap.dedent("".join(lines)))
    except (OSError, TypeError, SyntaxError):
        return None
    fdef = tree.body[0] if tree.body else None
    if not isinstance(fdef, ast.FunctionDef) or fdef.name != func.__name__:
        return None
    ast.increment_lineno(tree, start - 1)
    if not _same_code(fdef, func):
        return None
    body = fdef.body
    if any(isinstance(s, ast.Return) for s in body[:-1]) or not any(_holds(s, break_lines) for s in body):
        return None
    code = func.__code__
    free_names = list(code.co_freevars)
    free = list(zip(free_names, func.__closure__ or ()))
    try:
        [cell.cell_contents for _, cell in free]
    except ValueError:  # an empty cell: the function would fail on it anyway
        return None
    defined = set(inspect.signature(func).parameters) | set(free_names)
    parts = _Planner(func, break_lines, compile_part, [0]).plan(body, defined, set())
    if parts is None:
        return None
    return Segmented(func, module if module is not None and fn is module else None, parts, free)


def _holds(stmt: ast.stmt, break_lines: list[int | None]) -> bool:
    last = stmt.end_lineno or stmt.lineno
    return any(line is not None and stmt.lineno <= line <= last for line in break_lines)


def _run(parts: list[Part], env: dict[str, Any]) -> Any:
    """Run ``parts`` on the local variables ``env`` (updated in place); the return value."""
    for part in parts:
        result = part.call(*[env[n] for n in part.ins])
        if part.branches is not None:
            _run(part.branches[0] if result else part.branches[1], env)  # (``if`` calls __bool__, as the original)
        elif part.returns:
            return result
        else:
            env.update(zip(part.outs, result))
    return None


class _Planner:
    """Cuts statement lists into parts (see the module docstring)."""

    def __init__(self, func: Any, break_lines: list[int | None], compile_part: Callable[..., Any],
                 count: list[int]) -> None:
        self.func = func
        self.break_lines = break_lines
        self.compile_part = compile_part
        self.count = count  # (shared with the planners that cut parts further: distinct names)

    def _function(self, ins: list[str], stmts: list[ast.stmt], outs: list[str], returns: bool) -> Any:
        self.count[0] += 1
        return _make_function(self.func, f"{self.func.__name__}__part{self.count[0]}", ins, stmts, outs, returns,
                              self.func.__code__.co_filename)

    def _replan(self, stmts: list[ast.stmt], ins: list[str], outs: list[str], returns: bool,
                break_lines: list[int | None]) -> Segmented | None:
        """A compiled part that broke on its first trace, cut at its own breaks; None: run it eagerly."""
        if not break_lines or any(line is None for line in break_lines) \
                or not any(_holds(s, break_lines) for s in stmts):
            return None
        planner = _Planner(self.func, break_lines, self.compile_part, self.count)
        parts = planner.plan(stmts, set(ins), set(outs))
        return None if parts is None else _SubPlan(parts, ins, outs, returns)

    def plan(self, body: list[ast.stmt], defined: set[str], after: set[str]) -> list[Part] | None:
        """Parts for ``body``, given the names bound before it and the names read after it."""
        scans = [_scan(s) for s in body]
        if any(s is None for s in scans):
            return None
        names = [s for s in scans if s is not None]
        if any(loads & _FRAME_NAMES for loads, _ in names):
            return None
        breaking = [_holds(s, self.break_lines) for s in body]
        groups: list[list[int]] = []
        for i, stmt in enumerate(body):
            alone = breaking[i] and isinstance(stmt, ast.If)  # (an if holding a break gets parts of its own)
            if groups and breaking[groups[-1][0]] == breaking[i] and not alone \
                    and not (breaking[i] and isinstance(body[groups[-1][0]], ast.If)):
                groups[-1].append(i)
            else:
                groups.append([i])
        later: list[set[str]] = [set() for _ in range(len(groups) + 1)]
        later[-1] = set(after)
        for k in range(len(groups) - 1, -1, -1):
            later[k] = later[k + 1] | set().union(*(names[i][0] for i in groups[k]))
        parts: list[Part] = []
        for k, group in enumerate(groups):
            stmts = [body[i] for i in group]
            loads = set().union(*(names[i][0] for i in group))
            stores = set().union(*(names[i][1] for i in group))
            sure = _sure(stmts)
            returns = isinstance(stmts[-1], ast.Return)
            outs = [] if returns else sorted(stores & later[k + 1])
            ins = set(loads & defined)
            for name in outs:
                if name not in sure:  # bound only on some paths: the part starts from the old value
                    if name not in defined:
                        return None
                    ins.add(name)
            lines = (stmts[0].lineno, stmts[-1].end_lineno or stmts[-1].lineno)
            part = None
            if breaking[group[0]] and isinstance(stmts[0], ast.If):
                part = self._plan_if(stmts[0], defined, later[k + 1], outs, lines)
            if part is None:
                fn = self._function(sorted(ins), stmts, outs, returns)
                compiled = not breaking[group[0]]
                call = fn
                if compiled:
                    call = self.compile_part(fn, functools.partial(self._replan, stmts, sorted(ins), outs, returns))
                part = Part(call, sorted(ins), outs, returns, compiled, lines)
            defined |= stores
            parts.append(part)
        return parts

    def _plan_if(self, stmt: ast.If, defined: set[str], after: set[str], outs: list[str],
                 lines: tuple[int, int]) -> Part | None:
        """The test of ``stmt`` as an eager part, its branches as parts; None to run it whole."""
        if any(name not in defined and not (name in _sure(stmt.body) and name in _sure(stmt.orelse))
               for name in outs):
            return None  # a name bound on one path only: keep the statement whole
        test = ast.copy_location(ast.Return(value=stmt.test), stmt)
        scanned = _scan(ast.copy_location(ast.Expr(value=stmt.test), stmt))
        if scanned is None:
            return None
        then = self.plan(stmt.body, set(defined), after)
        orelse = self.plan(stmt.orelse, set(defined), after) if stmt.orelse else []
        if then is None or orelse is None:
            return None
        ins = sorted(scanned[0] & defined)
        return Part(self._function(ins, [test], [], True), ins, [], False, False, lines, (then, orelse))


def _sure(stmts: list[ast.stmt]) -> set[str]:
    """Names every path through ``stmts`` binds: those of simple statements, those both branches
    of an ``if`` bind, those a ``with`` body binds (a loop may not run: none of its names)."""
    found: set[str] = set()
    for stmt in stmts:
        if isinstance(stmt, _SIMPLE):
            scanned = _scan(stmt)
            if scanned is not None:
                found |= scanned[1]
        elif isinstance(stmt, ast.If):
            found |= _sure(stmt.body) & _sure(stmt.orelse)
        elif isinstance(stmt, ast.With):
            found |= _sure(stmt.body)
    return found


def _same_code(fdef: ast.FunctionDef, func: Any) -> bool:
    """Whether the source found is the function's (not a wrapped one's, nor a file edited since)."""
    copy = ast.FunctionDef(name=fdef.name, args=fdef.args, body=fdef.body, decorator_list=[], returns=None,
                           type_comment=None)
    module = ast.fix_missing_locations(ast.Module(body=[ast.copy_location(copy, fdef)], type_ignores=[]))
    try:
        made = next(c for c in compile(module, "<check>", "exec").co_consts if inspect.iscode(c))
    except (SyntaxError, ValueError, StopIteration):
        return False
    code = func.__code__
    return bool(made.co_varnames == code.co_varnames and made.co_argcount == code.co_argcount
                and made.co_kwonlyargcount == code.co_kwonlyargcount and min([fdef.lineno] + [d.lineno for d in fdef.decorator_list]) == code.co_firstlineno)


def _make_function(func: Any, name: str, ins: list[str], stmts: list[ast.stmt], outs: list[str], returns: bool,
                   filename: str) -> Callable[..., Any]:
    """``def name(*ins): stmts; return (outs...)`` with the statements' own line numbers, in the
    function's globals."""
    body = list(stmts)
    if not returns:
        ret = ast.Return(value=ast.Tuple(elts=[ast.Name(id=n, ctx=ast.Load()) for n in outs], ctx=ast.Load()))
        body.append(ast.copy_location(ret, stmts[-1]))
    args = ast.arguments(posonlyargs=[], args=[ast.arg(arg=n) for n in ins], vararg=None, kwonlyargs=[],
                         kw_defaults=[], kwarg=None, defaults=[])
    fdef = ast.FunctionDef(name=name, args=args, body=body, decorator_list=[], returns=None, type_comment=None)
    ast.copy_location(fdef, stmts[0])
    module = ast.Module(body=[fdef], type_ignores=[])
    ast.fix_missing_locations(module)
    namespace: dict[str, Any] = {}
    exec(compile(module, filename, "exec"), func.__globals__, namespace)  # noqa: S102 - the function's own statements
    part = namespace[name]
    part.__qualname__ = f"{func.__qualname__}__part"
    return part  # type: ignore[no-any-return]
