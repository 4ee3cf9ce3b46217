"""``retrograd.debug.watch`` (module ``gradient_health``): gradient health during backward.

``with watch(model_or_tensors) as w: loss.backward()`` records, for every node that runs (and
for each watched parameter or tensor): the gradient's norm, largest magnitude, NaN and inf
counts and fraction of zeros; it names the first node whose backward produced a NaN/inf (its
op, where the forward created it, the ranges of what it saved), recognises the masked-out
branch of ``where`` that sends NaN into a gradient, and flags vanishing and exploding layers.

It costs nothing while no watch is open: the engine reads the list of open watches once per
backward call, and a watch hooks the graph's nodes only for the passes it sees.

>>> import retrograd as rg
>>> from retrograd.debug import watch
>>> x = rg.tensor([-1.0, 4.0], requires_grad=True)
>>> y = rg.where(x > 0, rg.sqrt(x), 0.0).sum()
>>> with watch([x]) as w:
...     y.backward()
>>> w.first_nonfinite.name
'SqrtBackward0'
>>> w.first_nonfinite.where_trap
True
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..autograd import engine
from ..autograd.graph import AccumulateGrad, is_released, peek_saved
from ..tensor import Tensor

__all__ = ["watch", "Watch", "NonFinite"]

HOW_TO_RECORD_SITES = ("no creation site was recorded: run the forward under retrograd.debug.record_sites() or "
                       "retrograd.autograd.detect_anomaly(check_nan=False) to record where each node was made")

MATPLOTLIB_MISSING = "watch(...).plot needs matplotlib: pip install retrograd[debug] (or pip install matplotlib)"

# Ops whose derivative is infinite (or undefined) somewhere their forward is finite or masked
# away: the masked-out branch of ``where`` meets them. Their "double where" fix, by op.
_DOUBLE_WHERE = {
    "Sqrt": "where(x > 0, sqrt(where(x > 0, x, 1)), 0)",
    "Rsqrt": "where(x > 0, rsqrt(where(x > 0, x, 1)), 0)",
    "Log": "where(x > 0, log(where(x > 0, x, 1)), 0)",
    "Log2": "where(x > 0, log2(where(x > 0, x, 1)), 0)",
    "Log10": "where(x > 0, log10(where(x > 0, x, 1)), 0)",
    "Log1p": "where(x > -1, log1p(where(x > -1, x, 0)), 0)",
    "Reciprocal": "where(x != 0, 1 / where(x != 0, x, 1), 0)",
    "Div": "where(x != 0, y / where(x != 0, x, 1), 0)",
    "Pow": "where(x > 0, where(x > 0, x, 1) ** p, 0)",
}
_GENERIC_FIX = ("where(cond, f(where(cond, x, safe)), other), with `safe` a value where f and its derivative are "
                "finite")


def _short_op(name: str) -> str:
    return re.sub(r"Backward\d*$", "", name)


def _stats(arrays: Iterable[Any]) -> dict[str, Any]:
    """Norm, largest magnitude, NaN/inf counts and fraction of zeros over ``arrays`` together."""
    numel = nan = inf = zeros = 0
    norm = 0.0
    max_abs = 0.0
    for a in arrays:
        size = a.size
        numel += size
        if size == 0:
            continue
        mag = np.abs(a)  # (complex: the magnitude)
        zeros += size - int(np.count_nonzero(mag))
        flat = mag.reshape(-1).astype(np.float64, copy=False)
        largest = float(flat.max())  # NaN if any is
        if largest < 1e140:  # the common case: no NaN, inf or overflow, nothing more to count
            part = math.sqrt(float(np.dot(flat, flat)))
        else:
            nan_mask = np.isnan(flat)
            n_nan = int(np.count_nonzero(nan_mask))
            n_inf = int(np.count_nonzero(np.isinf(flat)))
            nan, inf = nan + n_nan, inf + n_inf
            finite = flat[~nan_mask] if n_nan else flat
            largest = float(finite.max()) if finite.size else 0.0
            if n_nan:
                part = math.nan
            elif n_inf:
                part = math.inf
            else:  # huge but finite: scaled, so that the squares do not overflow
                scaled = finite / largest
                part = largest * math.sqrt(float(np.dot(scaled, scaled)))
        norm = math.hypot(norm, part) if norm == norm and part == part else math.nan
        max_abs = max(max_abs, largest)
    return {"norm": norm, "max_abs": max_abs, "nan": nan, "inf": inf,
            "zero_fraction": zeros / numel if numel else 0.0, "numel": numel}


def _any_nonfinite(arrays: list[Any]) -> bool:
    return any(a.size and a.dtype.kind in "fcV" and not np.isfinite(a).all() for a in arrays)


_FINITE = {"nan": 0, "inf": 0}


def _site_text(frames: Any) -> str | None:
    """``file:line in func: code`` of the innermost user frame of a recorded creation stack."""
    if not frames:
        return None
    text = frames if isinstance(frames, str) else "".join(frames)
    found = re.findall(r'File "([^"]+)", line (\d+), in ([^\n]+)\n(?:[ \t]+([^\n]*)\n?)?', text)
    if not found:
        return text.strip().splitlines()[-1] if text.strip() else None
    filename, line, func, code = found[-1]
    site = f"{filename}:{line} in {func}"
    return f"{site}: {code.strip()}" if code.strip() else site


def creation_site(node: Any) -> str | None:
    """Where the forward created ``node`` (``file:line in func: code``), when anomaly mode or
    ``record_sites()`` recorded it; else None."""
    metadata = getattr(node, "_metadata", None)
    return _site_text(metadata.get("traceback_")) if metadata else None


def _value_range(value: Any) -> dict[str, Any] | None:
    """min/max (NaN left out) and NaN/inf counts of a saved tensor; a saved number as itself."""
    if isinstance(value, bool) or not isinstance(value, (Tensor, int, float)):
        return None
    if not isinstance(value, Tensor):
        return {"shape": (), "min": float(value), "max": float(value), "nan": int(value != value), "inf": 0}
    data = value._data
    if data.dtype.kind not in "fiuV" or data.size == 0:
        return None
    nan_mask = np.isnan(data) if data.dtype.kind in "fV" else np.zeros(data.shape, bool)
    rest = data[~nan_mask]
    return {"shape": tuple(data.shape), "min": float(rest.min()) if rest.size else math.nan,
            "max": float(rest.max()) if rest.size else math.nan, "nan": int(np.count_nonzero(nan_mask)),
            "inf": int(np.count_nonzero(np.isinf(data))) if data.dtype.kind in "fV" else 0}


def saved_ranges(node: Any) -> dict[str, dict[str, Any]]:
    """The ranges of what ``node`` saved for backward, by name (``self``, ``other``, ``result``...)."""
    from ..viz import saved_attributes

    if is_released(node):
        return {}
    try:
        attrs = saved_attributes(node)
    except Exception:  # noqa: BLE001 - an exotic node: fall back on its raw saved slots
        attrs = {}
    if not attrs and isinstance(getattr(node, "_saved", None), tuple):
        attrs = {f"saved[{i}]": peek_saved(v) for i, v in enumerate(node._saved) if v is not None}
    ranges = {}
    for name, value in attrs.items():
        described = _value_range(value)
        if described is not None:
            ranges[name] = described
    return ranges


def _fmt(x: float) -> str:
    if x != x:
        return "nan"
    if x in (math.inf, -math.inf):
        return "inf" if x > 0 else "-inf"
    if x == 0:
        return "0"
    return f"{x:.3g}" if 1e-3 <= abs(x) < 1e4 else f"{x:.2e}"


@dataclass
class NonFinite:
    """The first node whose backward produced a NaN or inf gradient (``Watch.first_nonfinite``).

    ``str()`` explains it: the op, where the forward made it, what it saved, and (for the
    masked-out branch of ``where``) how to fix it.
    """

    name: str  # the node's name, e.g. "SqrtBackward0"
    op: str  # the op, e.g. "Sqrt"
    step: int  # its position in the backward's execution order (0: the first node run)
    site: str | None  # where the forward created it, when recorded
    nan: int  # NaNs in the gradients it produced
    inf: int
    incoming_finite: bool  # the gradient it received was finite: this node made the NaN/inf
    zero_times_inf: bool  # NaN/inf only where the incoming gradient was 0 (0 × an infinite derivative)
    input_ranges: dict[str, dict[str, Any]] = field(default_factory=dict)
    where_trap: bool = False  # the masked-out branch of a ``where``
    where_site: str | None = None
    fix: str | None = None

    def __str__(self) -> str:
        lines = [f"first non-finite gradient: {self.name} (op {self.op}, step {self.step} of the backward) produced "
                 f"{self.nan} NaN and {self.inf} inf"]
        lines.append(f"  created at {self.site}" if self.site else f"  {HOW_TO_RECORD_SITES}")
        for name, r in self.input_ranges.items():
            extra = "".join(f", {r[k]} {k}" for k in ("nan", "inf") if r[k])
            lines.append(f"  {name if name.startswith('saved[') else 'saved ' + name}: shape {tuple(r['shape'])}, range [{_fmt(r['min'])}, {_fmt(r['max'])}]{extra}")
        if not self.incoming_finite:
            lines.append("  the gradient it received was already non-finite (the gradient passed to backward, or a "
                         "hook, made it)")
        elif self.where_trap:
            lines.append(
                f"  cause: the masked-out branch of where(){' (created at ' + self.where_site + ')' if self.where_site else ''}: "
                f"where's backward sends that branch a zero gradient, and {self.op}'s derivative is infinite or NaN "
                "at the unselected values, so 0 × inf = NaN flows into the input although where() never used them")
            lines.append(f"  fix: mask the input first (the \"double where\"): {self.fix}")
        elif self.zero_times_inf:
            lines.append(f"  cause: a zero gradient met an infinite derivative of {self.op} (0 × inf = NaN): the "
                         "forward evaluated it outside its domain; keep its inputs inside it")
        else:
            lines.append(f"  cause: {self.op}'s backward made NaN/inf from a finite gradient: its derivative is infinite "
                         "or undefined at these inputs, or overflowed (see the saved ranges: a zero divisor, log or "
                         "sqrt at 0, a huge value)")
        return "\n".join(lines)


class _Pass:
    """One backward pass seen by a watch: the hooks it registered and what it knows of the graph."""

    def __init__(self, owner: Watch, number: int, roots: list[Any], root_grads: Sequence[Any]) -> None:
        self.owner = owner
        self.number = number
        self.step = 0
        self.root_norm = _stats(g._data for g in root_grads if isinstance(g, Tensor))["norm"]
        self.nodes: list[Any] = []
        self.parents: dict[Any, list[Any]] = {}
        self.handles: list[tuple[Any, Any]] = []
        # watched non-leaf tensors: (node, output_nr) -> name
        self.outputs: dict[tuple[Any, int], str] = {}
        for name, t in owner._tensors:
            if t._grad_fn is not None:
                self.outputs[(t._grad_fn, t._output_nr)] = name
        seen = set(roots)
        stack = list(roots)
        while stack:  # iterative: a graph of any depth
            fn = stack.pop()
            self._hook(fn)
            for nxt, _ in fn.next_functions:
                if nxt is None:
                    continue
                self.parents.setdefault(nxt, []).append(fn)
                if nxt not in seen:
                    seen.add(nxt)
                    stack.append(nxt)

    def _hook(self, fn: Any) -> None:
        index = len(self.nodes)
        self.nodes.append(fn)

        def hook(grad_inputs: tuple[Any, ...], grad_outputs: tuple[Any, ...]) -> None:
            self.owner._on_node(self, index, grad_inputs, grad_outputs)

        self.handles.append((fn, fn.register_hook(hook)))

    def finish(self) -> None:
        if self not in self.owner._passes:  # (finished already, by the watch's exit)
            return
        for fn, handle in self.handles:
            handle.remove()
            own = fn.__dict__
            # A node left with no hook of any kind goes back to the class defaults, so the engine
            # skips it again (another open watch's or the user's hooks keep it hooked).
            if not own.get("_post_hooks") and not fn._pre_hooks and fn._tensor_hooks is None and fn._retained is None:
                own.pop("_post_hooks", None)
                own.pop("_hooked", None)
        self.handles = []
        self.nodes = []
        self.parents = {}
        self.outputs = {}
        self.owner._passes.remove(self)


class Watch:
    """An open (or finished) gradient watch; made by ``watch(...)``. See the module docstring."""

    def __init__(self, model_or_tensors: Any = None, *, vanishing: float = 1e-7, exploding: float = 1e6) -> None:
        self.vanishing = vanishing
        self.exploding = exploding
        self.records: list[dict[str, Any]] = []
        self.first_nonfinite: NonFinite | None = None
        self._tensors: list[tuple[str, Tensor]] = []
        self._module_of: dict[str, str] = {}  # watched name -> its module's name (modules only)
        self._is_module = False
        self._module_types: dict[str, str] = {}
        self._backwards = 0
        self._passes: list[_Pass] = []
        self._open = False
        self._watch(model_or_tensors)

    def _watch(self, what: Any) -> None:
        if what is None:
            return
        if hasattr(what, "named_parameters") and callable(what.named_parameters):
            self._is_module = True
            self._module_types = {name: type(m).__name__ for name, m in what.named_modules()}
            for name, p in what.named_parameters():
                self._tensors.append((name, p))
                self._module_of[name] = name.rpartition(".")[0]
            return
        if isinstance(what, Tensor):
            items: list[tuple[str, Any]] = [("tensor0", what)]
        elif isinstance(what, dict):
            items = [(str(k), v) for k, v in what.items()]
        elif isinstance(what, (list, tuple)):
            items = [(f"tensor{i}", v) for i, v in enumerate(what)]
        else:
            raise TypeError(f"watch() expects an nn.Module, a Tensor, or a list or dict of Tensors, got "
                            f"{type(what).__name__}")
        for name, t in items:
            if not isinstance(t, Tensor):
                raise TypeError(f"watch(): {name} is a {type(t).__name__}, not a Tensor")
            if not t.requires_grad:
                raise ValueError(f"watch(): {name} does not require grad, so no gradient can reach it")
            self._tensors.append((name, t))

    # -- the context ----------------------------------------------------------------------------
    def __enter__(self) -> Watch:
        if self._open:
            raise RuntimeError("this watch is already open")
        self._open = True
        engine.BACKWARD_WATCHERS.append(self._start)
        return self

    def __exit__(self, *exc: object) -> None:
        self._open = False
        try:
            engine.BACKWARD_WATCHERS.remove(self._start)
        except ValueError:
            pass
        for p in list(self._passes):  # (a backward still running in another thread)
            p.finish()

    def _start(self, roots: list[Any], root_grads: Sequence[Any]) -> Callable[[], None]:
        self._backwards += 1
        p = _Pass(self, self._backwards, roots, root_grads)
        self._passes.append(p)
        return p.finish

    # -- what a hook sees -----------------------------------------------------------------------
    def _flags(self, stats: dict[str, Any], root_norm: float) -> list[str]:
        flags = []
        if stats["nan"] or stats["inf"]:
            flags.append("nonfinite")
        elif stats["numel"] and root_norm and root_norm == root_norm and math.isfinite(root_norm):
            relative = stats["norm"] / root_norm
            if relative < self.vanishing:
                flags.append("vanishing")
            elif relative > self.exploding:
                flags.append("exploding")
        return flags

    def _on_node(self, p: _Pass, index: int, grad_inputs: tuple[Any, ...], grad_outputs: tuple[Any, ...]) -> None:
        fn = p.nodes[index]
        step = p.step
        p.step += 1
        incoming = [g._data for g in grad_outputs if g is not None]
        produced = [g._data for g in grad_inputs if g is not None]
        stats = _stats(incoming)
        made = _stats(produced) if _any_nonfinite(produced) else _FINITE
        is_acc = type(fn) is AccumulateGrad
        name = fn.name()
        if is_acc:  # named after its leaf when watched
            leaf = next((tname for tname, t in self._tensors if t is fn.variable), None)
            name = f"AccumulateGrad ({leaf})" if leaf else "AccumulateGrad"
        record: dict[str, Any] = {"kind": "node", "backward": p.number, "step": step, "name": name,
                                  "site": creation_site(fn)}
        record.update(stats)
        record["produced_nan"], record["produced_inf"] = made["nan"], made["inf"]
        record["loss_grad_norm"] = p.root_norm
        record["relative"] = stats["norm"] / p.root_norm if p.root_norm else math.nan
        record["flags"] = self._flags(stats, p.root_norm)
        self.records.append(record)

        if self.first_nonfinite is None:
            if stats["nan"] or stats["inf"]:  # it arrived non-finite: from the root gradient or a hook
                self.first_nonfinite = self._nonfinite(p, fn, step, stats, grad_outputs, grad_inputs, False)
            elif made["nan"] or made["inf"]:
                self.first_nonfinite = self._nonfinite(p, fn, step, made, grad_outputs, grad_inputs, True)

        # watched tensors: a leaf at its accumulator, a non-leaf at the output that made it
        if is_acc:
            variable = fn.variable
            for tname, t in self._tensors:
                if t is variable:
                    self._record_tensor(p, tname, grad_outputs[0])
        elif p.outputs:
            for nr, g in enumerate(grad_outputs):
                tname = p.outputs.get((fn, nr))  # type: ignore[assignment]
                if tname is not None:
                    self._record_tensor(p, tname, g)

    def _record_tensor(self, p: _Pass, name: str, grad: Any) -> None:
        stats = _stats([grad._data] if grad is not None else [])
        record: dict[str, Any] = {"kind": "parameter" if self._is_module else "tensor", "backward": p.number,
                                  "name": name}
        if self._is_module:
            record["module"] = self._module_of[name]
        record.update(stats)
        record["loss_grad_norm"] = p.root_norm
        record["relative"] = stats["norm"] / p.root_norm if p.root_norm else math.nan
        record["flags"] = self._flags(stats, p.root_norm) if grad is not None else ["no gradient"]
        self.records.append(record)

    def _nonfinite(self, p: _Pass, fn: Any, step: int, stats: dict[str, Any], grad_outputs: tuple[Any, ...],
                   grad_inputs: tuple[Any, ...], incoming_finite: bool) -> NonFinite:
        name = fn.name()
        op = _short_op(type(fn).__name__)
        zero_times_inf = False
        if incoming_finite:
            zero_times_inf = self._zero_times_inf(grad_outputs, grad_inputs)
        where = self._where_above(p, fn) if zero_times_inf else None
        return NonFinite(
            name=name, op=op, step=step, site=creation_site(fn), nan=stats["nan"], inf=stats["inf"],
            incoming_finite=incoming_finite, zero_times_inf=zero_times_inf, input_ranges=saved_ranges(fn),
            where_trap=where is not None, where_site=creation_site(where) if where is not None else None,
            fix=_DOUBLE_WHERE.get(op, _GENERIC_FIX) if where is not None else None,
        )

    @staticmethod
    def _zero_times_inf(grad_outputs: tuple[Any, ...], grad_inputs: tuple[Any, ...]) -> bool:
        """Whether the NaN/inf a node produced sit where its incoming gradient is exactly zero."""
        incoming = [g._data for g in grad_outputs if g is not None]
        if not incoming:
            return False
        for g in grad_inputs:
            if g is None:
                continue
            bad = ~np.isfinite(g._data)
            if not bad.any():
                continue
            if len(incoming) == 1 and incoming[0].shape == bad.shape:
                if np.any(incoming[0][bad] != 0):
                    return False
            elif not any(np.any(a == 0) for a in incoming):
                return False
        return True

    @staticmethod
    def _where_above(p: _Pass, fn: Any, depth: int = 8) -> Any:
        """A ``where`` node within ``depth`` edges above ``fn`` (that sent it its gradient)."""
        frontier = [fn]
        seen = {fn}
        for _ in range(depth):
            upper = []
            for node in frontier:
                for parent in p.parents.get(node, ()):
                    if parent in seen:
                        continue
                    if type(parent).__name__.startswith("WhereBackward"):
                        return parent
                    seen.add(parent)
                    upper.append(parent)
            frontier = upper
        return None

    # -- reading the results --------------------------------------------------------------------
    def layers(self) -> list[dict[str, Any]]:
        """Per-layer figures: for a module, its parameters' gradients together, by module name;
        for watched tensors, one row per tensor. The last backward's, as plain data."""
        order = {name: i for i, (name, _) in enumerate(self._tensors)}
        rows = sorted((r for r in self.records if r["kind"] in ("parameter", "tensor")
                       and r["backward"] == self._backwards), key=lambda r: order[r["name"]])
        if not self._is_module:
            return [dict(r, kind="layer") for r in rows]
        by_module: dict[str, list[dict[str, Any]]] = {}
        for r in rows:
            by_module.setdefault(r["module"], []).append(r)
        out = []
        for module, members in by_module.items():
            numel = sum(r["numel"] for r in members)
            norms = [r["norm"] for r in members]
            merged = {"kind": "layer", "backward": self._backwards, "name": module or "(top level)",
                      "module_type": self._module_types.get(module, ""),
                      "parameters": [r["name"] for r in members], "norm": math.nan if any(n != n for n in norms)
                      else math.hypot(*norms), "max_abs": max(r["max_abs"] for r in members),
                      "nan": sum(r["nan"] for r in members), "inf": sum(r["inf"] for r in members),
                      "zero_fraction": (sum(r["zero_fraction"] * r["numel"] for r in members) / numel) if numel else 0.0,
                      "numel": numel}
            scale = members[0]["loss_grad_norm"]
            merged["loss_grad_norm"] = scale
            merged["relative"] = merged["norm"] / scale if scale else math.nan
            merged["flags"] = self._flags(merged, scale)
            out.append(merged)
        return out

    def flagged(self) -> dict[str, list[str]]:
        """Names of the layers (or watched tensors) flagged vanishing, exploding or nonfinite."""
        result: dict[str, list[str]] = {"vanishing": [], "exploding": [], "nonfinite": []}
        for r in self.layers():
            for flag in r["flags"]:
                if flag in result:
                    result[flag].append(r["name"])
        return result

    def summary(self, max_nodes: int = 40) -> WatchSummary:
        """A printable table: the layers (or watched tensors), then the nodes in the order they
        ran (the first ``max_nodes`` and every flagged one), then the diagnosis."""
        header = f"{'name':<32} {'norm':>10} {'rel':>10} {'max|g|':>10} {'nan':>5} {'inf':>5} {'zeros':>6}  flags"

        def row(label: str, r: dict[str, Any]) -> str:
            return (f"{label[:32]:<32} {_fmt(r['norm']):>10} {_fmt(r['relative']):>10} {_fmt(r['max_abs']):>10} "
                    f"{r['nan']:>5} {r['inf']:>5} {r['zero_fraction']:>6.0%}  {','.join(r['flags'])}")

        lines = [f"gradient health: {self._backwards} backward pass(es) watched"]
        layers = self.layers()
        if layers:
            lines += ["", "layers (module parameters)" if self._is_module else "watched tensors", header]
            lines += [row(f"{r['name']} ({r['module_type']})" if r.get("module_type") else r["name"], r) for r in layers]
        nodes = [r for r in self.records if r["kind"] == "node"]
        if nodes:
            lines += ["", "nodes, in the order backward ran them (gradient w.r.t. each node's output)", header]
            skipped = 0
            for i, r in enumerate(nodes):
                made_nonfinite = bool(r["produced_nan"] or r["produced_inf"]) and not (r["nan"] or r["inf"])
                if i >= max_nodes and not made_nonfinite:  # past the first rows: only the nodes that made NaN/inf
                    skipped += 1
                    continue
                if skipped:
                    lines.append(f"    ... {skipped} node(s)")
                    skipped = 0
                label = f"{r['step']:>3} {r['name']}" if self._backwards == 1 else f"{r['backward']}.{r['step']} {r['name']}"
                lines.append(row(label, r) + (" <- made NaN/inf from a finite gradient" if made_nonfinite else ""))
            if skipped:
                lines.append(f"    ... {skipped} node(s) (w.records has every one)")
        flagged = self.flagged()
        lines.append("")
        for flag in ("vanishing", "exploding"):
            if flagged[flag]:
                limit = self.vanishing if flag == "vanishing" else self.exploding
                lines.append(f"{flag} ({'<' if flag == 'vanishing' else '>'} {limit:g} × the loss gradient's norm): "
                             + ", ".join(flagged[flag]))
        lines.append(str(self.first_nonfinite) if self.first_nonfinite else "no NaN or inf gradient")
        return WatchSummary("\n".join(lines))

    def plot(self, path: Any, title: str | None = None) -> Any:
        """Draw the per-layer gradient norms as a log-scale bar chart to ``path`` (any format
        matplotlib writes, by its suffix) and return ``path``. Layers are a module's submodules
        (or the watched tensors; with neither, the nodes in the order backward ran them);
        flagged ones are coloured, a NaN/inf gradient is a shaded column, and the vanishing and
        exploding thresholds are drawn. Uses no pyplot state (your backend is left alone).
        """
        try:
            from matplotlib.figure import Figure
            from matplotlib.patches import Patch
        except ImportError as exc:
            raise ImportError(MATPLOTLIB_MISSING) from exc
        rows = self.layers()
        what = "layer" if self._is_module else "watched tensor"
        if not rows:
            rows = [dict(r, name=f"{r['step']} {r['name']}") for r in self.records
                    if r["kind"] == "node" and r["backward"] == self._backwards]
            what = "node, in the order backward ran"
        if not rows:
            raise RuntimeError("nothing to plot: no backward ran while this watch was open")
        colours = {"nonfinite": "#d62728", "exploding": "#ff7f0e", "vanishing": "#9467bd"}
        normal = "#1f77b4"
        fig = Figure(figsize=(max(6.0, 0.5 * len(rows) + 2.5), 4.8))
        ax = fig.subplots()
        xs = list(range(len(rows)))
        drawn = [(x, r) for x, r in zip(xs, rows) if math.isfinite(r["norm"]) and r["norm"] > 0]
        ax.bar([x for x, _ in drawn], [r["norm"] for _, r in drawn],
               color=[next((colours[f] for f in r["flags"] if f in colours), normal) for _, r in drawn])
        ax.set_yscale("log")
        scale = next((r["loss_grad_norm"] for r in rows if r.get("loss_grad_norm")), None)
        heights = [r["norm"] for _, r in drawn]
        if scale:  # keep the thresholds in view when the bars are near them
            heights += [h for h in (self.vanishing * scale, self.exploding * scale)
                        if not heights or min(heights) / 1e3 <= h <= max(heights) * 1e3]
        lo, hi = (min(heights) / 5, max(heights) * 5) if heights else (1e-8, 1e1)
        ax.set_ylim(lo, hi)
        for x, r in zip(xs, rows):
            if not (math.isfinite(r["norm"]) and r["norm"] > 0):  # NaN/inf fills the column; zero has no bar
                bad = not math.isfinite(r["norm"])
                label = "NaN" if r["nan"] else "inf" if r["inf"] else "0"
                if bad:
                    ax.axvspan(x - 0.4, x + 0.4, color=colours["nonfinite"], alpha=0.25, linewidth=0)
                ax.text(x, math.sqrt(lo * hi) if bad else lo, label, ha="center", va="center" if bad else "bottom",
                        color=colours["nonfinite"] if bad else "black", fontweight="bold")
        if scale:
            for limit, name in ((self.vanishing, "vanishing"), (self.exploding, "exploding")):
                y = limit * scale
                if lo <= y <= hi:
                    ax.axhline(y, color=colours[name], linestyle="--", linewidth=1)
                    ax.text(-0.45, y, f" {name} threshold ({limit:g} × loss gradient)", ha="left", va="bottom",
                            color=colours[name], fontsize=8,
                            bbox={"facecolor": "white", "edgecolor": "none", "alpha": 0.8, "pad": 1})
        ax.set_xticks(xs)
        names = [f"{r['name']} ({r['module_type']})" if r.get("module_type") else str(r["name"]) for r in rows]
        tilt = len(rows) > 6 or max(len(n) for n in names) > 10
        ax.set_xticklabels(names, rotation=40 if tilt else 0, ha="right" if tilt else "center",
                           fontsize=9)
        ax.set_xlim(-0.6, len(rows) - 0.4)
        ax.set_ylabel("gradient norm (log scale)")
        ax.set_xlabel(what)
        ax.set_title(title or (f"gradient norm per {what.split(',')[0]}"
                               + (f" (backward pass {self._backwards})" if self._backwards > 1 else "")))
        ax.grid(axis="y", which="major", alpha=0.3)
        used = [f for f in colours if any(f in r["flags"] for r in rows)]
        if used:  # outside the axes: nothing to hide
            ok = [Patch(color=normal, label="ok")] if any(not set(r["flags"]) & colours.keys() for r in rows) else []
            ax.legend(handles=ok + [Patch(color=colours[f], label=f) for f in used], fontsize=8, loc="upper left",
                      bbox_to_anchor=(1.01, 1.0), borderaxespad=0.0)
        fig.tight_layout()
        fig.savefig(path, dpi=100)
        return path

    def __repr__(self) -> str:
        state = "open" if self._open else "closed"
        return f"<retrograd.debug.watch: {state}, {self._backwards} backward pass(es), {len(self.records)} records>"


class WatchSummary(str):
    """``Watch.summary()``'s table: a string that shows as itself at the prompt."""

    def __repr__(self) -> str:
        return str(self)


def watch(model_or_tensors: Any = None, *, vanishing: float = 1e-7, exploding: float = 1e6) -> Watch:
    """Record gradient health while the context is open (see the module docstring).

    ``model_or_tensors``: an ``nn.Module`` (its parameters, by name and by module), a Tensor,
    or a list or dict of Tensors (leaves or not), or None (the nodes only). A layer is flagged
    vanishing when its gradient's norm is below ``vanishing`` times the norm of the gradient
    backward started from (the loss's), exploding above ``exploding`` times it.

    >>> import retrograd as rg
    >>> net = rg.nn.Sequential(rg.nn.Linear(3, 4), rg.nn.Tanh(), rg.nn.Linear(4, 1))
    >>> with watch(net) as w:
    ...     net(rg.ones(5, 3)).sum().backward()
    >>> [(r["name"], r["parameters"], r["flags"]) for r in w.layers()]
    [('0', ['0.weight', '0.bias'], []), ('2', ['2.weight', '2.bias'], [])]
    >>> w.first_nonfinite is None
    True
    """
    return Watch(model_or_tensors, vanishing=vanishing, exploding=exploding)
