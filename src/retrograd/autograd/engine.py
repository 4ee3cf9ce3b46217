"""The backward engine: walks a graph of ``Node`` objects iteratively and applies each one.

It knows no op. A pass is: find the nodes reachable from the roots and count, for each, how
many edges point at it; run nodes whose count has dropped to zero, latest-created first
(highest sequence number), summing the gradients that arrive at a node from several edges
before it runs (``loss.backward()`` counts only once it meets a node that needs it: see
``run_backward``; a chain is walked with no count at all); reduce each gradient to its input's shape and dtype once per edge; run tensor
hooks, pre-hooks and post-hooks; release each node's saved tensors as soon as it has run
unless the graph is retained. No recursion: a chain of any length is walked with a heap.
"""

from __future__ import annotations

import heapq
import weakref
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from .anomaly_mode import ANOMALY, run_node
from .forward_ad import DUAL
from .fp_errors import ignore_fp_errors, restore_fp_errors
from .grad_mode import INFERENCE_CONTEXTS, STATE
from .graph import (
    ACCUMULATE_LOCK,
    COLLECTOR_GUARD,
    LEAF_SEQUENCE_NR,
    AccumulateGrad,
    Node,
    _tensor_class,
    released_marker,
)

if TYPE_CHECKING:
    from ..tensor import Tensor

Edge = tuple[Node, int]

# Open ``retrograd.debug.watch`` contexts: ``start(root_nodes, root_grads)`` returns a ``finish()``
# to call when the pass ends. Read once per backward call, never per node: a watch registers
# node hooks on the graph for the pass, so nothing here costs anything while none is open.
BACKWARD_WATCHERS: list[Any] = []


def gradient_edge(tensor: Tensor) -> Edge | None:
    """The edge a gradient for ``tensor`` flows into: its grad_fn output, or its AccumulateGrad."""
    fn = tensor._grad_fn
    if tensor._base is not None and tensor._view_version != tensor._counter().value:
        fn = tensor._refresh_view_grad_fn()  # the base was written in place since this view was made
    if fn is not None:
        return (fn, tensor._output_nr)
    if not tensor._requires_grad:
        return None
    if tensor._base is not None and tensor._creation_meta in GRADLESS_VIEWS:
        return NO_GRADIENT_EDGE
    return (grad_accumulator(tensor), 0)


# A view made in no_grad or inference mode of a base that requires grad requires grad too (its
# later ops record a graph), but it has no grad_fn and no AccumulateGrad of its own: a gradient
# for it goes nowhere, as in PyTorch (the edge PyTorch leaves invalid).
GRADLESS_VIEWS = ("no_grad", "inference")
NO_GRADIENT_EDGE: Any = (None, 0)

# From this many nodes a backward pass holds the collector guard ("Collector" in
# docs/architecture.md). A smaller pass keeps a few thousand objects alive at most, short of
# the some 70,000 (700 × 10 × 10) that make a full collection due: it can meet at most the one
# that was due anyway, never a run of them. Raising and restoring the threshold costs a small
# pass 2 µs, a tenth of its engine time.
GUARDED_PASS_NODES = 1024

# The ready heap's key of a leaf's AccumulateGrad (its sequence number is the largest there is):
# at the heap's top, some leaf waits to run before any other node.
LEAVES_FIRST = -LEAF_SEQUENCE_NR


def grad_accumulator(tensor: Tensor) -> AccumulateGrad:
    """The leaf's one AccumulateGrad node, shared by every use while some graph holds it.

    The tensor refers to it weakly and it refers to the tensor strongly, as in PyTorch, so a
    leaf and its accumulator never form a reference cycle.
    """
    ref = tensor._accumulator
    acc = ref() if ref is not None else None
    if acc is None:
        acc = AccumulateGrad(tensor)
        tensor._accumulator = weakref.ref(acc)
    acc._edges_made += 1  # (every edge to it is made here, or copied with ``note_copied_edges``)
    return acc


def note_copied_edges(edges: Sequence[tuple[Node | None, int]]) -> None:
    """``edges`` of a node were copied into another one: each leaf's AccumulateGrad among them
    has one edge more than ``grad_accumulator`` counted (see ``AccumulateGrad._edges_made``)."""
    for nxt, _ in edges:
        if type(nxt) is AccumulateGrad:
            nxt._edges_made += 1


def _parents(roots: list[Node]) -> dict[Node, list[Node]]:
    """For a partial backward: every node reached from ``roots``, with its parents (one per
    edge, so ``len`` is its dependency count). ``_dependencies``' walk finds the nodes; one pass
    over their edges inverts them."""
    reached = _dependencies(roots)[0]  # type: ignore[index]  # (no captures: never None)
    parents: dict[Node, list[Node]] = {fn: [] for fn in reached}
    for fn in reached:
        for nxt, _ in fn.next_functions:
            if nxt is not None:
                parents[nxt].append(fn)
    return parents


def _dependencies(roots: list[Node], captures: dict[Node, Any] | None = None) -> tuple[dict[Node, int], set[Node]] | None:
    """How many edges point at each node reachable from ``roots`` (iterative DFS), and the nodes
    reached that have no edge. With ``captures`` (``autograd.grad``'s inputs), None as soon as the
    walk meets such a node that is not a capture point: then not every node is needed and the
    caller takes ``_parents``; if all are (a loss w.r.t. all its parameters), one walk serves."""
    # The roots start at 0, so a root reached through an edge is counted, not traversed again.
    deps: dict[Node, int] = dict.fromkeys(roots, 0)
    if captures is None:
        return _count_edges(deps), set()
    ends: set[Node] = set()
    stack = list(deps)
    get, push, pop = deps.get, stack.append, stack.pop
    while stack:
        fn = pop()
        end = True
        for nxt, _ in fn.next_functions:
            if nxt is not None:
                end = False
                count = get(nxt)
                if count is None:  # first edge into nxt: traverse it
                    deps[nxt] = 1
                    if nxt.next_functions:
                        push(nxt)
                    elif captures is not None:  # (a leaf's AccumulateGrad: an end, seen here)
                        if nxt not in captures:
                            return None
                        ends.add(nxt)
                else:
                    deps[nxt] = count + 1
        if end and captures is not None:
            if fn not in captures:
                return None
            ends.add(fn)
    return deps, ends


def _count_edges(deps: dict[Node, int]) -> dict[Node, int]:
    """``_dependencies`` without captures: ``deps`` (the roots, at 0) filled in with every node
    below them. A chain is followed node to node without the stack (a quarter of this pass)."""
    stack = list(deps)
    get, push, pop = deps.get, stack.append, stack.pop
    while stack:
        fn: Node | None = pop()
        while fn is not None:
            follow = None  # the last new node with edges of its own: walked next, here
            for nxt, _ in fn.next_functions:
                if nxt is not None:
                    count = get(nxt)
                    if count is None:  # first edge into nxt: traverse it
                        deps[nxt] = 1
                        if nxt.next_functions:
                            if follow is not None:
                                push(follow)
                            follow = nxt
                    else:
                        deps[nxt] = count + 1
            fn = follow
    return deps


def _needed_nodes(parents: dict[Node, list[Node]], roots: list[Node], targets: set[Node]) -> set[Node]:
    """Nodes from which some target is reachable: the only ones a partial backward must run."""
    # A target itself runs only if another target lies below it.
    needed: set[Node] = set()
    stack = [t for t in targets if t in parents or t in roots]
    while stack:
        for parent in parents.get(stack.pop(), ()):
            if parent not in needed:
                needed.add(parent)
                stack.append(parent)
    return needed


# The dtypes whose gradients the engine may add up or reduce on their arrays (``_sum_of``,
# ``_reduce_to``): those of the generated ``apply``'s array rules (ops/op.py), for which NumPy's
# add is exactly what the ``add`` and ``sum_to_size`` ops compute.
PLAIN_FLOATS = frozenset((np.dtype(np.float32), np.dtype(np.float64)))
_ndarray = np.ndarray
_Tensor: Any = None  # the Tensor class, once a shortcut below has asked for it (it is above this layer)


def _sum_of(cur: Tensor, g: Tensor) -> Tensor:
    """``cur + g``: two gradients for one output, added up. Where the add would record nothing
    and carry no tangent (grad mode off, as in a backward without create_graph; no forward-AD
    level; no inference mode, whose outputs are marked) and both are plain tensors of one shape
    and float dtype, NumPy's add of their arrays, wrapped: what the ``add`` op computes, without
    its dispatch (the second backward of a Hessian-vector product adds up a dozen gradients)."""
    a, b = cur._data, g._data
    if (not STATE.grad_enabled and type(a) is _ndarray and type(b) is _ndarray and a.dtype is b.dtype
            and a.dtype in PLAIN_FLOATS and a.shape == b.shape and DUAL[0] is None and not INFERENCE_CONTEXTS[0]):
        tensor = _Tensor or _tensor_type()
        if type(cur) is tensor and type(g) is tensor:
            try:
                return tensor._make(np.add(a, b))  # type: ignore[no-any-return]
            except RuntimeWarning:  # (warnings made errors outside the pass's quiet state: the op is quiet)
                pass
    return cur + g


def _tensor_type() -> Any:
    global _Tensor
    _Tensor = _tensor_class()
    return _Tensor


def _reduce_to(grad: Tensor, shape: tuple[int, ...], dtype: Any) -> Tensor:
    """``grad`` summed over broadcast dimensions and cast, to match the output it is for."""
    data = grad._data
    if data.shape != shape:
        if (not STATE.grad_enabled and shape and type(data) is _ndarray and data.dtype is dtype and dtype in PLAIN_FLOATS
                and type(grad) is (_Tensor or _tensor_type()) and DUAL[0] is None and not INFERENCE_CONTEXTS[0]):
            # A gradient to reduce where nothing is recorded (as in ``_sum_of``): for leading dims
            # (a broadcast bias's), ``sum_to_size``'s forward (ops/reduce._sum_to) on the array.
            lead = data.ndim - len(shape)
            if lead > 0 and data.shape[lead:] == shape:
                return _Tensor._make(np.add.reduce(data, axis=0 if lead == 1 else tuple(range(lead))))  # type: ignore[no-any-return]
        grad = grad.sum_to_size(shape)
    if grad._data.dtype != dtype:
        if grad._data.dtype.kind == "c" and dtype.kind != "c":
            grad = grad.real  # a complex gradient reaching a real input: PyTorch keeps its real part
        grad = grad.to(dtype)
    return grad


def _reduce_to_output(grad: Tensor, fn: Node, output_nr: int) -> Tensor:
    """``_reduce_to`` for a node with several outputs (or none recorded)."""
    meta = fn._output_meta
    if not meta:
        return grad
    shape, dtype = meta[output_nr]
    data = grad._data
    if data.shape != shape or data.dtype != dtype:
        return _reduce_to(grad, shape, dtype)
    return grad


def _root_edge(root: Tensor, position: int) -> Edge:
    """The edge the gradient of the ``position``-th root starts from (it must have one)."""
    edge = gradient_edge(root)
    if edge is None or edge[0] is None:
        raise RuntimeError(f"element {position} of tensors does not require grad and does not have a grad_fn")
    return edge


def run_backward(
    roots: Sequence[Tensor],
    root_grads: Sequence[Tensor],
    retain_graph: bool,
    create_graph: bool,
    inputs: Sequence[Tensor] | None = None,
    accumulate: bool = True,
) -> list[Tensor | None]:
    """Backpropagate ``root_grads`` from ``roots``.

    With ``accumulate`` (``backward``) gradients go into ``.grad`` of the leaves (or of only
    ``inputs`` when given). Without it (``autograd.grad``) the gradients flowing into
    ``inputs`` are returned and no ``.grad`` is touched. Returns one entry per input.
    """
    # Where each requested input's gradient is caught: node -> [(output_nr, input position)].
    captures: dict[Node, list[tuple[int, int]]] = {}
    captured: list[Tensor | None] = []
    # With inputs: the capture points reached only to capture, which must not run (``skip``;
    # every other node reached runs), and the nodes the pass visits (``visit``; None: all).
    skip: set[Node] | None = None
    visit: set[Node] | None = None
    buffers: dict[Node, list[Tensor | None]] = {}
    ready: list[tuple[int, int, Node]] = []
    tiebreak = 0
    # The one node made ready by the last step when it is the next to run (nothing else waiting,
    # or only nodes of lower sequence number), with its gradients: a chain then never touches the
    # heap or the buffers (the order is the same: the heap would pop it next).
    following: Node | None = None
    following_grads: Any = None
    # The edges into each node still to run, or None while the pass is uncounted (below).
    deps: dict[Node, int] | None
    # Uncounted, the nodes the last step reached that need a count (``Node._needs_count``).
    unsettled: list[Node] | None = None
    # Uncounted, how many more nodes may run before the pass holds the collector guard.
    countdown = 0
    if inputs is None and len(roots) == 1:
        # loss.backward(): the one root runs first, handed over like any next node. The pass
        # starts uncounted: every node but a leaf is made after the nodes it points at, so its
        # sequence number is below theirs, and the node of highest sequence number among those
        # that received a gradient has received all of them; a node runs as the heap pops it, as
        # in a counted pass, with no pass over the graph beforehand. A leaf's AccumulateGrad with
        # a single edge is complete with that edge's gradient. The first node reached that needs
        # a count (``_count_remaining``) turns the rest of the pass into a counted one.
        following, nr = _root_edge(roots[0], 0)
        following_grads = [None] * following.num_outputs
        following_grads[nr] = root_grads[0]
        root_nodes = [following]
        deps = None
        countdown = GUARDED_PASS_NODES
    else:
        root_edges = [_root_edge(t, i) for i, t in enumerate(roots)]
        if inputs is not None:
            captured = [None] * len(inputs)
            for i, t in enumerate(inputs):
                edge = gradient_edge(t)
                if edge is None:
                    raise RuntimeError("One of the differentiated Tensors does not require grad")
                if edge[0] is not None:  # (a view made in no_grad mode: no gradient reaches it)
                    captures.setdefault(edge[0], []).append((edge[1], i))
        g: Any
        for (fn, nr), g in zip(root_edges, root_grads):
            buf = buffers.get(fn)
            if buf is None:
                buf = buffers[fn] = [None] * fn.num_outputs
            cur = buf[nr]
            buf[nr] = g if cur is None else _sum_of(cur, g)

        root_nodes = list(buffers)
        if inputs is None:
            deps = _dependencies(root_nodes)[0]  # type: ignore[index]  # (no captures: never None)
        else:
            all_needed = _dependencies(root_nodes, captures)
            if all_needed is not None:
                # Every path ends at a requested input (autograd.grad of a loss w.r.t. all its
                # parameters): every node runs but those ends, every node is visited (no visit set
                # to test each edge against) and every edge counts.
                deps, skip = all_needed
            else:
                parents = _parents(root_nodes)
                needed = _needed_nodes(parents, root_nodes, set(captures))
                visit = needed | captures.keys()
                skip = {fn for fn in captures if fn not in needed}
                deps = {fn: sum(1 for parent in parents[fn] if parent in needed)
                        for fn in visit if fn in parents}

        for fn in root_nodes:
            if (visit is None or fn in visit) and not deps.get(fn):
                ready.append((-fn._sequence_nr, tiebreak, fn))
                tiebreak += 1
        heapq.heapify(ready)
    heappush, heappop = heapq.heappush, heapq.heappop
    grads: Any
    release = not retain_graph
    # The marker naming the line that called this backward: a second backward through a node it
    # released says where this one ran. (2: the search starts at this function's caller.)
    freed = released_marker(2) if release else ()
    anomaly = ANOMALY[2]  # (ANOMALY[0] is also on while creation sites are only recorded)
    # Leaves made ready by the node just run, in edge order, each with its gradient in a list of
    # its own: they run once its step has dropped its references (what the heap would do, as
    # a leaf runs first; without a pass-wide step to take: hooks, anomaly mode, captures).
    leaves: list[tuple[Node, list[Any]]] = []
    plain_leaves = inputs is None and not anomaly

    finishes = [start(root_nodes, root_grads) for start in BACKWARD_WATCHERS] if BACKWARD_WATCHERS else None

    previous_mode = STATE.grad_enabled
    STATE.grad_enabled = create_graph
    # The graph holds no reference cycles and everything backward allocates is freed by
    # reference counting; full collections would only rescan the (possibly huge) graph. They are
    # made rare, not switched off: the collector is the whole process's, other threads use it.
    # A small graph's pass allocates too little to bring a full collection nearer.
    guarded = deps is not None and len(deps) >= GUARDED_PASS_NODES
    if guarded:
        COLLECTOR_GUARD.hold()
    # The rules meet inf and nan at boundaries (the gradient of log at 0): NumPy's reports are
    # off for the whole pass, once per backward call rather than per node (autograd/fp_errors.py).
    fp_token = ignore_fp_errors()
    try:
        while True:
            if following is not None:
                fn, following = following, None
                # (this name lets go: a leaf's gradient may be a view of these, see ``leaves``)
                grads, following_grads = following_grads, None
            elif ready:
                fn = heappop(ready)[2]
                grads = buffers.pop(fn, None) or [None] * fn.num_outputs
            else:
                break
            if countdown:  # (uncounted: the pass's size is known as it runs)
                countdown -= 1
                if not countdown:
                    COLLECTOR_GUARD.hold()
                    guarded = True

            hooked = fn._hooked  # (always for AccumulateGrad: a leaf's hooks run before it)
            # (Every node visited is needed or a capture point, so only those may be skipped.)
            if hooked or (skip is not None and fn in captures):
                grads = _before_node(fn, grads, hooked, skip, captures, captured, inputs, accumulate)
                if grads is None:  # a partial backward's capture point that need not run
                    continue

            if grads[0] is not None or (len(grads) > 1 and any(g is not None for g in grads)):
                if not anomaly:
                    outputs = fn.apply(grads)
                else:
                    outputs = run_node(fn, grads)
            elif fn._apply_without_grads:  # a custom Function's backward sees undefined gradients too
                outputs = fn.apply(grads)
            else:
                outputs = (None,) * len(fn.next_functions)
            if hooked and fn._post_hooks:
                for hook in list(fn._post_hooks):
                    result = hook(tuple(outputs), tuple(grads))
                    if result is not None:
                        outputs = check_hook_tuple(hook, outputs, result)
            if release and fn._saved:
                if fn._custom_release:
                    fn.release(freed)
                else:
                    fn._saved = freed  # Node.release, inline

            for (nxt, nr), g in zip(fn.next_functions, outputs):
                if nxt is None or (visit is not None and nxt not in visit):
                    continue
                if g is not None:  # sum_to once per edge: match the output the gradient is for
                    shape = nxt._shape
                    if shape is None:
                        g = _reduce_to_output(g, nxt, nr)
                    else:
                        data = g._data
                        dtype = nxt._dtype
                        if data.shape != shape or (data.dtype is not dtype and data.dtype != dtype):
                            g = _reduce_to(g, shape, dtype)
                if deps is not None:
                    count = deps[nxt] - 1
                elif nxt._needs_count and (type(nxt) is not AccumulateGrad or nxt._edges_made != 1):  # type: ignore[attr-defined]
                    # Its gradients wait in its buffer until the edges are counted, after this step.
                    buf = buffers.get(nxt)
                    if buf is None:
                        buf = buffers[nxt] = [None] * nxt.num_outputs
                        if unsettled is None:
                            unsettled = []
                        unsettled.append(nxt)
                    if g is not None:
                        cur = buf[nr]
                        buf[nr] = g if cur is None else _sum_of(cur, g)
                    continue
                elif nxt is following:  # another gradient for the node that runs next
                    if g is not None:
                        cur = following_grads[nr]
                        following_grads[nr] = g if cur is None else _sum_of(cur, g)
                    continue
                elif buffers and nxt in buffers:  # another gradient for a node in the heap
                    if g is not None:
                        buf = buffers[nxt]
                        cur = buf[nr]
                        buf[nr] = g if cur is None else _sum_of(cur, g)
                    continue
                else:  # its first gradient: it waits in the heap, or runs next
                    count = 0
                if count == 0:
                    # (A leaf is told by its sequence number: an attribute read costs less than type().)
                    if (nxt._sequence_nr == LEAF_SEQUENCE_NR and plain_leaves and not nxt.__dict__
                            and not nxt.variable._hooks and type(following) is not AccumulateGrad  # type: ignore[attr-defined]
                            and (not ready or ready[0][0] != LEAVES_FIRST)):
                        # A leaf without hooks whose gradient is complete, and no other leaf before
                        # it: it accumulates as soon as this node's edges are done (``leaves``).
                        buf = buffers.pop(nxt, None)
                        if buf is not None:
                            g = buf.pop() if g is None else buf[0] + g  # (pop: the grad keeps no other holder)
                        if g is not None:
                            leaves.append((nxt, [g]))
                        continue
                    if (following is None and (not ready or -nxt._sequence_nr < ready[0][0])
                            and (not buffers or nxt not in buffers)):
                        # The only gradient nxt receives, and nxt runs next (nothing ready, or only
                        # nodes the heap would pop after it): hand it over directly.
                        if nxt.num_outputs == 1:
                            following_grads = [g]
                        else:
                            following_grads = [None] * nxt.num_outputs
                            following_grads[nr] = g
                        following = nxt
                        continue
                if deps is not None:
                    deps[nxt] = count
                elif g is None:  # (uncounted, a node in the heap has a buffer: see above)
                    buffers[nxt] = [None] * nxt.num_outputs
                if g is not None:
                    buf = buffers.get(nxt)
                    if buf is None:
                        if nxt.num_outputs == 1:
                            buffers[nxt] = [g]
                        else:
                            buf = buffers[nxt] = [None] * nxt.num_outputs
                            buf[nr] = g
                    else:
                        cur = buf[nr]
                        buf[nr] = g if cur is None else _sum_of(cur, g)
                if count == 0:
                    # Two ready nodes: the one handed over stays so while it still runs first
                    # (a strictly higher sequence number: no tie for the heap to break), else
                    # both go through the heap.
                    if following is not None and following._sequence_nr <= nxt._sequence_nr:
                        buffers[following] = following_grads
                        heappush(ready, (-following._sequence_nr, tiebreak, following))
                        tiebreak += 1
                        following = None
                    heappush(ready, (-nxt._sequence_nr, tiebreak, nxt))
                    tiebreak += 1
            # Drop this step's references, so a leaf's gradient is owned by the engine alone
            # when it is stored (Tensor._accumulate_grad keeps it without a copy then).
            outputs = g = grads = data = None  # type: ignore[assignment]
            if leaves:
                for leaf, leaf_grads in leaves:
                    leaf.apply(leaf_grads)
                leaves.clear()
            if unsettled is not None:
                deps, following, following_grads, tiebreak = _count_remaining(
                    unsettled, ready, buffers, following, following_grads, tiebreak)
                unsettled = None
                if countdown:
                    if len(deps) >= countdown:
                        COLLECTOR_GUARD.hold()
                        guarded = True
                    countdown = 0
    finally:
        restore_fp_errors(fp_token)
        STATE.grad_enabled = previous_mode
        if guarded:
            COLLECTOR_GUARD.release()
        if finishes:
            for finish in finishes:
                finish()
    return captured


def _count_remaining(
    unsettled: list[Node],
    ready: list[tuple[int, int, Node]],
    buffers: dict[Node, list[Any]],
    following: Node | None,
    following_grads: Any,
    tiebreak: int,
) -> tuple[dict[Node, int], Node | None, Any, int]:
    """Turn an uncounted pass into a counted one where it stands: count the edges into every node
    still to run from those that received a gradient (the heap's, the one handed over and the
    ``unsettled`` ones). Then only a node with no edge left into it stays ready: the others leave
    the heap (``ready``, rebuilt in place) and wait in their buffers, as in a counted pass.
    Returns the counts, the node handed over (None if it must wait), its gradients and the
    next tiebreak."""
    pending = [entry[2] for entry in ready if entry[0] != LEAVES_FIRST]
    if following is not None:
        pending.append(following)
    pending += unsettled
    deps = _count_edges(dict.fromkeys(pending, 0))
    still = [entry for entry in ready if entry[0] == LEAVES_FIRST or not deps[entry[2]]]
    for fn in unsettled:
        if not deps[fn]:
            still.append((-fn._sequence_nr, tiebreak, fn))
            tiebreak += 1
    ready[:] = still
    heapq.heapify(ready)
    if following is not None and deps[following]:
        buffers[following] = following_grads
        following = following_grads = None
    return deps, following, following_grads, tiebreak


def _before_node(
    fn: Node,
    grads: list[Any],
    hooked: bool,
    skip: set[Node] | None,
    captures: dict[Node, list[tuple[int, int]]],
    captured: list[Tensor | None],
    inputs: Sequence[Tensor] | None,
    accumulate: bool,
) -> list[Any] | None:
    """What happens to a node's incoming gradients before it runs, off the common path: tensor
    hooks, retain_grad, a leaf's hooks, capture for ``autograd.grad``, then pre-hooks. None
    means the node must not run (a partial backward reaches it, in ``skip``, only to capture)."""
    is_accumulator = type(fn) is AccumulateGrad
    if hooked and (fn._tensor_hooks is not None or fn._retained is not None):
        _run_tensor_hooks(fn, grads)
    if is_accumulator and fn.variable._hooks:  # type: ignore[attr-defined]
        grads[0] = _call_tensor_hooks(fn.variable._hooks, grads[0])  # type: ignore[attr-defined]
    if skip is not None:
        spots = captures.get(fn)
        if spots is not None:
            for nr, position in spots:
                caught = grads[nr]
                captured[position] = caught
                if accumulate and not is_accumulator and caught is not None:
                    with ACCUMULATE_LOCK:
                        inputs[position]._accumulate_grad(caught, retained=True)  # type: ignore[index]
        if fn in skip and not (accumulate and is_accumulator):
            return None
    if hooked and fn._pre_hooks:
        for hook in list(fn._pre_hooks):
            result = hook(tuple(grads))
            if result is not None:
                grads = list(check_hook_tuple(hook, grads, result))
    return grads


def hook_name(hook: Any) -> str:
    """How PyTorch names a hook in its error messages."""
    return str(getattr(hook, "__name__", "<unknown>"))


def check_hook_result(hook: Any, original: Any, result: Any) -> None:
    """PyTorch's checks of one gradient a hook returned in place of ``original``: a tensor (or
    None, kept as is), of the same dtype and shape, never replacing a missing gradient."""
    from ..tensor import Tensor

    if original is None:
        raise RuntimeError("can't replace a None gradient with a non-None value")
    if not isinstance(result, Tensor):
        raise TypeError(f"expected Variable, but hook returned '{type(result).__name__}'")
    if result._data.dtype != original._data.dtype:
        raise RuntimeError(
            f"hook '{hook_name(hook)}' has changed the type of value (was {original.type()} got {result.type()})"
        )
    if result._data.shape != original._data.shape:
        raise RuntimeError(f"hook '{hook_name(hook)}' has changed the size of value")


def check_hook_tuple(hook: Any, originals: Sequence[Any], result: Any) -> tuple[Any, ...]:
    """PyTorch's checks of the gradients a node pre- or post-hook returned (a tuple, one per
    original gradient, each passing ``check_hook_result``); a None in it drops that gradient."""
    if type(result) is not tuple:
        raise TypeError(f"expected tuple, but hook returned '{type(result).__name__}'")
    if len(result) != len(originals):
        raise RuntimeError(
            f"hook '{hook_name(hook)}' has returned an incorrect number of values (got {len(result)}, but "
            f"expected {len(originals)})"
        )
    for original, new in zip(originals, result):
        if new is not None:
            check_hook_result(hook, original, new)
    return result  # type: ignore[no-any-return]


def _call_tensor_hooks(hooks: list[Any], grad: Tensor | None) -> Tensor | None:
    if grad is None:
        return None
    hook: Any
    for hook in list(hooks):
        result = hook(grad)
        if result is not None:
            check_hook_result(hook, grad, result)
            grad = result
    return grad


def _run_tensor_hooks(fn: Node, grads: list[Tensor | None]) -> None:
    """Hooks registered on the tensors this node produced run first, then retain_grad.
    (Node pre- and post-hooks are run by the caller.)"""
    if fn._tensor_hooks is not None:
        for nr, hooks in fn._tensor_hooks.items():
            grads[nr] = _call_tensor_hooks(hooks, grads[nr])
    if fn._retained is not None:
        for nr, ref in fn._retained.items():
            tensor = ref()
            g = grads[nr]
            if tensor is not None and g is not None:
                with ACCUMULATE_LOCK:
                    tensor._accumulate_grad(g, retained=True)
