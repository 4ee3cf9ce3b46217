"""Graph breaks in the middle of a function: compile the parts before and after the break.

Dynamo resumes a frame after a break by rewriting bytecode; retrograd does the same at the level
of the function's top-level statements, from its source. The first trace keeps the line of every
break (``Tracer.break_lines``); the function's body is cut into runs of statements that do not
break (each becomes its own generated function, compiled with ``CompiledFunction``) and runs of
statements that do (each becomes a plain function, run eagerly at every call). A call binds the
arguments, then runs the parts in order, handing each the local variables it reads and taking back
the ones later parts read. A compiled part's outputs carry its ``CompiledFunctionBackward`` node,
whose edges lead into the eager part's autograd graph (and on into the part before), so the
backward through all of them is the engine's ordinary backward.

A function is split only when that is safe to do from its source: a ``def`` (not a lambda, a
generator or a coroutine) whose source is available, with no ``return`` before its last statement,
no ``yield``, ``global``, ``nonlocal``, ``del``, ``:=`` or ``match``, no ``super()``/``locals()``
(they depend on the frame), and every break on a line of its body. Otherwise the whole call falls
back to eager, as before.
"""

from __future__ import annotations

import ast
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
           ast.ClassDef, ast.Assert, ast.Pass, ast.Return, ast.With)


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
        for part in self.parts:
            result = part.call(*[env[n] for n in part.ins])
            if part.returns:
                return result
            env.update(zip(part.outs, result))
        return None

    @property
    def code(self) -> str:
        """The compiled parts' generated source, each under a header naming its lines."""
        texts = []
        for part in self.parts:
            first, last = part.source_lines
            if part.compiled:
                body = part.call.code or "(not compiled yet, or broke)\n"
                texts.append(f"# lines {first}-{last}: compiled\n{body}")
            else:
                texts.append(f"# lines {first}-{last}: eager (graph break)\n")
        return "\n".join(texts)


def target_function(fn: Any, module: Any) -> Any:
    """The plain Python function whose lines a trace can locate breaks in, or None."""
    func = type(module).forward if module is not None and fn is module else fn
    if not inspect.isfunction(func) or func.__name__ == "<lambda>" or hasattr(func, "__wrapped__"):
        return None
    if func.__code__.co_flags & (inspect.CO_GENERATOR | inspect.CO_COROUTINE | inspect.CO_ASYNC_GENERATOR):
        return None
    return func


def split(fn: Any, module: Any, break_lines: list[int | None],
          compile_part: Callable[[Callable[..., Any]], Any]) -> Segmented | None:
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
    scans = [_scan(s) for s in body]
    if any(s is None for s in scans) or any(isinstance(s, ast.Return) for s in body[:-1]):
        return None
    names = [s for s in scans if s is not None]
    if any(loads & _FRAME_NAMES for loads, _ in names):
        return None
    breaking = [any(s.lineno <= line <= (s.end_lineno or s.lineno) for line in break_lines if line is not None)
                for s in body]
    if not any(breaking):
        return None
    groups: list[list[int]] = []
    for i in range(len(body)):
        if groups and breaking[groups[-1][0]] == breaking[i]:
            groups[-1].append(i)
        else:
            groups.append([i])
    code = func.__code__
    free_names = list(code.co_freevars)
    free = list(zip(free_names, func.__closure__ or ()))
    try:
        [cell.cell_contents for _, cell in free]
    except ValueError:  # an empty cell: the function would fail on it anyway
        return None
    defined = set(inspect.signature(func).parameters) | set(free_names)
    later: list[set[str]] = [set() for _ in range(len(groups) + 1)]
    for k in range(len(groups) - 1, -1, -1):
        later[k] = later[k + 1] | set().union(*(names[i][0] for i in groups[k]))
    parts: list[Part] = []
    filename = code.co_filename
    for k, group in enumerate(groups):
        stmts = [body[i] for i in group]
        loads = set().union(*(names[i][0] for i in group))
        stores = set().union(*(names[i][1] for i in group))
        sure = set().union(*(names[i][1] for i in group if isinstance(body[i], _SIMPLE)))
        returns = isinstance(stmts[-1], ast.Return)
        outs = [] if returns else sorted(stores & later[k + 1])
        ins = set(loads & defined)
        for name in outs:
            if name not in sure:  # bound only on some paths: the part starts from the old value
                if name not in defined:
                    return None
                ins.add(name)
        defined |= stores
        part_fn = _make_function(func, f"{func.__name__}__part{k}", sorted(ins), stmts, outs, returns, filename)
        compiled = not breaking[group[0]]
        parts.append(Part(compile_part(part_fn) if compiled else part_fn, sorted(ins), outs, returns, compiled,
                          (stmts[0].lineno, stmts[-1].end_lineno or stmts[-1].lineno)))
    return Segmented(func, module if module is not None and fn is module else None, parts, free)


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
