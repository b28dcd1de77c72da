"""Compile every CUDA kernel of ``learntorch/backends/cuda`` to PTX for an H200 (sm_90), no GPU.

Numba's CUDA simulator runs kernels as plain Python, so it accepts code that
numba-cuda's real compiler rejects: Python features device code lacks, an
int and a float that cannot be unified, a closure the typer cannot see
through.  ``numba.cuda.compile_ptx`` runs that real compiler (type
inference, then NVVM, with NVRTC for the parts written in C++) and needs no
GPU, only the toolkit's libraries (pip ``cuda-toolkit[nvrtc,nvvm]``).  So
this script types and compiles each kernel with the argument types its
launch site passes, exactly as a first launch on a GPU would.

It must run with the simulator OFF (``NUMBA_ENABLE_CUDASIM=0``), in a process
of its own: the CUDA tests' conftest turns the simulator on for theirs.
``test_cuda_kernels_compile_to_ptx.py`` runs it and reads the JSON it prints:

    {"toolchain_missing": null or why,
     "control_error": the error for a kernel that must not compile,
     "results": [{"module", "kernel", "signature", "error"}, ...],
     "unlisted": ["a kernel without signatures here, and what to do", ...]}

**Where the signatures come from.**  Each ``*_signatures`` function below
mirrors one launch site: the flat device buffers (``CudaArray._flat()`` and
``._buffer`` are 1-D C-contiguous device arrays), Python ints (int64),
floats (float64) and bools, numpy scalars (their own dtype) and tuples of
ints (shapes and strides, ``UniTuple(int64, ndim)``).  Kernels are found by
reading the backend's source (every function decorated ``@cuda.jit``, at
module level or inside a kernel factory) and by walking module attributes
for CUDA dispatchers; one with no signature here is reported, so that a new
kernel cannot slip by untested.
"""
import ast
import inspect
import itertools
import json
import os
import pkgutil
import sys
import types as pytypes

import numba  # numba's types only: numba.cuda, which reads NUMBA_ENABLE_CUDASIM, comes later
import numpy as np
from numba import types

# the dtypes a cuda tensor can have (learntorch's float16 / float32 / float64 / int64 / bool)
DTYPES = [np.dtype(t) for t in (np.bool_, np.int64, np.float16, np.float32, np.float64)]
FLOATS = [np.dtype(t) for t in (np.float16, np.float32, np.float64)]
SM_90 = (9, 0)  # the H200's compute capability
ELEMENT_FUNCTIONS = set()  # names of the functions compiled into elementwise kernels


def toolchain_missing():
    """Why NVRTC/NVVM cannot be loaded here (None when they can)."""
    try:
        from cuda.pathfinder import load_nvidia_dynamic_lib
        for lib in ("nvrtc", "nvvm"):
            load_nvidia_dynamic_lib(lib)
    except Exception as error:  # ImportError, DynamicLibNotFoundError, ...
        return f"{type(error).__name__}: {error}"
    return None


def pretend_sm_90():
    """Let kernels call ``cuda.jit(device=True)`` functions without a GPU.

    Typing a call to a device function compiles that function for "the
    current device", which asks the CUDA driver for its compute capability.
    There is no driver here, so the dispatchers are told the device is an
    sm_90 one (``compile_ptx`` itself takes ``cc=`` as an argument).
    """
    import numba.cuda.dispatcher as dispatcher
    dispatcher.get_current_device = lambda: pytypes.SimpleNamespace(compute_capability=SM_90)


def nvvm_errors_with_log():
    """Make NVVM's verifier errors carry its log (which line of the IR it rejects, and why)."""
    from numba.cuda.cudadrv import nvvm
    verify = nvvm.CompilationUnit.verify

    def verify_with_log(unit):
        try:
            verify(unit)
        except Exception as error:
            raise type(error)(f"{error}\n{unit.get_log()}") from None

    nvvm.CompilationUnit.verify = verify_with_log


# ---------------------------------------------------------------- numba types of launch arguments
INT, FLOAT, BOOL = types.int64, types.float64, types.boolean  # Python int, float and bool


def array(dtype):
    """A flat device buffer of ``dtype`` (``CudaArray._flat()`` / ``._buffer``)."""
    return types.Array(numba.from_dtype(np.dtype(dtype)), 1, "C")


def scalar(dtype):
    """A numpy scalar of ``dtype`` passed to a kernel."""
    return numba.from_dtype(np.dtype(dtype))


def ints(ndim):
    """A shape or strides tuple of ``ndim`` Python ints."""
    return types.UniTuple(types.int64, ndim)


# ---------------------------------------------------------------- elementwise.py
def _elementwise_signature(out_dtype, operands, ndim=2):
    """``elementwise.run``'s launch: (n, shape, out, off, strides) then per operand the same.

    ``operands``: (dtype, is_number) pairs; a number is passed as a numpy
    scalar of the computation dtype with offset 0 and zero strides.
    """
    sig = [INT, ints(ndim), array(out_dtype), INT, ints(ndim)]
    for dtype, is_number in operands:
        sig += [scalar(dtype) if is_number else array(dtype), INT, ints(ndim)]
    return tuple(sig)


def _ufunc_dtypes(name, nin):
    """(operand dtype, numpy's result dtype) for each engine dtype the ufunc takes alone."""
    from learntorch.backends.cuda import numpy_api
    for dtype in DTYPES:
        if dtype == np.bool_ and name in numpy_api._LOGICAL_ON_BOOL:
            continue  # bools are sent to the logical_* function instead
        try:
            out, _ = numpy_api._result_dtype(getattr(np, name), (dtype,) * nin, None)
        except TypeError:  # numpy has no loop for this dtype: the backend never launches it
            continue
        yield dtype, out


def elementwise_signatures():
    """Every ufunc on every dtype numpy accepts, numbers as operands, casts, where, fused ops."""
    from learntorch.backends.cuda import backend, elementwise, numpy_api
    jobs = []  # (fn name, kernel, signature)

    def add(name, fn, operands, out_dtype, ndim=2):
        mask = tuple(is_number for _, is_number in operands)
        kernel = elementwise.kernel_for(name, fn, mask)
        ELEMENT_FUNCTIONS.add(fn.__name__)
        jobs.append((name, kernel, _elementwise_signature(out_dtype, operands, ndim)))

    for name, fn in elementwise.UFUNCS.items():
        nin = len(inspect.signature(fn).parameters)
        for dtype, out in _ufunc_dtypes(name, nin):
            add(name, fn, [(dtype, False)] * nin, out)
            if nin == 2 and dtype in (np.int64, np.float32):  # x + 1, 2 * x, idx * stride
                add(name, fn, [(dtype, False), (dtype, True)], out)
                add(name, fn, [(dtype, True), (dtype, False)], out)
    # mixed dtypes: a mask times a float (relu's backward), a float with an index array
    for name in ("multiply", "add", "subtract", "divide", "maximum"):
        fn = elementwise.UFUNCS[name]
        for a, b in [(np.float32, np.bool_), (np.bool_, np.float32), (np.float32, np.int64),
                     (np.float64, np.float32)]:
            out, _ = numpy_api._result_dtype(getattr(np, name), (np.dtype(a), np.dtype(b)), None)
            add(name, fn, [(a, False), (b, False)], out)
    # dtype casts and copies (astype, copyto, contiguous copies): positive from any dtype to
    # any, except that a cast to bool is x != 0; and fill(number) is positive of a number
    for src, dst in itertools.product(DTYPES, DTYPES):
        if dst == np.bool_ and src != np.bool_:
            add("not_equal", elementwise.UFUNCS["not_equal"], [(src, False), (src, True)], dst)
        else:
            add("positive", elementwise.UFUNCS["positive"], [(src, False)], dst)
    for dtype in DTYPES:
        add("positive", elementwise.UFUNCS["positive"], [(dtype, True)], dtype)
    # a 0-d array is walked as shape (1,); views up to 4-D (NCHW)
    for ndim in (1, 3, 4):
        add("add", elementwise.UFUNCS["add"], [(np.float32, False)] * 2, np.float32, ndim)
    # np.where(condition, x, y), with a number for x or y (np.where(mask, x, 0.0))
    for dtype in DTYPES:
        for mask in [(False, False), (False, True), (True, False)]:
            add("where", numpy_api._where_element,
                [(np.bool_, False), (dtype, mask[0]), (dtype, mask[1])], dtype)
    # the fused activations of CudaBackend
    for dtype in FLOATS:
        add("sigmoid", backend.sigmoid, [(dtype, False)], dtype)
        add("gelu", backend.gelu, [(dtype, False)], dtype)
        add("gelu_backward", backend.gelu_backward, [(dtype, False)] * 2, dtype)
    return jobs


# ---------------------------------------------------------------- reduction.py
def reduction_signatures():
    """sum/prod/max/min and argmax/argmin rows, both layouts, for each dtype they meet."""
    from learntorch.backends.cuda import reduction
    jobs = []
    for op in ("sum", "prod", "max", "min"):
        probe = getattr(np, op)
        for dtype in DTYPES:
            # sum/prod accumulate in numpy's result dtype (bool -> int64); rows are cast first
            acc = probe(np.zeros(1, dtype)).dtype if op in ("sum", "prod") else dtype
            serial = reduction._serial_kernel(op, acc)
            jobs.append((f"{op} {acc}", serial, (array(acc), INT, INT, array(acc))))
            for T in (32, 256):  # rows longer than SERIAL_UP_TO get 32 .. 256 threads
                rows = reduction._row_kernel(op, acc, T)
                jobs.append((f"{op} {acc} T={T}", rows, (array(acc), INT, array(acc))))
    for op in ("max", "min"):
        for dtype in DTYPES:
            serial = reduction._serial_arg_kernel(op, dtype)
            jobs.append((f"arg{op} {dtype}", serial,
                         (array(dtype), INT, INT, array(np.int64))))
            rows = reduction._arg_kernel(op, dtype, 256)
            jobs.append((f"arg{op} {dtype} T=256", rows, (array(dtype), INT, array(np.int64))))
    return jobs


# ---------------------------------------------------------------- matmul.py
def matmul_signatures():
    from learntorch.backends.cuda import matmul
    return [(str(dtype), matmul._tiled_kernel(dtype),
             (array(dtype), array(dtype), array(dtype), INT, INT, INT))
            for dtype in DTYPES]


# ---------------------------------------------------------------- indexing.py
def indexing_signatures():
    """take/put (x[idx], x[idx] = v) for every dtype; add_at (np.add.at) for int64 and floats."""
    from learntorch.backends.cuda import indexing
    positions = array(np.int64)
    jobs = []
    for dtype in DTYPES:
        jobs.append((str(dtype), indexing.take, (INT, array(dtype), array(dtype), positions)))
        jobs.append((str(dtype), indexing.put, (INT, array(dtype), positions, array(dtype))))
        # np.add.at: bool arrays are never summed so; float16 ones add up in float32
        if dtype not in (np.bool_, np.float16):
            jobs.append((str(dtype), indexing.add_at,
                         (INT, array(dtype), positions, array(dtype))))
    return jobs


# ---------------------------------------------------------------- conv.py
def conv_signatures():
    """The conv2d kernels and im2col / col2im for each float dtype (window: 10 Python ints)."""
    from learntorch.backends.cuda import conv
    window = (INT,) * 10  # kh, kw, sh, sw, ph, pw, dh, dw, Ho, Wo
    jobs = []
    for dtype in FLOATS:
        forward, input_grad, weight_grad = conv.kernels(dtype)
        a = array(dtype)
        jobs += [
            (str(dtype), forward, (a, a, a, BOOL, a) + (INT,) * 5 + window + (INT,)),
            (str(dtype), input_grad, (a, a, a) + (INT,) * 5 + window + (INT,)),
            (str(dtype), weight_grad, (a, a, a) + (INT,) * 6 + window + (INT,)),
        ]
        # im2col / col2im (F.unfold / F.fold): image height and width, then the window
        im2col, col2im = conv.window_kernels(dtype)
        jobs += [(str(dtype), im2col, (a, a, INT, INT) + window + (INT,)),
                 (str(dtype), col2im, (a, a, INT, INT) + window + (INT,))]
    return jobs


# ---------------------------------------------------------------- pooling.py
def pooling_signatures():
    """max pooling for floats and int64, avg pooling for float32/float64 (as the host checks)."""
    from learntorch.backends.cuda import pooling
    jobs = []
    for dtype in [np.dtype(np.int64)] + FLOATS:
        max_forward, max_backward, avg_forward, avg_backward = pooling.kernels(dtype)
        a, idx = array(dtype), array(np.int64)
        window = (INT,) * 10  # kh, kw, sh, sw, ph, pw, dh, dw, Ho, Wo
        jobs.append((str(dtype), max_forward, (a, a, idx, INT, INT) + window + (INT,)))
        if dtype.kind == "f":  # gradients are floating point
            jobs.append((str(dtype), max_backward, (a, idx, a, INT, INT) + window + (INT,)))
        if dtype in (np.float32, np.float64):
            no_dilation = (INT,) * 8  # kh, kw, sh, sw, ph, pw, Ho, Wo
            jobs.append((str(dtype), avg_forward, (a, a, a, INT, INT) + no_dilation + (INT,)))
            jobs.append((str(dtype), avg_backward,
                         (a, a, a, INT, INT) + no_dilation + (INT,)))
    return jobs


# ---------------------------------------------------------------- random.py
def random_signatures():
    """philox_fill (uniform_/normal_) and philox_bernoulli (a number p, or an array of them)."""
    from learntorch.backends.cuda import random
    key_and_offset = (scalar(np.uint64),) * 4  # PhiloxGenerator.next_counter()
    jobs = []
    for dtype in (np.float32, np.float64):
        jobs.append((str(np.dtype(dtype)), random.philox_fill,
                     (array(dtype), INT, INT, BOOL) + key_and_offset + (FLOAT, FLOAT)))
        for p in (np.float64, dtype):  # bernoulli_(p=0.5) sends a float64 p; an array its own
            jobs.append((f"{np.dtype(dtype)}, p {np.dtype(p)}", random.philox_bernoulli,
                         (array(dtype), INT, array(p), INT, BOOL) + key_and_offset))
    return jobs


# ---------------------------------------------------------------- optim_kernels.py
def optim_signatures():
    """Every fused update: arrays of the parameter's dtype, float scalars cast to it, bool flags."""
    from learntorch.backends.cuda import optim_kernels
    jobs = []
    for dtype in (np.float32, np.float64):
        a, s = array(dtype), scalar(dtype)
        for name, n_arrays in (("sgd", 3), ("adam", 5), ("rmsprop", 5), ("adagrad", 3)):
            flags = [k for k in optim_kernels.SCALARS[name]
                     if k in ("nesterov", "maximize", "first", "amsgrad", "decoupled",
                              "centered")]
            scalars = tuple(BOOL if k in flags else s for k in optim_kernels.SCALARS[name])
            jobs.append((str(np.dtype(dtype)), optim_kernels.KERNELS[name],
                         (a,) * n_arrays + scalars))
    return jobs


# ---------------------------------------------------------------- scan.py, mask.py, sort.py
def scan_signatures():
    """cumsum rows in numpy's accumulation dtypes (bools and ints add up as int64)."""
    from learntorch.backends.cuda import scan
    return [(f"{np.dtype(dtype)} T={T}", scan.scan_kernel(dtype, T),
             (array(dtype), INT, array(dtype)))
            for dtype in (np.int64, np.float16, np.float32, np.float64) for T in (1, 32, 256)]


def mask_signatures():
    """nonzero's coordinates: (n, bool mask, int64 scan, int64 shape, count, int64 out)."""
    from learntorch.backends.cuda import mask
    positions = array(np.int64)
    return [("bool mask", mask.write_coordinates,
             (INT, array(np.bool_), positions, positions, INT, positions))]


def sort_signatures():
    """The bitonic argsort for every dtype: in shared memory for the shortest and the longest
    padded rows, and the global-memory steps of longer rows."""
    from learntorch.backends.cuda import sort
    jobs = [(f"{dtype} P={P} T={T}", sort.argsort_kernel(dtype, P, T),
             (array(dtype), INT, array(np.int64)))
            for dtype in DTYPES for P, T in ((1, 1), (1024, 256))]
    for dtype in DTYPES:
        values, indices = array(dtype), array(np.int64)
        jobs.append((str(dtype), sort.load_padded_rows,
                     (values, INT, values, indices, INT, INT)))   # x, n, values, indices, P, total
        jobs.append((str(dtype), sort.bitonic_step,
                     (values, indices) + (INT,) * 5))             # n, P, k, j, pairs
    return jobs


SIGNATURES = {
    "elementwise": elementwise_signatures,
    "reduction": reduction_signatures,
    "matmul": matmul_signatures,
    "indexing": indexing_signatures,
    "conv": conv_signatures,
    "pooling": pooling_signatures,
    "random": random_signatures,
    "optim_kernels": optim_signatures,
    "scan": scan_signatures,
    "mask": mask_signatures,
    "sort": sort_signatures,
}


# ---------------------------------------------------------------- finding the kernels
def _is_kernel_decorator(node):
    """``@cuda.jit`` or ``@cuda.jit(...)`` without ``device=True``."""
    call = node if isinstance(node, ast.Call) else None
    target = call.func if call else node
    if not (isinstance(target, ast.Attribute) and target.attr == "jit"
            and isinstance(target.value, ast.Name) and target.value.id == "cuda"):
        return False
    return not (call and any(k.arg == "device" and getattr(k.value, "value", False)
                             for k in call.keywords))


def kernels_in_source(module):
    """Names of the functions decorated as kernels in ``module``'s source."""
    tree = ast.parse(inspect.getsource(module))
    return {node.name for node in ast.walk(tree)
            if isinstance(node, ast.FunctionDef)
            and any(_is_kernel_decorator(d) for d in node.decorator_list)}


def kernels_in_attributes(module):
    """Names of the kernel (not device) dispatchers among ``module``'s attributes."""
    from numba.cuda.dispatcher import CUDADispatcher
    return {value.py_func.__name__ for value in vars(module).values()
            if isinstance(value, CUDADispatcher) and not value.targetoptions.get("device")
            and value.py_func.__module__ == module.__name__}


def element_functions_launched(module):
    """Module-level functions handed to ``elementwise.run`` / ``_fused`` in ``module``."""
    tree = ast.parse(inspect.getsource(module))
    names = set()
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call) or len(node.args) < 2:
            continue
        func = ast.unparse(node.func)
        if func in ("elementwise.run", "run", "_fused") and isinstance(node.args[1], ast.Name):
            value = getattr(module, node.args[1].id, None)
            if inspect.isfunction(value):  # a parameter or local variable: not a fixed function
                names.add(value.__name__)
    return names


def backend_modules():
    import learntorch.backends.cuda as package
    import importlib
    return [importlib.import_module(f"{package.__name__}.{info.name}")
            for info in pkgutil.iter_modules(package.__path__)]


# ---------------------------------------------------------------- compiling
def compile_one(kernel, signature):
    """None when ``kernel`` compiles to sm_90 PTX for ``signature``, else the compiler's error."""
    from numba import cuda
    try:
        cuda.compile_ptx(kernel.py_func, signature, cc=SM_90)
    except Exception as error:  # TypingError, NvvmError, LoweringError, ...
        return f"{type(error).__name__}: {error}"
    return None


def _plain_python(x):
    return x + 1


def control_error():
    """The error for a kernel the simulator runs but a GPU cannot compile: proof the check bites.

    The kernel calls a plain Python function (not a ``cuda.jit(device=True)``
    one) -- the very mistake the simulator lets through, since there every
    kernel is Python anyway.
    """
    def calls_plain_python(out):
        out[0] = _plain_python(out[0])
    return compile_one(pytypes.SimpleNamespace(py_func=calls_plain_python), (array(np.float32),))


def main(only=None):
    missing = toolchain_missing()
    if missing:
        return {"toolchain_missing": missing, "control_error": None, "results": [],
                "unlisted": []}
    pretend_sm_90()
    nvvm_errors_with_log()
    results, compiled = [], {}
    for module_name, signatures in SIGNATURES.items():
        if only and module_name not in only:
            continue
        for label, kernel, signature in signatures():
            error = compile_one(kernel, signature)
            kernel_name = kernel.py_func.__name__
            compiled.setdefault(module_name, set()).add(kernel_name)
            results.append({"module": module_name, "kernel": kernel_name,
                            "signature": f"{label}: ({', '.join(map(str, signature))})",
                            "error": error})
    unlisted = []
    if not only:
        for module in backend_modules():
            short = module.__name__.rsplit(".", 1)[1]
            for name in sorted((kernels_in_source(module) | kernels_in_attributes(module))
                               - compiled.get(short, set())):
                unlisted.append(
                    f"kernel {short}.{name} has no signature in {os.path.basename(__file__)}: "
                    f"add the argument types its launch site passes to {short}_signatures() "
                    "(and the function to SIGNATURES), so that it is compiled for a real GPU")
            for name in sorted(element_functions_launched(module) - ELEMENT_FUNCTIONS):
                unlisted.append(
                    f"{short}.{name} runs as an elementwise kernel but is never compiled here: "
                    "add it to elementwise_signatures()")
    return {"toolchain_missing": None, "control_error": control_error(), "results": results,
            "unlisted": unlisted}


if __name__ == "__main__":
    if os.environ.get("NUMBA_ENABLE_CUDASIM", "0") != "0":
        sys.exit("run with NUMBA_ENABLE_CUDASIM=0: the simulator does not compile anything")
    print(json.dumps(main(only=set(sys.argv[1:]) or None)))
