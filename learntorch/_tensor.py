"""``Tensor``: an n-dimensional array that can remember how it was made.

Storage, shape and strides are those of a numpy array (``_data``): views
(``view``, ``transpose``, slicing, ``expand``) are numpy views of the same
memory, so ``x.stride()``, ``x.storage_offset()`` and ``x.is_contiguous()`` are
read straight off it.  Views share one *version counter* with their base: every
in-place change bumps it, which is how backward notices that a tensor it saved
was overwritten.

Autograd state: ``requires_grad``, ``grad``, ``grad_fn`` (the ``BackwardNode``
that produced this tensor, None for leaves) and ``is_leaf``.

The methods below are thin: each forwards to a function in ``learntorch.ops``,
where the differentiable ``Function`` with its forward and backward lives.
"""
import numpy as np

from . import _dtypes
from ._device import CPU, to_device
from ._size import Size as _Size
from .autograd import engine, grad_mode
from .autograd.function import AccumulateGrad, RemovableHandle, _add_prehook

# where a new tensor gets its version counter (an inference tensor's is marked: grad_mode)
_grad_state = grad_mode._state

_NUMPY_TO_DTYPE = _dtypes._NUMPY_TO_DTYPE
_new_size = tuple.__new__
_TYPE_NAMES = {"float32": "FloatTensor", "float64": "DoubleTensor", "float16": "HalfTensor",
               "bfloat16": "BFloat16Tensor",
               "int64": "LongTensor", "int32": "IntTensor", "int16": "ShortTensor",
               "int8": "CharTensor", "uint8": "ByteTensor", "bool": "BoolTensor"}


class Tensor:
    # Every tensor sets the slotted attributes; the rarer ones below are class-level
    # defaults that an instance overrides only when needed (creating a tensor is the
    # hot path of every op, so it should set as little as possible).
    __slots__ = ("_data", "_dtype", "_device", "_requires_grad", "_grad_fn", "_version_counter",
                 "__weakref__", "__dict__")
    _grad = None
    _output_nr = 0
    _base = None             # the tensor whose memory a view looks at
    _accumulate_node = None  # the AccumulateGrad node of a leaf, made on first use
    _retains_grad = False
    _post_accumulate_grad_hooks = None  # register_post_accumulate_grad_hook's list, on first use

    # numpy: let our reflected operators win (np.float32(2) * t is a Tensor)
    __array_ufunc__ = None

    # ``Tensor(data)`` and ``Tensor(2, 3)``, torch's legacy constructor, make tensors from
    # Python data: that is the factories' job, which sit above this class, so its
    # ``__init__`` is attached with the other methods (``_tensor_methods.legacy_init``).

    @staticmethod
    def _wrap(array, requires_grad=False):
        """The one place a tensor is made: a new Tensor around ``array`` (no copy).

        A staticmethod, so ``some_tensor._wrap(a)`` makes a plain Tensor even when
        ``some_tensor`` is a Parameter (autograd makes gradients this way: it sits
        below this class and does not import it).
        """
        t = Tensor.__new__(Tensor)
        _init_from_array(t, array)
        return t.requires_grad_(True) if requires_grad else t

    def _view_of(self, array):
        """A tensor over ``array``, which is a numpy view of this tensor's memory."""
        t = Tensor._wrap(array)
        t._version_counter = self._version_counter
        t._base = self if self._base is None else self._base
        return t

    # ------------------------------------------------------------------ metadata
    @property
    def shape(self):
        return _new_size(_Size, self._data.shape)  # numpy's shape is valid: skip Size's checks

    def size(self, dim=None):
        if dim is None:
            return self.shape
        return self._data.shape[self._wrap_dim(dim)]

    @property
    def dtype(self):
        return self._dtype

    @property
    def device(self):
        return self._device

    @property
    def is_cuda(self):
        return self._device.type == "cuda"

    @property
    def ndim(self):
        return self._data.ndim

    def dim(self):
        return self._data.ndim

    ndimension = dim

    def numel(self):
        return self._data.size

    nelement = numel

    def element_size(self):
        return self._dtype.itemsize

    def stride(self, dim=None):
        item = self._data.itemsize
        if self._data.size == 0 and not any(self._data.strides):
            # numpy gives a new empty array zero strides; torch's are row-major (views of
            # empty tensors keep the strides their view op computed)
            step, backwards = 1, []
            for n in reversed(self._data.shape):
                backwards.append(step)
                step *= max(n, 1)
            strides = tuple(reversed(backwards))
        else:
            strides = tuple(s // item for s in self._data.strides)
        if dim is None:
            return strides
        return strides[self._wrap_dim(dim)]

    def storage_offset(self):
        """Elements between the start of the storage and this tensor's first element."""
        if self._device is not CPU:
            return self._data._offset
        root = self._data if self._data.base is None else _root_array(self._data)
        start = self._data.__array_interface__["data"][0]
        base = root.__array_interface__["data"][0]
        return (start - base) // self._data.itemsize

    def untyped_storage(self):
        """The bytes that this tensor and all its views read (an ``UntypedStorage``)."""
        from ._storage import UntypedStorage, bytes_of
        if self._device is not CPU:
            raise NotImplementedError(
                f"untyped_storage() of a {self._device} tensor is not supported: copy it to "
                "the host first with .cpu()")
        return UntypedStorage(bytes_of(_root_array(self._data)), self._device)

    def data_ptr(self):
        if self._device is not CPU:
            return self._data.data_ptr()
        return self._data.__array_interface__["data"][0]

    def is_contiguous(self, memory_format=None):
        return bool(self._data.flags["C_CONTIGUOUS"])

    def is_floating_point(self):
        return self._dtype.is_floating_point

    def is_complex(self):
        return False

    def get_device(self):
        return -1 if self._device.type == "cpu" else (self._device.index or 0)

    def _type_name(self):
        prefix = "torch.cuda." if self.is_cuda else "torch."
        return prefix + _TYPE_NAMES[self._dtype.name]

    def type(self, dtype=None, non_blocking=False):
        """The type name (``'torch.FloatTensor'``), or a copy converted to ``dtype`` -- a dtype
        or a type name such as ``'torch.FloatTensor'`` / ``'torch.cuda.LongTensor'``."""
        if dtype is None:
            return self._type_name()
        if isinstance(dtype, str) and dtype.endswith("Tensor"):
            names = {v: k for k, v in _TYPE_NAMES.items()}
            cuda = dtype.startswith("torch.cuda.")
            short = dtype.rsplit(".", 1)[-1]
            if short not in names or not dtype.startswith("torch."):
                raise ValueError(f"invalid type: '{dtype}' (expected e.g. 'torch.FloatTensor' "
                                 f"or 'torch.cuda.LongTensor')")
            return self.to(device="cuda" if cuda else "cpu", dtype=_dtypes.to_dtype(names[short]))
        return self.to(dtype)

    def _wrap_dims(self, dim):
        """``dim`` (None for all, an int, or a sequence of ints) as a sorted tuple of
        non-negative dims, with torch's errors (``_wrap_dim`` checks each one)."""
        if dim is None:
            return tuple(range(self._data.ndim))
        dims = [self._wrap_dim(d) for d in ((dim,) if isinstance(dim, (int, np.integer)) else dim)]
        if len(set(dims)) != len(dims):
            repeated = next(d for d in dims if dims.count(d) > 1)
            raise RuntimeError(f"dim {repeated} appears multiple times in the list of dims")
        return tuple(sorted(dims))

    def _wrap_dim(self, dim, ndim=None):
        """One dim as a non-negative index (``-1`` is the last), or torch's error."""
        ndim = self._data.ndim if ndim is None else ndim
        lo, hi = (-1, 0) if ndim == 0 else (-ndim, ndim - 1)
        if not isinstance(dim, (int, np.integer)):
            raise TypeError(f"dim must be an int or a tuple of ints, got {type(dim).__name__}")
        if dim < lo or dim > hi:
            raise IndexError(
                f"Dimension out of range (expected to be in range of [{lo}, {hi}], but got {dim})"
                f" for a tensor of shape {list(self._data.shape)}")
        return dim + ndim if dim < 0 else (0 if ndim == 0 else dim)

    # ------------------------------------------------------------------ autograd state
    @property
    def requires_grad(self):
        return self._requires_grad

    @requires_grad.setter
    def requires_grad(self, value):
        if self._grad_fn is not None:  # even ``= True``: only requires_grad_() tolerates that
            raise RuntimeError(
                "you can only change requires_grad flags of leaf variables. If you want to use a "
                "computed variable in a subgraph that doesn't require differentiation use "
                "var_no_grad = var.detach().")
        self.requires_grad_(value)

    def requires_grad_(self, requires_grad=True):
        if self._grad_fn is not None:
            if requires_grad:
                return self
            raise RuntimeError(
                "you can only change requires_grad flags of leaf variables. If you want to use a "
                "computed variable in a subgraph that doesn't require differentiation use "
                "var_no_grad = var.detach().")
        if requires_grad and not self._dtype.is_floating_point:
            raise RuntimeError(
                f"only Tensors of floating point and complex dtype can require gradients, but this "
                f"tensor has dtype {self._dtype}. Convert it first, e.g. x.float().requires_grad_()")
        if requires_grad and self.is_inference() and not grad_mode._state.inference:
            raise RuntimeError(
                "Setting requires_grad=True on inference tensor outside InferenceMode is not "
                "allowed. Make it under no_grad() instead of inference_mode(), or use a copy: "
                "x.clone().requires_grad_()")
        self._requires_grad = bool(requires_grad)
        return self

    def is_inference(self):
        """Made under ``inference_mode`` (or a view of such a tensor)."""
        return self._version_counter.__class__ is grad_mode.InferenceVersionCounter

    @property
    def grad(self):
        if self._grad_fn is not None and not self._retains_grad and self._grad is None:
            import warnings
            warnings.warn(
                "The .grad attribute of a Tensor that is not a leaf Tensor is being accessed. Its "
                ".grad attribute won't be populated during autograd.backward(). If you indeed want "
                "the .grad field to be populated for a non-leaf Tensor, use .retain_grad() on the "
                "non-leaf Tensor.", UserWarning, stacklevel=2)
        return self._grad

    @grad.setter
    def grad(self, value):
        if value is not None:
            if not isinstance(value, Tensor):
                raise TypeError(f"assigned grad expected to be a Tensor or None but got grad of "
                                f"type {type(value).__name__}")
            if value.shape != self.shape:
                raise RuntimeError(
                    f"attempting to assign a gradient of size '{list(value.shape)}' to a tensor "
                    f"of size '{list(self.shape)}'. Please ensure that the gradient and the "
                    "tensor are the same size")
            if value.dtype is not self._dtype:
                raise RuntimeError(
                    f"attempting to assign a gradient with dtype {value.dtype} to a tensor with "
                    f"dtype {self._dtype}. The gradient must match the tensor's dtype: convert "
                    f"it first, e.g. grad.to({self._dtype})")
        self._grad = value

    @property
    def grad_fn(self):
        return self._grad_fn

    @property
    def is_leaf(self):
        return self._grad_fn is None

    @property
    def output_nr(self):
        return self._output_nr

    @property
    def _version(self):
        return self._version_counter[0]

    @property
    def retains_grad(self):
        return self._retains_grad

    def _edge(self):
        """(node, output index) that gradients for this tensor flow into."""
        if self._grad_fn is not None:
            return (self._grad_fn, self._output_nr)
        if self._accumulate_node is None:  # a leaf: its AccumulateGrad node, made on first use
            self._accumulate_node = AccumulateGrad(self)
        return (self._accumulate_node, 0)

    def backward(self, gradient=None, retain_graph=None, create_graph=False, inputs=None):
        """Compute d(self)/d(leaf) for every leaf that requires grad, into ``leaf.grad``."""
        engine.backward(self, gradient, retain_graph, create_graph, inputs)

    def register_hook(self, hook):
        """Call ``hook(grad)`` when the gradient for this tensor is computed; may return a new grad."""
        if not self._requires_grad:
            raise RuntimeError("cannot register a hook on a tensor that doesn't require gradient")
        # the hook sits on the node the tensor's gradient flows into: its grad_fn for a
        # computed tensor, the AccumulateGrad node for a leaf (so autograd.grad sees it too)
        node, output_nr = self._edge()
        return _add_prehook(node, output_nr, hook)

    def register_post_accumulate_grad_hook(self, hook):
        """Call ``hook(tensor)`` after backward has accumulated this leaf's gradient into
        ``.grad`` (once per backward, with the sum over every use); returns a handle whose
        ``remove()`` unregisters it.  DistributedDataParallel averages gradients this way."""
        if self._grad_fn is not None:
            raise RuntimeError("post accumulate grad hooks cannot be registered on non-leaf "
                               "tensors: register it on the leaf (a parameter) instead")
        if not self._requires_grad:
            raise RuntimeError("cannot register a hook on a tensor that doesn't require gradient")
        if self._post_accumulate_grad_hooks is None:
            self._post_accumulate_grad_hooks = []
        self._post_accumulate_grad_hooks.append(hook)
        return RemovableHandle(self._post_accumulate_grad_hooks, hook)

    def retain_grad(self):
        """Keep ``.grad`` for this non-leaf tensor too (leaves always get it)."""
        if not self._requires_grad:
            raise RuntimeError("can't retain_grad on Tensor that has requires_grad=False")
        if self._grad_fn is None or self._retains_grad:
            return
        self._retains_grad = True

        def store(grad, tensor=self):
            if tensor._grad is None:
                tensor._grad = grad if grad_mode.is_grad_enabled() else grad.detach().clone()
            else:
                tensor._grad = tensor._grad + grad
        store.retains_grad = True  # always runs last, after the hooks the user registers
        _add_prehook(self._grad_fn, self._output_nr, store)

    def detach(self):
        """The same data, cut from the graph (shares memory and version counter)."""
        t = self._view_of(self._data)
        t._base = self._base
        return t

    def detach_(self):
        if self._base is not None and self._grad_fn is not None:
            raise RuntimeError("Can't detach views in-place. Use detach() instead.")
        self._grad_fn = None
        self._output_nr = 0
        self._requires_grad = False
        return self

    @property
    def data(self):
        """The same memory, outside autograd: no graph and its own version counter.

        Changes made through ``.data`` are invisible to autograd (that is what
        makes it dangerous; prefer ``detach()``, which shares the version counter
        so a modified saved tensor is still reported at backward).
        """
        t = self.detach()
        t._version_counter = [0]
        return t

    @data.setter
    def data(self, value):
        if not isinstance(value, Tensor):
            raise TypeError(f"data must be a Tensor, got {type(value).__name__}")
        self._data = value._data
        self._dtype = value._dtype

    # ------------------------------------------------------------------ conversions
    def item(self):
        if self._data.size != 1:
            raise RuntimeError(
                f"a Tensor with {self._data.size} elements cannot be converted to Scalar; "
                f"item() needs exactly one element (shape {list(self.shape)})")
        return self._data.reshape(()).item()

    def tolist(self):
        return self._data.tolist()

    def numpy(self, force=False):
        if self._device is not CPU:
            _refuse_numpy(self)
        if self._requires_grad and not force:
            raise RuntimeError("Can't call numpy() on Tensor that requires grad. "
                               "Use tensor.detach().numpy() instead.")
        return self._data

    def __array__(self, dtype=None, copy=None):
        if self._device is not CPU:
            _refuse_numpy(self)
        if dtype is None:
            return self._data
        return self._data.astype(dtype)

    def __float__(self):
        return float(self._scalar_for("float"))

    def __int__(self):
        return int(self._scalar_for("int"))

    def _scalar_for(self, what):
        if self._data.size != 1:
            raise ValueError(f"only one element tensors can be converted to Python scalars "
                             f"({what}() of a tensor of shape {list(self.shape)}); reduce it "
                             "first (e.g. .sum()) or index one element")
        return self._data.reshape(()).item()

    def __index__(self):
        if self._dtype.is_floating_point or self._data.size != 1:
            raise TypeError("only integer tensors of a single element can be converted to an index")
        return int(self.item())

    def __bool__(self):
        if self._data.size != 1:
            many = "no values" if self._data.size == 0 else "more than one value"
            raise RuntimeError(
                f"Boolean value of Tensor with {many} is ambiguous (shape "
                f"{list(self.shape)}); use .any() or .all()")
        return bool(self.item())

    def __len__(self):
        if self._data.ndim == 0:
            raise TypeError("len() of a 0-d tensor")
        return self._data.shape[0]

    def __iter__(self):
        if self._data.ndim == 0:
            raise TypeError("iteration over a 0-d tensor")
        return iter(self.unbind(0))

    def __hash__(self):
        return id(self)

    def __repr__(self):
        from ._tensor_repr import tensor_repr
        return tensor_repr(self)

    def __str__(self):
        return repr(self)  # the subclass's repr (Parameter adds "Parameter containing:")

    def __format__(self, spec):
        if self._data.ndim == 0:
            return format(self.item(), spec)
        if spec:  # a format spec applies to one number, as in torch
            raise TypeError(f"unsupported format string passed to Tensor.__format__ ({spec!r} "
                            f"for a tensor of shape {list(self.shape)}); format one element, "
                            "e.g. f'{t[0].item():.2f}'")
        return repr(self)

    def __deepcopy__(self, memo):
        if not self.is_leaf:
            raise RuntimeError("Only Tensors created explicitly by the user (graph leaves) support "
                               "the deepcopy protocol at the moment")
        t = Tensor._wrap(self._data.copy(), self._requires_grad)
        if self._grad is not None:
            t._grad = Tensor._wrap(self._grad._data.copy())
        memo[id(self)] = t
        return t

    def __reduce_ex__(self, protocol):
        # plain pickling (used by DataLoader workers) carries data, not the graph
        return (_rebuild, (self._data, self._requires_grad))


def _refuse_numpy(t):
    raise TypeError(f"can't convert {t._device} device type tensor to numpy. Use Tensor.cpu() "
                    "to copy the tensor to host memory first.")


def _rebuild(array, requires_grad):
    return Tensor._wrap(array, requires_grad)


def _init_from_array(t, array):
    """Fill in a new tensor ``t`` around ``array``: data, dtype, device, no history."""
    if array.__class__ is not np.ndarray and not hasattr(array, "tensor_device"):
        # numpy ufuncs return scalars for 0-d inputs; a tensor always holds a real
        # (writable, viewable) array, or in-place ops on 0-d results would fail
        array = np.asarray(array)
    t._data = array
    t._dtype = _NUMPY_TO_DTYPE.get(array.dtype) or _dtypes.from_numpy_dtype(array.dtype)
    # a device array (learntorch.backends.cuda.CudaArray) says where it lives
    t._device = CPU if array.__class__ is np.ndarray else array.tensor_device
    # no history yet; the version counter is shared with its views, in-place ops count up
    t._requires_grad, t._grad_fn, t._version_counter = False, None, _grad_state.new_counter()


def _root_array(a):
    while a.base is not None and isinstance(a.base, np.ndarray):
        a = a.base
    return a
