"""``Parameter``: a tensor that a Module registers as something to train.

Assigning a Parameter to a Module attribute (``self.weight = Parameter(...)``)
is what puts it into ``module.parameters()``.  It is an ordinary leaf tensor
with ``requires_grad=True`` by default, sharing memory with the data it wraps.
"""
from .._tensor import Tensor, _init_from_array


class Parameter(Tensor):
    def __new__(cls, data=None, requires_grad=True):
        if data is None:
            from ..factories import empty
            data = empty(0)
        if not isinstance(data, Tensor):
            raise TypeError(f"Parameter expects a Tensor, got {type(data).__name__}; wrap numbers "
                            "with learntorch.tensor(...)")
        p = object.__new__(cls)
        _init_from_array(p, data._data)
        p._version_counter = data._version_counter  # the same memory, the same version
        if requires_grad:
            p.requires_grad_(True)
        return p

    def __init__(self, data=None, requires_grad=True):
        pass  # everything happens in __new__

    def __repr__(self):
        return "Parameter containing:\n" + super().__repr__()

    def __deepcopy__(self, memo):
        if id(self) in memo:
            return memo[id(self)]
        p = Parameter(Tensor._wrap(self._data.copy()), self.requires_grad)
        if self._grad is not None:
            p._grad = Tensor._wrap(self._grad._data.copy())
        memo[id(self)] = p
        return p

    def __reduce_ex__(self, protocol):
        return (_rebuild_parameter, (self._data, self.requires_grad))


def _rebuild_parameter(array, requires_grad):
    return Parameter(Tensor._wrap(array), requires_grad)


class Buffer(Tensor):
    """Marks a tensor to be registered as a buffer when assigned to a Module attribute."""

    def __new__(cls, data=None, *, persistent=True):
        from ..factories import empty
        data = empty(0) if data is None else data
        b = object.__new__(cls)
        _init_from_array(b, data._data)
        b.persistent = persistent
        return b

    def __init__(self, data=None, *, persistent=True):
        pass
