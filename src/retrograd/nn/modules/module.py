"""``Module``: the base class of layers, with PyTorch's registration rules, traversal order,
``state_dict`` format, train/eval flag, hooks and ``repr``.

Assigning a ``Parameter``, a ``Module`` or a buffer as an attribute registers it (in assignment
order); traversals (``named_parameters``, ``named_modules``...) visit a module's own members
first, then its children depth first, and skip members already seen.
"""

from __future__ import annotations

import itertools
import warnings
from collections import OrderedDict
from collections.abc import Callable, Iterator, Mapping
from types import MappingProxyType
from typing import Any, NamedTuple

import numpy as np

from ..._grad_utils import zero_grads
from ...autograd.grad_mode import no_grad
from ...factories import as_tensor
from ...tensor import Tensor, device
from ..parameter import Buffer, Parameter
from ._backward_hooks import MIXED_GLOBAL_HOOKS_ERROR, MIXED_HOOKS_ERROR, BackwardHook, register_legacy_hooks

__all__ = ["Module", "RemovableHandle", "register_module_backward_hook", "register_module_full_backward_hook",
           "register_module_full_backward_pre_hook"]

_NO_HOOKS: Mapping[int, Any] = MappingProxyType({})  # a module's hooks until it registers one
_global_backward_hooks: OrderedDict[int, Any] = OrderedDict()
_global_backward_pre_hooks: OrderedDict[int, Any] = OrderedDict()
_global_is_full_backward_hook: bool | None = None


def _typename(obj: Any) -> str:
    """``torch.typename``: ``torch.FloatTensor`` for tensors, the qualified type name otherwise."""
    if isinstance(obj, Tensor):
        return obj.type()  # type: ignore[no-any-return]
    cls = obj if isinstance(obj, type) else type(obj)
    module = getattr(cls, "__module__", "") or ""
    if module == "retrograd" or module.startswith("retrograd."):  # spelled as PyTorch spells its own classes
        module = "torch" + module[len("retrograd"):]
    return cls.__qualname__ if module in ("", "builtins") else f"{module}.{cls.__qualname__}"


# True while load_state_dict's first pass checks a state dict without writing anything.
_validating = False


def _load_checked(load: Callable[..., None], module: Module, state: Mapping[str, Any], strict: bool,
                  missing: list[str], unexpected: list[str], errors: list[str]) -> None:
    """Run ``load`` twice: first only checking (keys, types, shapes), then, if the state dict is
    good, copying. A bad state dict thus leaves every parameter and buffer unchanged (PyTorch
    copies the good entries before it raises)."""
    global _validating
    _validating = True
    try:
        load(module, state)
    finally:
        _validating = False
    if errors or (strict and (missing or unexpected)):
        return
    del missing[:], unexpected[:]
    load(module, state)


def _checkpoint_value(value: Any) -> Any:
    """A state dict entry as a Tensor: NumPy arrays and PyTorch tensors are copied into one."""
    if isinstance(value, np.ndarray):
        return as_tensor(value.copy())
    module = type(value).__module__ or ""
    if (module == "torch" or module.startswith("torch.")) and hasattr(value, "numpy") and hasattr(value, "detach"):
        return as_tensor(value.detach().cpu().numpy().copy())
    return value


class _IncompatibleKeys(NamedTuple):
    missing_keys: list[str]
    unexpected_keys: list[str]

    def __repr__(self) -> str:
        if not self.missing_keys and not self.unexpected_keys:
            return "<All keys matched successfully>"
        return f"_IncompatibleKeys(missing_keys={self.missing_keys}, unexpected_keys={self.unexpected_keys})"

    def __str__(self) -> str:
        return self.__repr__()


class RemovableHandle:
    """Returned by ``register_*_hook``: ``remove()`` (or leaving a ``with`` block) unregisters."""

    _next_id = itertools.count()

    def __init__(self, hooks_dict: dict[int, Any], *extra_dicts: dict[int, Any]) -> None:
        self.hooks_dict = hooks_dict
        self.id = next(RemovableHandle._next_id)
        self.extra_dicts = extra_dicts

    def remove(self) -> None:
        for d in (self.hooks_dict, *self.extra_dicts):
            d.pop(self.id, None)

    def __enter__(self) -> RemovableHandle:
        return self

    def __exit__(self, *exc: object) -> None:
        self.remove()


def _addindent(text: str, spaces: int) -> str:
    lines = text.split("\n")
    if len(lines) == 1:
        return text
    return lines[0] + "\n" + "\n".join(" " * spaces + line for line in lines[1:])


class Module:
    """Base class for all neural network modules.

    >>> import retrograd as rg
    >>> class Scale(rg.nn.Module):
    ...     def __init__(self):
    ...         super().__init__()
    ...         self.w = rg.nn.Parameter(rg.tensor([2.0]))
    ...     def forward(self, x):
    ...         return x * self.w
    >>> m = Scale()
    >>> [name for name, _ in m.named_parameters()], m(rg.tensor([3.0])).tolist()
    (['w'], [6.0])
    """

    training: bool
    _version: int = 1
    call_super_init: bool = False
    # Backward hooks: class-level empty until registered (the instance then gets its own dict).
    _backward_hooks: Mapping[int, Any] = _NO_HOOKS
    _backward_pre_hooks: Mapping[int, Any] = _NO_HOOKS
    _is_full_backward_hook: bool | None = None

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        if self.call_super_init is False and bool(kwargs):
            raise TypeError(
                f"{type(self).__name__}.__init__() got an unexpected keyword argument '{next(iter(kwargs))}'"
            )
        if self.call_super_init is False and bool(args):
            raise TypeError(
                f"{type(self).__name__}.__init__() takes 1 positional argument but {len(args) + 1} were given"
            )
        setattr_ = object.__setattr__
        setattr_(self, "training", True)
        setattr_(self, "_parameters", {})
        setattr_(self, "_buffers", {})
        setattr_(self, "_non_persistent_buffers_set", set())
        setattr_(self, "_forward_hooks", OrderedDict())
        setattr_(self, "_forward_hooks_with_kwargs", OrderedDict())
        setattr_(self, "_forward_hooks_always_called", OrderedDict())
        setattr_(self, "_forward_pre_hooks", OrderedDict())
        setattr_(self, "_forward_pre_hooks_with_kwargs", OrderedDict())
        setattr_(self, "_modules", {})

    forward: Callable[..., Any]

    def _missing_forward(self, *input: Any) -> Any:  # noqa: A002
        raise NotImplementedError(f'Module [{type(self).__name__}] is missing the required "forward" function')

    forward = _missing_forward

    # -- registration ---------------------------------------------------------------------------
    def register_buffer(self, name: str, tensor: Tensor | None, persistent: bool = True) -> None:
        """Register ``tensor`` as state that is not a parameter (in ``state_dict`` if persistent)."""
        if "_buffers" not in self.__dict__:
            raise AttributeError("cannot assign buffer before Module.__init__() call")
        if not isinstance(name, str):
            raise TypeError(f"buffer name should be a string. Got {_typename(name)}")
        if "." in name:
            raise KeyError('buffer name can\'t contain "."')
        if name == "":
            raise KeyError('buffer name can\'t be empty string ""')
        if hasattr(self, name) and name not in self._buffers:
            raise KeyError(f"attribute '{name}' already exists")
        if tensor is not None and not isinstance(tensor, Tensor):
            raise TypeError(
                f"cannot assign '{_typename(tensor)}' object to buffer '{name}' (torch Tensor or None required)"
            )
        self._buffers[name] = tensor
        if persistent:
            self._non_persistent_buffers_set.discard(name)
        else:
            self._non_persistent_buffers_set.add(name)

    def register_parameter(self, name: str, param: Parameter | None) -> None:
        """Register ``param`` (a ``Parameter`` or ``None``) under ``name``."""
        if "_parameters" not in self.__dict__:
            raise AttributeError("cannot assign parameter before Module.__init__() call")
        if not isinstance(name, str):
            raise TypeError(f"parameter name should be a string. Got {_typename(name)}")
        if "." in name:
            raise KeyError('parameter name can\'t contain "."')
        if name == "":
            raise KeyError('parameter name can\'t be empty string ""')
        if hasattr(self, name) and name not in self._parameters:
            raise KeyError(f"attribute '{name}' already exists")
        if param is None:
            self._parameters[name] = None
        elif not isinstance(param, Parameter):
            raise TypeError(
                f"cannot assign '{_typename(param)}' object to parameter '{name}' (torch.nn.Parameter or None required)"
            )
        elif param.grad_fn is not None:
            raise ValueError(
                f"Cannot assign non-leaf Tensor to parameter '{name}'. Model parameters must be created explicitly. "
                f"To express '{name}' as a function of another Tensor, compute the value in the forward() method."
            )
        else:
            self._parameters[name] = param

    def add_module(self, name: str, module: Module | None) -> None:
        """Register ``module`` as a child under ``name``."""
        if not isinstance(module, Module) and module is not None:
            raise TypeError(f"{_typename(module)} is not a Module subclass")
        if not isinstance(name, str):
            raise TypeError(f"module name should be a string. Got {_typename(name)}")
        if hasattr(self, name) and name not in self._modules:
            raise KeyError(f"attribute '{name}' already exists")
        if "." in name:
            raise KeyError(f'module name can\'t contain ".", got: {name}')
        if name == "":
            raise KeyError('module name can\'t be empty string ""')
        self._modules[name] = module

    def register_module(self, name: str, module: Module | None) -> None:
        """Alias of ``add_module``."""
        self.add_module(name, module)

    def get_submodule(self, target: str) -> Module:
        """The submodule at dotted path ``target`` (``''`` is this module)."""
        if target == "":
            return self
        mod: Module = self
        for item in target.split("."):
            if not hasattr(mod, item):
                raise AttributeError(mod._get_name() + " has no attribute `" + item + "`")
            mod = getattr(mod, item)
            if not isinstance(mod, Module):
                raise AttributeError("`" + item + "` is not an nn.Module")
        return mod

    def get_parameter(self, target: str) -> Parameter:
        """The parameter at dotted path ``target``."""
        module_path, _, name = target.rpartition(".")
        mod = self.get_submodule(module_path)
        if not hasattr(mod, name):
            raise AttributeError(mod._get_name() + " has no attribute `" + name + "`")
        param = getattr(mod, name)
        if not isinstance(param, Parameter):
            raise AttributeError("`" + name + "` is not an nn.Parameter")
        return param

    def get_buffer(self, target: str) -> Tensor:
        """The buffer at dotted path ``target``."""
        module_path, _, name = target.rpartition(".")
        mod = self.get_submodule(module_path)
        if not hasattr(mod, name):
            raise AttributeError(mod._get_name() + " has no attribute `" + name + "`")
        buffer = getattr(mod, name)
        if name not in mod._buffers:
            raise AttributeError("`" + name + "` is not a buffer")
        return buffer  # type: ignore[no-any-return]

    # -- attribute protocol ---------------------------------------------------------------------
    def __getattr__(self, name: str) -> Any:
        d = self.__dict__
        for store in ("_parameters", "_buffers", "_modules"):
            members = d.get(store)
            if members is not None and name in members:
                return members[name]
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")

    def __setattr__(self, name: str, value: Any) -> None:
        d = self.__dict__

        def remove_from(*stores: Any) -> None:
            for store in stores:
                if store is None:
                    continue
                if isinstance(store, dict):
                    store.pop(name, None)
                else:
                    store.discard(name)

        params = d.get("_parameters")
        if isinstance(value, Parameter):
            if params is None:
                raise AttributeError("cannot assign parameters before Module.__init__() call")
            remove_from(d, self._buffers, self._modules, self._non_persistent_buffers_set)
            self.register_parameter(name, value)
            return
        if params is not None and name in params:
            if value is not None:
                raise TypeError(
                    f"cannot assign '{_typename(value)}' as parameter '{name}' (torch.nn.Parameter or None expected)"
                )
            self.register_parameter(name, value)
            return
        modules = d.get("_modules")
        if isinstance(value, Module):
            if modules is None:
                raise AttributeError("cannot assign module before Module.__init__() call")
            remove_from(d, self._parameters, self._buffers, self._non_persistent_buffers_set)
            modules[name] = value
            return
        if modules is not None and name in modules:
            if value is not None:
                raise TypeError(
                    f"cannot assign '{_typename(value)}' as child module '{name}' (torch.nn.Module or None expected)"
                )
            modules[name] = value
            return
        buffers = d.get("_buffers")
        if isinstance(value, Buffer) or buffers is not None and name in buffers:
            if buffers is None:
                raise AttributeError("cannot assign buffer before Module.__init__() call")
            if value is not None and not isinstance(value, Tensor):
                raise TypeError(
                    f"cannot assign '{_typename(value)}' as buffer '{name}' "
                    "(torch.nn.Buffer, torch.Tensor or None expected)"
                )
            if isinstance(value, Buffer):
                persistent = bool(getattr(value, "persistent", True))
                remove_from(d, self._parameters, self._modules)
            else:
                persistent = name not in self._non_persistent_buffers_set
            self.register_buffer(name, value, persistent)
            return
        object.__setattr__(self, name, value)

    def __delattr__(self, name: str) -> None:
        if name in self._parameters:
            del self._parameters[name]
        elif name in self._buffers:
            del self._buffers[name]
            self._non_persistent_buffers_set.discard(name)
        elif name in self._modules:
            del self._modules[name]
        else:
            object.__delattr__(self, name)

    def __dir__(self) -> list[str]:
        attrs = dir(type(self)) + list(self.__dict__)
        keys = attrs + list(self._parameters) + list(self._modules) + list(self._buffers)
        return sorted(k for k in set(keys) if not k[:1].isdigit())

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        for name in ("_forward_hooks_with_kwargs", "_forward_hooks_always_called", "_forward_pre_hooks_with_kwargs"):
            self.__dict__.setdefault(name, OrderedDict())
        self.__dict__.setdefault("_non_persistent_buffers_set", set())

    # -- traversal ------------------------------------------------------------------------------
    def _named_members(self, get_members: Callable[[Module], Any], prefix: str = "", recurse: bool = True,
                       remove_duplicate: bool = True) -> Iterator[tuple[str, Any]]:
        seen: set[int] = set()
        modules = self.named_modules(prefix=prefix, remove_duplicate=remove_duplicate) if recurse else [(prefix, self)]
        for module_prefix, module in modules:
            for name, value in get_members(module):
                if value is None or id(value) in seen:
                    continue
                if remove_duplicate:
                    seen.add(id(value))
                yield (module_prefix + "." + name if module_prefix else name), value

    def named_parameters(self, prefix: str = "", recurse: bool = True,
                         remove_duplicate: bool = True) -> Iterator[tuple[str, Parameter]]:
        """``(name, parameter)`` pairs: own parameters first, then children's, without duplicates."""
        return self._named_members(lambda m: m._parameters.items(), prefix, recurse, remove_duplicate)

    def parameters(self, recurse: bool = True) -> Iterator[Parameter]:
        """The parameters of this module (and its submodules when ``recurse``)."""
        for _, param in self.named_parameters(recurse=recurse):
            yield param

    def named_buffers(self, prefix: str = "", recurse: bool = True,
                      remove_duplicate: bool = True) -> Iterator[tuple[str, Tensor]]:
        """``(name, buffer)`` pairs, in the same order as ``named_parameters``."""
        return self._named_members(lambda m: m._buffers.items(), prefix, recurse, remove_duplicate)

    def buffers(self, recurse: bool = True) -> Iterator[Tensor]:
        for _, buf in self.named_buffers(recurse=recurse):
            yield buf

    def named_children(self) -> Iterator[tuple[str, Module]]:
        """The direct submodules, each once."""
        seen: set[int] = set()
        for name, module in self._modules.items():
            if module is not None and id(module) not in seen:
                seen.add(id(module))
                yield name, module

    def children(self) -> Iterator[Module]:
        for _, module in self.named_children():
            yield module

    def named_modules(self, memo: set[Any] | None = None, prefix: str = "",
                      remove_duplicate: bool = True) -> Iterator[tuple[str, Module]]:
        """This module and all submodules, depth first (``''`` names this module)."""
        if memo is None:
            memo = set()
        if self in memo:
            return
        if remove_duplicate:
            memo.add(self)
        yield prefix, self
        for name, module in self._modules.items():
            if module is None:
                continue
            yield from module.named_modules(memo, prefix + "." + name if prefix else name, remove_duplicate)

    def modules(self) -> Iterator[Module]:
        for _, module in self.named_modules():
            yield module

    # -- modes and gradients --------------------------------------------------------------------
    def train(self, mode: bool = True) -> Module:
        """Set training mode (``Dropout`` and friends behave differently); recursive; returns self."""
        if not isinstance(mode, bool):
            raise ValueError("training mode is expected to be boolean")
        self.training = mode
        for module in self.children():
            module.train(mode)
        return self

    def eval(self) -> Module:
        """``train(False)``."""
        return self.train(False)

    def requires_grad_(self, requires_grad: bool = True) -> Module:
        for p in self.parameters():
            p.requires_grad_(requires_grad)
        return self

    def zero_grad(self, set_to_none: bool = True) -> None:
        """Reset the parameters' gradients: to ``None`` (default) or to zeros in place."""
        zero_grads(self.parameters(), set_to_none)

    def apply(self, fn: Callable[[Module], Any]) -> Module:
        """Call ``fn`` on every submodule (children first), then on this module."""
        for module in self.children():
            module.apply(fn)
        fn(self)
        return self

    # -- conversion -----------------------------------------------------------------------------
    def _apply(self, fn: Callable[[Tensor], Tensor], recurse: bool = True) -> Module:
        if recurse:
            for module in self.children():
                module._apply(fn)
        for param in self._parameters.values():
            if param is None:
                continue
            with no_grad():
                applied = fn(param)
            if applied is not param:
                param._data = applied._data  # the Parameter object stays the same, as in PyTorch
            grad = param._grad
            if grad is not None:
                with no_grad():
                    grad_applied = fn(grad)
                if grad_applied is not grad:
                    grad._data = grad_applied._data
        for key, buf in self._buffers.items():
            if buf is not None:
                self._buffers[key] = fn(buf)
        return self

    def to(self, *args: Any, **kwargs: Any) -> Module:
        """Cast floating-point parameters and buffers (``to(dtype)``, ``to(device, dtype)``, ``to(tensor)``)."""
        target = kwargs.get("dtype")
        for a in args:
            if isinstance(a, Tensor):
                target = a.dtype
            elif isinstance(a, (str, device)):
                device(str(a))
            elif a is not None:
                target = a
        if kwargs.get("device") is not None:
            device(str(kwargs["device"]))
        if target is None:
            return self
        from ..._dtype import to_dtype

        dt = to_dtype(target)
        if dt.np.kind not in "fV":
            raise TypeError(f"nn.Module.to only accepts floating point or complex dtypes, but got desired dtype={dt}")
        return self._apply(lambda t: t.to(dt) if t.is_floating_point() else t)

    def float(self) -> Module:
        return self._apply(lambda t: t.float() if t.is_floating_point() else t)

    def double(self) -> Module:
        return self._apply(lambda t: t.double() if t.is_floating_point() else t)

    def half(self) -> Module:
        return self._apply(lambda t: t.half() if t.is_floating_point() else t)

    def bfloat16(self) -> Module:
        """Cast the floating-point parameters and buffers to bfloat16 (needs ``ml_dtypes``).

        >>> import retrograd as rg
        >>> rg.nn.Linear(2, 1).bfloat16().weight.dtype
        torch.bfloat16
        """
        return self._apply(lambda t: t.bfloat16() if t.is_floating_point() else t)

    def type(self, dst_type: Any) -> Module:
        return self._apply(lambda t: t.type(dst_type))

    def cpu(self) -> Module:
        return self

    def cuda(self, device_: Any = None) -> Module:
        device("cuda")  # raises: retrograd runs on the CPU only
        return self

    def share_memory(self) -> Module:
        return self

    # -- state_dict -----------------------------------------------------------------------------
    def _save_to_state_dict(self, destination: dict[str, Any], prefix: str, keep_vars: bool) -> None:
        for name, param in self._parameters.items():
            if param is not None:
                destination[prefix + name] = param if keep_vars else param.detach()
        for name, buf in self._buffers.items():
            if buf is not None and name not in self._non_persistent_buffers_set:
                destination[prefix + name] = buf if keep_vars else buf.detach()

    def state_dict(self, *args: Any, destination: Any = None, prefix: str = "",
                   keep_vars: bool = False) -> dict[str, Any]:
        """An ordered mapping of every parameter and persistent buffer, by dotted name (detached)."""
        if args:  # the deprecated positional form: (destination, prefix, keep_vars)
            destination = args[0]
            if len(args) > 1:
                prefix = args[1]
            if len(args) > 2:
                keep_vars = args[2]
        if destination is None:
            destination = OrderedDict()
            destination._metadata = OrderedDict()  # type: ignore[attr-defined]
        metadata = getattr(destination, "_metadata", None)
        if metadata is not None:
            metadata[prefix[:-1]] = {"version": self._version}
        self._save_to_state_dict(destination, prefix, keep_vars)
        for name, module in self._modules.items():
            if module is not None:
                module.state_dict(destination=destination, prefix=prefix + name + ".", keep_vars=keep_vars)
        return destination  # type: ignore[no-any-return]

    def _load_from_state_dict(self, state_dict: Mapping[str, Any], prefix: str, local_metadata: Any, strict: bool,
                              missing_keys: list[str], unexpected_keys: list[str], error_msgs: list[str],
                              assign: bool = False) -> None:
        persistent = {k: v for k, v in self._buffers.items() if k not in self._non_persistent_buffers_set}
        local_state = {k: v for k, v in itertools.chain(self._parameters.items(), persistent.items()) if v is not None}
        for name, param in local_state.items():
            key = prefix + name
            if key not in state_dict:
                if strict:
                    missing_keys.append(key)
                continue
            value = state_dict[key]
            if not isinstance(value, Tensor):
                error_msgs.append(
                    f'While copying the parameter named "{key}", expected torch.Tensor or Tensor-like object from '
                    f"checkpoint but received {type(value)}"
                )
                continue
            if value.shape != param.shape:
                error_msgs.append(
                    f"size mismatch for {key}: copying a param with shape {value.shape} from checkpoint, "
                    f"the shape in current model is {param.shape}."
                )
                continue
            if _validating:  # load_state_dict's first pass only checks (see _load_checked)
                continue
            try:
                with no_grad():
                    if assign:
                        if isinstance(param, Parameter):
                            if not isinstance(value, Parameter):
                                value = Parameter(value, requires_grad=param.requires_grad)
                            else:
                                value.requires_grad_(param.requires_grad)
                        setattr(self, name, value)
                    else:
                        param.copy_(value)
            except Exception as ex:  # noqa: BLE001 - reported like PyTorch, with the cause's args
                error_msgs.append(
                    f'While copying the parameter named "{key}", whose dimensions in the model are {param.size()} '
                    f"and whose dimensions in the checkpoint are {value.size()}, an exception occurred : {ex.args}."
                )
        if strict:
            for key in state_dict:
                if key.startswith(prefix):
                    head = key[len(prefix):].split(".", 1)[0]
                    if head not in self._modules and head not in local_state:
                        unexpected_keys.append(key)

    def load_state_dict(self, state_dict: Mapping[str, Any], strict: bool = True,
                        assign: bool = False) -> _IncompatibleKeys:
        """Copy parameters and buffers from ``state_dict``; with ``strict``, keys must match exactly.

        Returns ``(missing_keys, unexpected_keys)``.
        """
        if not isinstance(state_dict, Mapping):
            raise TypeError(f"Expected state_dict to be dict-like, got {type(state_dict)}.")
        missing: list[str] = []
        unexpected: list[str] = []
        errors: list[str] = []
        metadata = getattr(state_dict, "_metadata", None)
        state = OrderedDict((k, _checkpoint_value(v)) for k, v in state_dict.items())

        def load(module: Module, local: Mapping[str, Any], prefix: str = "") -> None:
            local_metadata = {} if metadata is None else metadata.get(prefix[:-1], {})
            module._load_from_state_dict(local, prefix, local_metadata, True, missing, unexpected, errors, assign)
            for name, child in module._modules.items():
                if child is not None:
                    child_prefix = prefix + name + "."
                    load(child, {k: v for k, v in local.items() if k.startswith(child_prefix)}, child_prefix)

        _load_checked(load, self, state, strict, missing, unexpected, errors)
        if strict:
            if unexpected:
                names = ", ".join(f'"{k}"' for k in unexpected)
                errors.insert(0, f"Unexpected key(s) in state_dict: {names}. ")
            if missing:
                names = ", ".join(f'"{k}"' for k in missing)
                errors.insert(0, f"Missing key(s) in state_dict: {names}. ")
        if errors:
            raise RuntimeError("Error(s) in loading state_dict for {}:\n\t{}".format(type(self).__name__,
                                                                                      "\n\t".join(errors)))
        return _IncompatibleKeys(missing, unexpected)

    # -- hooks and calling ----------------------------------------------------------------------
    def register_forward_pre_hook(self, hook: Callable[..., Any], *, prepend: bool = False,
                                  with_kwargs: bool = False) -> RemovableHandle:
        """``hook(module, args)`` (or ``hook(module, args, kwargs)``) runs before ``forward``; it may
        return new args (or a ``(args, kwargs)`` pair)."""
        handle = RemovableHandle(self._forward_pre_hooks, self._forward_pre_hooks_with_kwargs)
        self._forward_pre_hooks[handle.id] = hook
        if with_kwargs:
            self._forward_pre_hooks_with_kwargs[handle.id] = True
        if prepend:
            self._forward_pre_hooks.move_to_end(handle.id, last=False)
        return handle

    def register_forward_hook(self, hook: Callable[..., Any], *, prepend: bool = False, with_kwargs: bool = False,
                              always_call: bool = False) -> RemovableHandle:
        """``hook(module, args, output)`` (or ``hook(module, args, kwargs, output)``) runs after
        ``forward``; it may return a new output."""
        handle = RemovableHandle(self._forward_hooks, self._forward_hooks_with_kwargs,
                                 self._forward_hooks_always_called)
        self._forward_hooks[handle.id] = hook
        if with_kwargs:
            self._forward_hooks_with_kwargs[handle.id] = True
        if always_call:
            self._forward_hooks_always_called[handle.id] = True
        if prepend:
            self._forward_hooks.move_to_end(handle.id, last=False)
        return handle

    def register_full_backward_hook(self, hook: Callable[..., Any], prepend: bool = False) -> RemovableHandle:
        """``hook(module, grad_input, grad_output)`` runs once the gradients of the module's
        positional inputs are computed; it may return new ``grad_input``. As in PyTorch, an
        entry is None for a non-tensor argument (all are, when no input requires grad: the hook
        then runs from the outputs' side) and zeros for a tensor that does not require grad.

        >>> import retrograd as rg
        >>> lin = rg.nn.Linear(2, 1)
        >>> h = lin.register_full_backward_hook(lambda m, gi, go: print(gi[0].shape, go[0].shape))
        >>> lin(rg.ones(3, 2, requires_grad=True)).sum().backward()
        torch.Size([3, 2]) torch.Size([3, 1])
        """
        if self._is_full_backward_hook is False:
            raise RuntimeError(MIXED_HOOKS_ERROR)
        object.__setattr__(self, "_is_full_backward_hook", True)
        return self._add_backward_hook("_backward_hooks", hook, prepend)

    def register_full_backward_pre_hook(self, hook: Callable[..., Any], prepend: bool = False) -> RemovableHandle:
        """``hook(module, grad_output)`` runs once the gradients of the module's outputs are
        computed, before those of its inputs; it may return new ``grad_output``.

        >>> import retrograd as rg
        >>> lin = rg.nn.Linear(2, 1)
        >>> h = lin.register_full_backward_pre_hook(lambda m, go: (go[0] * 0,))
        >>> lin(rg.ones(3, 2, requires_grad=True)).sum().backward(); lin.weight.grad.tolist()
        [[0.0, 0.0]]
        """
        return self._add_backward_hook("_backward_pre_hooks", hook, prepend)

    def register_backward_hook(self, hook: Callable[..., Any]) -> RemovableHandle:
        """Deprecated (use ``register_full_backward_hook``): ``hook(module, grad_input,
        grad_output)`` on the node that made the module's output, which may not cover all of
        the module (PyTorch warns then).

        >>> import retrograd as rg
        >>> lin = rg.nn.Linear(2, 1)
        >>> h = lin.register_backward_hook(lambda m, gi, go: None)
        >>> lin.register_full_backward_hook(lambda m, gi, go: None)
        Traceback (most recent call last):
        ...
        RuntimeError: Cannot use both regular backward hooks and full backward hooks on a single Module. Please use only one of them.
        """
        if self._is_full_backward_hook is True:
            raise RuntimeError(MIXED_HOOKS_ERROR)
        object.__setattr__(self, "_is_full_backward_hook", False)
        return self._add_backward_hook("_backward_hooks", hook, False)

    def _add_backward_hook(self, kind: str, hook: Callable[..., Any], prepend: bool) -> RemovableHandle:
        hooks = self.__dict__.get(kind)
        if hooks is None:
            hooks = OrderedDict()
            object.__setattr__(self, kind, hooks)
        handle = RemovableHandle(hooks)
        hooks[handle.id] = hook
        if prepend:
            hooks.move_to_end(handle.id, last=False)
        return handle

    def _backward_hooks_for_call(self) -> tuple[BackwardHook | None, list[Callable[..., Any]]]:
        """This call's ``BackwardHook`` (full hooks and pre-hooks, global ones first) and legacy hooks."""
        full: list[Callable[..., Any]] = []
        legacy: list[Callable[..., Any]] = []
        if _global_backward_hooks:
            (full if _global_is_full_backward_hook else legacy).extend(_global_backward_hooks.values())
        if self._backward_hooks:
            (full if self._is_full_backward_hook else legacy).extend(self._backward_hooks.values())
        pre = [*_global_backward_pre_hooks.values(), *self._backward_pre_hooks.values()]
        return (BackwardHook(self, full, pre) if full or pre else None), legacy

    def _call_impl(self, *args: Any, **kwargs: Any) -> Any:
        backward_hooks = (self._backward_hooks or self._backward_pre_hooks or _global_backward_hooks
                          or _global_backward_pre_hooks)
        if not (self._forward_hooks or self._forward_pre_hooks or backward_hooks):
            return self.forward(*args, **kwargs)
        for hook_id, hook in list(self._forward_pre_hooks.items()):
            if hook_id in self._forward_pre_hooks_with_kwargs:
                res = hook(self, args, kwargs)
                if res is not None:
                    args, kwargs = _new_args_kwargs(res, "forward pre-hook")
            else:
                res = hook(self, args)
                if res is not None:
                    args = res if isinstance(res, tuple) else (res,)
        bw_hook, legacy_hooks = self._backward_hooks_for_call() if backward_hooks else (None, [])
        if bw_hook is not None:
            args = bw_hook.setup_input_hook(args)
        called: set[int] = set()
        try:
            result = self.forward(*args, **kwargs)
        except Exception:
            for hook_id, hook in list(self._forward_hooks.items()):
                if hook_id in self._forward_hooks_always_called and hook_id not in called:
                    try:
                        if hook_id in self._forward_hooks_with_kwargs:
                            hook(self, args, kwargs, None)
                        else:
                            hook(self, args, None)
                    except Exception:  # noqa: BLE001, S110 - the forward's error is the one to report
                        pass
            raise
        for hook_id, hook in list(self._forward_hooks.items()):
            called.add(hook_id)
            if hook_id in self._forward_hooks_with_kwargs:
                res = hook(self, args, kwargs, result)
            else:
                res = hook(self, args, result)
            if res is not None:
                result = res
        if bw_hook is not None:
            if not isinstance(result, (Tensor, tuple)):
                warnings.warn("For backward hooks to be called, module output should be a Tensor or a tuple of "
                              f"Tensors but received {type(result)}", stacklevel=2)
            result = bw_hook.setup_output_hook(result)
        if legacy_hooks:
            register_legacy_hooks(self, legacy_hooks, args, result)
        return result

    __call__: Callable[..., Any] = _call_impl

    # -- repr -----------------------------------------------------------------------------------
    def _get_name(self) -> str:
        return type(self).__name__

    def extra_repr(self) -> str:
        """Extra text inside this module's ``repr`` (override in layers)."""
        return ""

    def __repr__(self) -> str:
        extra = self.extra_repr()
        extra_lines = extra.split("\n") if extra else []
        child_lines = [f"({key}): " + _addindent(repr(module), 2) for key, module in self._modules.items()]
        lines = extra_lines + child_lines
        text = self._get_name() + "("
        if lines:
            if len(extra_lines) == 1 and not child_lines:
                text += extra_lines[0]
            else:
                text += "\n  " + "\n  ".join(lines) + "\n"
        return text + ")"


def register_module_full_backward_hook(hook: Callable[..., Any]) -> RemovableHandle:
    """``Module.register_full_backward_hook`` for every module (these run first).

    >>> import retrograd as rg
    >>> h = rg.nn.modules.module.register_module_full_backward_hook(lambda m, gi, go: print(type(m).__name__))
    >>> rg.nn.Tanh()(rg.ones(1, requires_grad=True)).sum().backward()
    Tanh
    >>> h.remove(); rg.nn.modules.module._global_is_full_backward_hook = None  # (removing keeps the kind)
    """
    global _global_is_full_backward_hook
    if _global_is_full_backward_hook is False:
        raise RuntimeError(MIXED_GLOBAL_HOOKS_ERROR)
    _global_is_full_backward_hook = True
    handle = RemovableHandle(_global_backward_hooks)
    _global_backward_hooks[handle.id] = hook
    return handle


def register_module_full_backward_pre_hook(hook: Callable[..., Any]) -> RemovableHandle:
    """``Module.register_full_backward_pre_hook`` for every module (these run first).

    >>> import retrograd as rg
    >>> h = rg.nn.modules.module.register_module_full_backward_pre_hook(lambda m, go: print(go[0].tolist()))
    >>> rg.nn.Tanh()(rg.ones(1, requires_grad=True)).sum().backward()
    [1.0]
    >>> h.remove()
    """
    handle = RemovableHandle(_global_backward_pre_hooks)
    _global_backward_pre_hooks[handle.id] = hook
    return handle


def register_module_backward_hook(hook: Callable[..., Any]) -> RemovableHandle:
    """Deprecated ``Module.register_backward_hook`` for every module.

    >>> import retrograd as rg
    >>> h = rg.nn.modules.module.register_module_backward_hook(lambda m, gi, go: None)
    >>> h.remove(); rg.nn.modules.module._global_is_full_backward_hook = None  # (removing keeps the kind)
    """
    global _global_is_full_backward_hook
    if _global_is_full_backward_hook is True:
        raise RuntimeError(MIXED_GLOBAL_HOOKS_ERROR)
    _global_is_full_backward_hook = False
    handle = RemovableHandle(_global_backward_hooks)
    _global_backward_hooks[handle.id] = hook
    return handle


def _new_args_kwargs(result: Any, hook_name: object) -> tuple[Any, Any]:
    """What a pre-hook that was given (args, kwargs) returned instead of None: the new (args, kwargs)
    pair (for a module's forward and an optimizer's step)."""
    if isinstance(result, tuple) and len(result) == 2:
        return result[0], result[1]
    raise RuntimeError(f"{hook_name} must return None or a tuple of (new_args, new_kwargs), but got {result}.")
