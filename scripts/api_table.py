"""Write docs/api.md: every public name of learntorch, next to its PyTorch twin.

    python scripts/api_table.py            # regenerate docs/api.md
    python scripts/api_table.py --check    # exit 1 (and say why) if docs/api.md is stale

The table is found, not written: the names are read off the imported modules
(``dir()``), the kinds off the objects, and the parameter lists off
``inspect.signature`` -- or, for torch's C functions, which have no signature,
off the first lines of their docstrings (``add(input, other, *, alpha=1, out=None)``).
Only the notes below are written by hand, and only for what introspection cannot
see (random streams, views, return types).  ``tests/test_project_api_table.py``
regenerates the table and fails if the committed one differs, so the document
cannot drift from the code.

A name that torch lacks must be in ``LEARNTORCH_ONLY`` with the reason it exists:
that list is the documented boundary of "the API is PyTorch's".
"""
import argparse
import difflib
import inspect
import keyword
import re
import sys
import types
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TABLE = ROOT / "docs" / "api.md"
TORCH_VERSION = "2.13.0"

# (learntorch namespace, its torch twin): the table has one section for each
NAMESPACES = [
    ("learntorch", "torch"),
    ("learntorch.Tensor", "torch.Tensor"),
    ("learntorch.autograd", "torch.autograd"),
    ("learntorch.nn", "torch.nn"),
    ("learntorch.nn.functional", "torch.nn.functional"),
    ("learntorch.nn.init", "torch.nn.init"),
    ("learntorch.nn.utils", "torch.nn.utils"),
    ("learntorch.optim", "torch.optim"),
    ("learntorch.optim.lr_scheduler", "torch.optim.lr_scheduler"),
    ("learntorch.utils.data", "torch.utils.data"),
    ("learntorch.distributed", "torch.distributed"),
    ("learntorch.nn.parallel", "torch.nn.parallel"),
    ("learntorch.profiler", "torch.profiler"),
    ("learntorch.cuda", "torch.cuda"),
    ("learntorch.onnx", "torch.onnx"),
    ("learntorch.fx", "torch.fx"),
    ("learntorch.compiler", "torch.compiler"),
    ("learntorch.ao.quantization", "torch.ao.quantization"),
    ("learntorch.ao.nn.quantized.dynamic", "torch.ao.nn.quantized.dynamic"),
    ("learntorch.amp", "torch.amp"),
]

# Names with no torch twin of the same kind, and why they are there.  A name also
# belongs here when torch has the name for something else (torch.ops is the
# custom-operator registry, torch.autograd.graph holds hooks), so that nobody
# reads the twin as an equivalent.
LEARNTORCH_ONLY = {
    "learntorch.optim.sgd": "the file that defines `SGD`, one per algorithm (torch keeps "
                             "its optimizer files private)",
    "learntorch.optim.adam": "the file that defines `Adam`, one per algorithm (torch keeps "
                             "its optimizer files private)",
    "learntorch.optim.adamw": "the file that defines `AdamW`, one per algorithm (torch keeps "
                             "its optimizer files private)",
    "learntorch.optim.rmsprop": "the file that defines `RMSprop`, one per algorithm (torch keeps "
                             "its optimizer files private)",
    "learntorch.optim.adagrad": "the file that defines `Adagrad`, one per algorithm (torch keeps "
                             "its optimizer files private)",
    "learntorch.optim.optimizer": "the file that defines `Optimizer`, one per algorithm (torch keeps "
                             "its optimizer files private)",
    "learntorch.datasets": "datasets and image transforms (the shipped 8x8 digits, toy 2-D sets, "
                           "MNIST); torch keeps these in the separate torchvision package",
    "learntorch.serialization": "the module behind `save`/`load`: a zip of JSON + .npy that "
                                "never unpickles (torch.serialization pickles)",
    "learntorch.backends": "learntorch's kernels: `set_backend(\"numba\" | \"numpy\" | obj)`, "
                           "`use(...)` (torch.backends holds flags for cuDNN, MKL, ...)",
    "learntorch.tiers": "which tier runs: `set_tier(\"reference\" | \"fast\")`, `use(...)` -- the "
                        "engine exactly as written, or with the fast tier's replacements",
    "learntorch.factories": "the module that defines the tensor factories; use the names it "
                            "exports from `learntorch` itself",
    "learntorch.ops": "the differentiable functions, one file per family (torch.ops is the "
                      "custom-operator registry, unrelated)",
    "learntorch.bool_": "alias of `learntorch.bool` (not in torch: write `torch.bool`)",
    "learntorch.gelu": "torch has it only as `torch.nn.functional.gelu`: code calling "
                       "`torch.gelu` will not run on PyTorch",
    "learntorch.silu": "torch has it only as `torch.nn.functional.silu`: code calling "
                       "`torch.silu` will not run on PyTorch",
    "learntorch.softplus": "torch has it only as `torch.nn.functional.softplus`: code calling "
                           "`torch.softplus` will not run on PyTorch",
    "learntorch.autograd.AccumulateGrad": "the graph node that adds a gradient into a leaf's "
                                          "`.grad` (torch's is internal and has no public name)",
    "learntorch.autograd.BackwardNode": "the class of every `grad_fn` (torch: "
                                        "`torch.autograd.graph.Node`)",
    "learntorch.autograd.BackwardStep": "one step of `backward_steps`, for widgets and chapters",
    "learntorch.autograd.backward_steps": "a backward pass that yields one node at a time, so "
                                          "a widget can show gradients flowing",
    "learntorch.autograd.engine": "the backward engine, one readable file",
    "learntorch.autograd.graph": "graph introspection for widgets (`walk`, ...); torch's "
                                 "module of this name holds saved-tensor hooks instead",
    "learntorch.distributed.ring": "the ring all-reduce written out with point-to-point "
                                   "messages: its `schedule`, an in-process `replay` for "
                                   "widgets, and `all_reduce` over the real ranks",
    "learntorch.distributed.run_ranks": "starts N ranks from Python (a notebook cell) and "
                                        "returns each rank's value and output; torch has "
                                        "`torch.multiprocessing.spawn`, which cannot run a "
                                        "notebook's function",
    "learntorch.distributed.RankResult": "what `run_ranks` returns for each rank: value, "
                                         "stdout, stderr",
    "learntorch.distributed.ChildFailedError": "raised when a rank of a job fails, with the "
                                               "rank and its traceback (torch's of this name "
                                               "lives in torch.distributed.elastic)",
    "learntorch.nn.parallel.reducer": "the file of DDP's Reducer, which averages gradients in "
                                      "buckets during backward (torch's is C++, internal)",
    "learntorch.autograd.is_grad_enabled": "same as `learntorch.is_grad_enabled`; torch has it "
                                           "only at the top level",
    "learntorch.fx": "a concrete tracer: `capture(model, *inputs)` runs the model once and records "
                     "the engine's ops with their shapes (torch.fx's symbolic_trace records "
                     "Python calls on proxies instead); its Graph feeds learntorch.onnx.export",
    "learntorch.fx.capture": "runs a model or function once on example inputs and returns the "
                             "Graph of the ops it ran (nearest in torch: torch.jit.trace, "
                             "torch.export.export)",
    "learntorch.fx.CaptureError": "raised when a call cannot be captured faithfully (a value "
                                  "computed outside the engine's Functions, an unseen in-place "
                                  "change)",
    "learntorch.fx.Graph": "a captured graph: nodes in execution order, `attributes`, `code`, "
                           "`tabular()`, callable with shape guards; torch.fx.Graph is symbolic "
                           "and has other methods",
    "learntorch.fx.Node": "one node of a captured Graph: torch.fx's op vocabulary (placeholder, "
                          "get_attr, call_function, output) with a Function class as target, "
                          "shapes and the op's kind; torch.fx.Node has other attributes",
    "learntorch.fx.TensorMeta": "shape, dtype and device of a captured tensor (torch keeps "
                                "these in torch.fx.passes.shape_prop.TensorMetadata)",
    "learntorch.compiler.CompiledFunction": "what `learntorch.compile(fn)` returns: a callable "
                                            "whose `graphs`, `kernels`, `code` and "
                                            "`recompiles` show what was compiled (torch "
                                            "returns a plain function)",
    "learntorch.compiler.OptimizedModule": "what `learntorch.compile(module)` returns (torch's "
                                           "class is torch._dynamo.eval_frame.OptimizedModule)",
    "learntorch.compiler.Unsupported": "raised under fullgraph=True at a graph break (torch's is "
                                       "torch._dynamo.exc.Unsupported)",
    "learntorch.compiler.cache": "the file keeping compiled kernels by their source, in memory "
                                 "and on disk (torch keeps Inductor's caches private)",
    "learntorch.compiler.codegen": "the file writing one fused group as a Numba kernel's source "
                                   "(torch's is torch._inductor.codegen)",
    "learntorch.compiler.errors": "the file defining the compiler's errors and graph-break "
                                  "reasons (torch's are in torch._dynamo.exc)",
    "learntorch.compiler.explain": "the file behind `learntorch._dynamo.explain` (graph breaks "
                                   "and their reasons)",
    "learntorch.compiler.freezing": "the file behind options={\"freezing\": True}: a layer's "
                                    "weight kept transposed for BLAS (torch's is "
                                    "torch._inductor.freezing)",
    "learntorch.compiler.fusion": "the file choosing which ops of a graph become one kernel "
                                  "(torch's scheduler is in torch._inductor.scheduler)",
    "learntorch.compiler.guards": "the file building and checking guards (torch's are in "
                                  "torch._guards and torch._dynamo.guards)",
    "learntorch.compiler.logs": "the file behind `learntorch._logging.set_logs` (recompiles, "
                                "graph breaks, generated code)",
    "learntorch.compiler.lowering": "the file giving each elementwise op as one line of scalar "
                                    "code (torch's is torch._inductor.lowering)",
    "learntorch.compiler.program": "the file writing the Python that calls ops and kernels, and "
                                   "autograd through kernels",
    "learntorch.compiler.threads": "the file deciding whether a generated kernel runs on "
                                   "every thread (Inductor decides that inside its C++ code)",
    "learntorch.fx.op_kinds": "the kind of each engine op (elementwise, reduction, matmul, conv, "
                              "...), read by the ONNX exporter and by a compiler",
    "learntorch.fx.graph": "the module defining Graph, Node and TensorMeta (torch.fx.graph "
                           "defines torch's symbolic Graph)",
    "learntorch.fx.interpreter": "runs a captured Graph again, each node's Function.apply "
                                 "after checking shapes and dtypes (torch.fx.interpreter holds "
                                 "torch's Interpreter class)",
}

RANDOM_NOTE = ("random: the same seed gives the same numbers on every run, but not torch's "
               "numbers (numpy's PCG64 stream)")

# What introspection cannot see, written down once (each was checked by hand).
NOTES = {
    "learntorch.get_rng_state": "a uint8 tensor as torch's, but 53 bytes of learntorch's PCG64 "
                                "state, not torch's 5056-byte Mersenne Twister state (the two "
                                "cannot be exchanged)",
    "learntorch.set_rng_state": "takes what learntorch's `get_rng_state` returned; torch's state "
                                "is refused with the reason",
    "learntorch.load": "never unpickles (torch.save files are refused); `max_bytes=` (learntorch "
                       "only, 1 GiB by default) limits what a file may expand to; "
                       "`weights_only` and `mmap` are accepted and change nothing",
    "learntorch.onnx.export": "one exporter (learntorch.fx's tracer): dynamo, optimize, report, "
                              "profile, dump_exported_program, artifacts_dir, external_data, "
                              "do_constant_folding, custom_opsets, export_modules_as_functions "
                              "and autograd_inlining are accepted and change nothing; "
                              "custom_translation_table and keyword inputs are refused",
    "learntorch.onnx.ONNXProgram": "what export returns, not made by hand: `model_proto`, "
                                   "`save(path)`, calling it runs ONNX Runtime, `verify(*args)`, "
                                   "and `graph`, the captured learntorch graph",
    "learntorch.Generator": RANDOM_NOTE,
    "learntorch.distributed": "the mpi backend only (over mpi4py and MPICH's wheel): "
                              "`init_process_group(\"gloo\" or \"nccl\")` raises; one process "
                              "group, the default one (no `new_group`)",
    "learntorch.distributed.init_process_group": "`init_method` and `store` are accepted and "
                                                 "not needed (MPI's launcher connects the "
                                                 "ranks); `world_size`/`rank` must agree with "
                                                 "MPI's",
    "learntorch.distributed.ReduceOp": "AVG as on NCCL (sum / world size, floating-point "
                                       "only); PREMUL_SUM refused",
    "learntorch.utils.data.DistributedSampler": "torch's index split exactly; the shuffled "
                                                "permutation is learntorch's (PCG64), not "
                                                "torch's numbers",
    "learntorch.nn.parallel.DistributedDataParallel": "CPU modules; no `register_comm_hook`; "
                                                      "`static_graph` and "
                                                      "`gradient_as_bucket_view` are accepted "
                                                      "and ignored",
    "learntorch.cuda": "no CUDA backend yet: `is_available()` is False, and moving a tensor "
                       "to 'cuda' raises RuntimeError",
}

# Random-number functions and in-place random fills: the streams differ from torch's.
RANDOM_NAMES = {"rand", "randn", "randint", "randperm", "rand_like", "randn_like", "randint_like",
                "bernoulli", "multinomial", "normal", "manual_seed", "seed", "initial_seed",
                "uniform_", "normal_", "random_", "exponential_", "bernoulli_", "geometric_",
                "cauchy_", "log_normal_"}

# Parameters that torch offers on nearly every function and learntorch on few: the
# table names them once (in the header) instead of in every row.
COMMON_TORCH_ONLY_PARAMS = ("out", "layout", "pin_memory", "memory_format", "generator")


# ---------------------------------------------------------------- kinds
def kind_of_member(namespace, name):
    """'module', 'class', 'function', 'dtype' or 'value' (module members);
    'method' or 'property' (class members)."""
    if inspect.isclass(namespace):
        attr = inspect.getattr_static(namespace, name)
        if isinstance(attr, (property, types.GetSetDescriptorType, types.MemberDescriptorType)):
            return "property"
        if isinstance(attr, (staticmethod, classmethod)) or callable(attr):
            return "method"
        return "value"
    obj = getattr(namespace, name)
    if isinstance(obj, types.ModuleType):
        return "module"
    if inspect.isclass(obj):
        return "class"
    if type(obj).__name__ == "dtype":  # learntorch.dtype and torch.dtype alike
        return "dtype"
    if callable(obj):
        return "function"
    return "value"


def coarse_kind(kind):
    """What code can rely on: calling it, reading it as an attribute, importing from it."""
    return {"class": "callable", "function": "callable", "method": "callable",
            "dtype": "value"}.get(kind, kind)


# ---------------------------------------------------------------- signatures
def signature_params(obj, drop_first):
    """[(name, kind)] from inspect.signature, or None where it has none.

    ``drop_first`` drops ``self`` of an unbound method, which torch's documented
    signatures leave out too."""
    try:
        params = list(inspect.signature(obj).parameters.values())
    except (TypeError, ValueError):
        return None
    if drop_first and params and params[0].kind in (params[0].POSITIONAL_ONLY,
                                                    params[0].POSITIONAL_OR_KEYWORD):
        params = params[1:]
    return [(p.name, p.kind) for p in params]


def is_generic(params):
    """True for ``(*args, **kwargs)``: a wrapper whose real signature is elsewhere."""
    kinds = {k for _, k in params}
    return inspect.Parameter.VAR_KEYWORD in kinds and kinds <= {
        inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD}


def split_top_level(text):
    """Split 'a, b=(1, 2), *, c=None' at the commas outside brackets."""
    parts, depth, current = [], 0, ""
    for ch in text:
        if ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
        if ch == "," and depth == 0:
            parts.append(current)
            current = ""
        else:
            current += ch
    parts.append(current)
    return [p.strip() for p in parts if p.strip()]


def _call_text(line, name):
    """The text between the parentheses of ``name(...)`` on a docstring line, or None."""
    match = re.match(r"^\s*(?:\.\. function:: |\.\. method:: )?(?:torch\.|Tensor\.)?"
                     + re.escape(name) + r"\(", line)
    if not match:
        return None
    depth, start = 1, match.end()
    for i in range(start, len(line)):
        depth += {"(": 1, ")": -1}.get(line[i], 0)
        if depth == 0:
            return line[start:i]
    return None


def documented_overloads(obj, name):
    """Torch's documented signatures of ``name``: a list of (positional, keyword) name lists.

    Read off docstring lines like ``sum(input, dim, keepdim=False, *, dtype=None) -> Tensor``
    (an op with several overloads documents each, some after ``.. function::``)."""
    overloads = []
    for line in (getattr(obj, "__doc__", None) or "").splitlines():
        text = _call_text(line, name)
        if text is None:
            continue
        positional, keyword, in_keywords = [], [], False
        for part in split_top_level(text.replace("\\", "")):  # `\*` in reST is `*`
            if part == "*":
                in_keywords = True
                continue
            if part.startswith("**"):
                continue
            star = part.startswith("*")
            pname = re.split(r"[=:\s]", part.lstrip("*"), maxsplit=1)[0]
            if not pname.isidentifier() or pname == "self":
                continue
            (keyword if in_keywords else positional).append(pname)
            in_keywords = in_keywords or star
        overloads.append((positional, keyword))
    return overloads


def schema_overloads(name, is_method):
    """The overloads of the ATen operator ``name``, from which torch's C bindings are made.

    Docstrings are written by hand and lag behind (``Tensor.div`` documents ``value``
    for what is really ``other``); the operator schemas are what the argument parser
    uses.  ``self`` is the tensor a method is called on, and ``input`` in ``torch.*``."""
    import torch
    try:
        schemas = torch._C._jit_get_schemas_for_operator("aten::" + name)
    except Exception:  # a private API: without it the docstrings still answer
        return []
    # TorchScript registers overloads of its own under the same names (add.int(int a,
    # int b), mul.left_t(t[] l, int n)); an op that takes tensors at all is only
    # callable from Python with a tensor, so keep the overloads that take one
    def takes_tensor(schema):
        return any("Tensor" in str(arg.type) for arg in schema.arguments)
    if any(takes_tensor(schema) for schema in schemas):
        schemas = [schema for schema in schemas if takes_tensor(schema)]
    overloads = []
    for schema in schemas:
        args = schema.arguments
        # TorchScript's own overloads on Python scalars (tensor.bool(bool t), round.int(int a))
        # are not callable from Python as torch.*: leave them out
        # ... and names their arguments a, b, l, t; ATen's own ops use self or a word
        # ... and TorchScript's list methods (sort(List[Tensor] self, bool reverse)) likewise
        if args and (len(args[0].name) == 1 or (
                args[0].name == "self" and (str(args[0].type) in ("int", "float", "str")
                                            or str(args[0].type).startswith("List[")))):
            continue
        positional, keyword = [], []
        for arg in args:
            if arg.is_out:  # out=, or max.dim_max's (max, max_values): torch-only outputs
                continue
            pname = arg.name
            if pname == "self":
                if is_method:  # the tensor the method is called on
                    continue
                pname = "input"
            (keyword if arg.kwarg_only else positional).append(pname)
        overloads.append((positional, keyword))
    return overloads


def split_params(params):
    """(positional names, keyword-only names) of an inspect parameter list; **kwargs left out."""
    positional = [n for n, k in params if k in (inspect.Parameter.POSITIONAL_ONLY,
                                                inspect.Parameter.POSITIONAL_OR_KEYWORD,
                                                inspect.Parameter.VAR_POSITIONAL)]
    keyword = [n for n, k in params if k == inspect.Parameter.KEYWORD_ONLY]
    return positional, keyword


def fmt(positional, keyword=()):
    return "(" + ", ".join(list(positional) + (["*"] + list(keyword) if keyword else [])) + ")"


def torch_overloads(torch_obj, name, is_method):
    """Torch's signatures of ``name``, as lists of (positional, keyword) names.

    Returns (all, best): ``all`` gathers every source (to be lenient about names),
    ``best`` is the most reliable one alone (to say what torch has that learntorch
    lacks): inspect.signature for Python functions, else the operator schemas, else
    the docstrings."""
    params = signature_params(torch_obj, drop_first=is_method)
    only_varargs = params is not None and {k for _, k in params} <= {
        inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD}
    if params is not None and not only_varargs:  # (*args): einsum's real names are documented
        overloads = [split_params(params)]
        return overloads, overloads
    documented = documented_overloads(torch_obj, name)
    if is_method:
        # Tensor.x's docstring often only says "See torch.x": take torch.x's, minus `input`
        import torch
        function = getattr(torch, name, None)
        if callable(function):
            documented += [(pos[1:], kw) for pos, kw in documented_overloads(function, name)
                           if pos[:1] == ["input"]]
    schemas = schema_overloads(name, is_method)
    if only_varargs:  # a Python wrapper over the operator: its documentation is its API
        return documented + schemas, documented or schemas
    return documented + schemas, schemas or documented


def compare_signatures(lt_obj, torch_obj, name, is_method):
    """(verdict, note): verdict is 'same', 'subset', 'names', 'differs' or '' (not checked).

    Torch's parameters from COMMON_TORCH_ONLY_PARAMS are left out of the comparison."""
    lt_params = signature_params(lt_obj, drop_first=is_method)
    if lt_params is None or is_generic(lt_params):
        return "", ""
    overloads, best = torch_overloads(torch_obj, name, is_method)
    if not overloads:
        return "", ""
    # learntorch spells Python keywords with a trailing underscore (random_(from_, to)):
    # torch's `from` cannot be passed by name either, so only the position matters
    lt_params = [(n[:-1] if n.endswith("_") and keyword.iskeyword(n[:-1]) else n, k)
                 for n, k in lt_params]
    # a *args parameter cannot be passed by name: its name is free, only its place counts
    var_positional = {n for n, k in lt_params if k == inspect.Parameter.VAR_POSITIONAL}
    known = {n for pos, kw in overloads for n in pos + kw} | var_positional
    common = set(COMMON_TORCH_ONLY_PARAMS)
    overloads = [([n for n in pos if n not in common], [n for n in kw if n not in common])
                 for pos, kw in overloads]
    lt_params = [(n, k) for n, k in lt_params if n not in common or n not in known]
    lt_pos, lt_kw = split_params(lt_params)
    shown = " or ".join(fmt(pos, kw) for pos, kw in _unique(overloads)[:4])
    unknown = [n for n in lt_pos + lt_kw if n not in known]
    if unknown:
        return "differs", (f"torch has no parameter {', '.join(unknown)}: learntorch "
                           f"{fmt(lt_pos, lt_kw)}, torch {shown}")
    best_names = {n for pos, kw in best for n in pos + kw}
    torch_only = sorted(best_names - common - set(lt_pos) - set(lt_kw))

    def same_places(mine, theirs):
        return len(mine) == len(theirs) and all(
            a == b or a in var_positional for a, b in zip(mine, theirs))

    # torch's name for the place of a *args is not missing here; and `f(x, *dims_args,
    # dims=None)` is how Python spells torch's "dims, as several ints or as one tuple"
    places = {b for pos, _ in overloads for a, b in zip(lt_pos, pos) if a in var_positional}
    torch_only = [n for n in torch_only if n not in places]
    kw_here_positional_there = [n for n in lt_kw if n not in places and all(
        n not in kw for pos, kw in overloads if n in pos + kw)]
    if any(same_places(lt_pos, pos) for pos, _ in overloads) and not torch_only \
            and not kw_here_positional_there:
        return "same", ""
    notes = []
    if torch_only:
        notes.append("torch also accepts " + ", ".join(torch_only))
    if kw_here_positional_there:
        notes.append(f"keyword-only here, positional in torch: "
                     f"{', '.join(kw_here_positional_there)}")
    if any(same_places(lt_pos, pos[:len(lt_pos)]) for pos, _ in overloads) \
            and not kw_here_positional_there:
        return "subset", "; ".join(notes)
    notes.append(f"positional order differs: learntorch {fmt(lt_pos, lt_kw)}, torch {shown}")
    return "names", "; ".join(notes)


def _unique(items):
    seen, out = set(), []
    for pos, kw in items:
        key = (tuple(pos), tuple(kw))
        if key not in seen:
            seen.add(key)
            out.append((pos, kw))
    return out


# ---------------------------------------------------------------- the table
def resolve(dotted):
    import importlib
    parts = dotted.split(".")
    obj = importlib.import_module(parts[0])
    for part in parts[1:]:
        obj = getattr(obj, part)
    return obj


def public_names(namespace):
    return sorted(n for n in dir(namespace) if not n.startswith("_"))


def rows_for(lt_path, torch_path):
    """One dict per public name of ``lt_path``."""
    lt_ns, torch_ns = resolve(lt_path), resolve(torch_path)
    is_class = inspect.isclass(lt_ns)
    rows = []
    for name in public_names(lt_ns):
        qualified = f"{lt_path}.{name}"
        kind = kind_of_member(lt_ns, name)
        torch_kind = kind_of_member(torch_ns, name) if hasattr(torch_ns, name) else None
        only = LEARNTORCH_ONLY.get(qualified)
        notes, verdict = [], ""
        if only is not None:
            twin = "—"
            notes.append("learntorch only: " + only)
        elif torch_kind is None:
            twin = "—"
            notes.append("MISSING FROM TORCH: rename it to torch's name, or add it to "
                         "LEARNTORCH_ONLY in scripts/api_table.py with the reason")
        else:
            twin = f"`{torch_path}.{name}`"
            if coarse_kind(kind) != coarse_kind(torch_kind):
                notes.append(f"KIND DIFFERS: a {kind} here, a {torch_kind} in torch")
            elif kind != torch_kind and {kind, torch_kind} == {"class", "function"}:
                notes.append(f"a {kind} here, a {torch_kind} in torch (both are called the "
                             "same way)")
            if kind in ("function", "class", "method"):
                verdict, sig_note = compare_signatures(getattr(lt_ns, name),
                                                       getattr(torch_ns, name), name,
                                                       is_method=is_class and kind == "method")
                if sig_note:
                    notes.append(sig_note)
        if name in RANDOM_NAMES:
            notes.append(RANDOM_NOTE)
        if qualified in NOTES:
            notes.append(NOTES[qualified])
        rows.append({"name": name, "qualified": qualified, "kind": kind, "torch": twin,
                     "torch_kind": torch_kind, "signature": verdict, "notes": notes,
                     "learntorch_only": only is not None})
    return rows


def operators(lt_ns, torch_ns):
    """The Python operators (dunder methods) a class defines that torch's also has."""
    own = {n for klass in lt_ns.__mro__[:-1] for n in vars(klass)
           if n.startswith("__") and n.endswith("__")}
    return sorted(n for n in own if hasattr(torch_ns, n) and callable(getattr(lt_ns, n))
                  and n not in ("__init__", "__new__", "__init_subclass__", "__subclasshook__",
                                "__class_getitem__", "__reduce_ex__", "__reduce__",
                                "__getstate__", "__setstate__", "__dir__"))


def escape(text):
    return text.replace("|", "\\|")


HEADER = """\
# learntorch's API, next to PyTorch's

`import learntorch as torch` runs code written for PyTorch when it sticks to the names below.
Each public name of `learntorch`, `learntorch.Tensor`, `learntorch.autograd`, `learntorch.nn` (with
`nn.functional`, `nn.init`, `nn.utils`, `nn.parallel`), `learntorch.optim` (with `lr_scheduler`),
`learntorch.utils.data`, `learntorch.distributed`, `learntorch.profiler`, `learntorch.cuda`,
`learntorch.onnx` and `learntorch.fx` has a row: its
kind, its PyTorch {torch_version} twin, whether the parameters agree, and what differs.

This file is generated by `python scripts/api_table.py` (or `make api-table`) from the code
itself; `tests/test_project_api_table.py` fails when it is out of date, when a name has no
torch twin of the same kind without a documented reason, or when a checked signature drifts.

Columns:
- **kind**: module, class, function, dtype or value (module members); method or property
  (Tensor members).
- **torch**: the same name in PyTorch; `—` for a learntorch-only name (its reason is in the notes).
- **parameters**: how learntorch's parameter list compares with torch's. Torch's is read with
  `inspect.signature` where it has one (Python functions); torch's C functions have none, so
  their docstrings and ATen operator schemas are read instead, all overloads together.
  `same`: the same names, the same ones positional, in the same order. `subset`: the same,
  but torch accepts more (named in the notes). `names`: every name is torch's, but which are
  positional differs (notes). `differs`: learntorch has a parameter name that torch lacks
  (notes). Empty: not compared (a `*args, **kwargs` wrapper, a property, or no torch twin).
  Rows do not repeat what holds everywhere: learntorch has no `out=`, `layout=`,
  `pin_memory=`, `memory_format=` or `generator=` unless its own signature names them.

What holds for every row:
- dtypes: float32 by default, float64, float16, bfloat16, int64, int32, int16, int8, uint8 and
  bool; type promotion is torch's.
- devices: `'cpu'`; `'cuda'` is understood, but this build has no CUDA backend yet
  (`learntorch.cuda.is_available()` is False).
- errors: wrong input raises torch's exception type (RuntimeError, TypeError, ValueError,
  IndexError) with a message naming the shapes or dtypes and the fix.
- random numbers: reproducible from `manual_seed`, but a different stream from torch's.
"""


# What the fuzzer (tests/fuzz) found different from torch and left so on purpose: torch's
# behaviour there is an accident of its implementation, not a contract a program can use.
# The fuzzer does not generate these cases.
KNOWN_DIFFERENCES = """\
## Known differences

The differential fuzzer (`tests/fuzz`; `make fuzz` for the long run, its fast profile in
`make test`) runs generated programs in learntorch and in torch {torch_version} and compares
values, gradients (first and second order), shapes, dtypes, `requires_grad` and exception
types. Everything it found was fixed, except these, where torch's result is an accident of
how it is implemented rather than a rule a program can rely on:

- **Strides of views of empty tensors.** An empty tensor's strides are those torch's view op
  computed from its base (`torch.zeros(0, 3).t().stride()` is `(1, 3)`); learntorch's are the
  row-major strides of the view's own shape (`(1, 1)`), because numpy gives empty arrays zero
  strides. No element is ever read through them; `is_contiguous()` agrees.
- **The order of ties in a very large unstable sort.** `sort`/`argsort` with `stable=False`
  (the default; also inside `quantile`) put equal elements in the order torch's CPU sort
  (libstdc++'s `std::sort`) leaves them, by replaying it on the rows that have ties -- up to
  100,000 elements of such rows in one call. Beyond that, ties keep their input order
  (`stable=True`'s): torch documents the order of ties as unspecified, and a Python replay of
  millions of elements would take minutes.
- **The last bit of a result** computed in another order: sums and means (numpy adds
  pairwise, torch in its own blocks), float64 variances (torch: Welford's running update),
  matrix products. Results agree to the dtype's precision; the fuzzer compares them so, and
  gradients relative to their largest element (a second derivative that is exactly 0 may
  come back from either library as a few ulps of rounding noise).
- **`copy_` from a source that is the destination's own memory rearranged**
  (`x.copy_(x[:, 0])` on a square `x`): torch does not refuse it, and what a later element
  reads depends on what its loop wrote before; learntorch replays torch's loop order (its
  dims, sorted by strides, and 64 bytes read before they are written along a contiguous
  row), so the values agree. Not replayed: torch's AVX2-only builds (32 bytes at a time),
  copies over 32768 elements (torch splits them between threads), and a copy recorded by
  autograd (the destination or source requires grad), where learntorch reads the whole
  source first. (Partial overlaps that torch refuses, such as `x[1:].copy_(x[:-1])`, are
  refused.)
- **Inference tensors** are marked (`is_inference()`), and one cannot be made to require grad
  outside `inference_mode`, as in torch; torch's other refusals for them (an in-place change
  outside `inference_mode`, saving one for backward) are not reproduced.
"""


def probe_section():
    """The API probe's missing names (scripts/api_probe.py), listed by group."""
    import importlib.util
    spec = importlib.util.spec_from_file_location("api_probe", ROOT / "scripts" / "api_probe.py")
    probe = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(probe)
    absent, total = probe.missing(), len(probe.load())
    lines = ["\n## API probe\n",
             f"`scripts/api_probe.txt` holds {total} torch names a course program plausibly "
             "reaches for (creation, math, reductions, shapes, Tensor methods, `nn.functional`, "
             "`nn` modules, `optim` and `lr_scheduler`, data), written independently of what "
             "learntorch has; `python scripts/api_probe.py` reports which are missing (the "
             f"target: at most {probe.TARGET}). "
             f"{len(absent)} of {total} are missing today:\n",
             "| group | missing name |", "| --- | --- |"]
    lines += [f"| {group} | `{name}` |" for group, name in absent]
    return "\n".join(lines) + "\n"


def render():
    import learntorch
    import torch
    if torch.__version__.split("+")[0] != TORCH_VERSION:
        raise SystemExit(f"the table compares with torch {TORCH_VERSION}, and torch "
                         f"{torch.__version__} is installed: pip install torch=={TORCH_VERSION}")
    out = [HEADER.format(torch_version=TORCH_VERSION)]
    for lt_path, torch_path in NAMESPACES:
        rows = rows_for(lt_path, torch_path)
        out.append(f"\n## `{lt_path}` ({len(rows)} names)\n")
        if lt_path == "learntorch.Tensor":
            ops = operators(learntorch.Tensor, torch.Tensor)
            out.append("Python operators and protocols: " + ", ".join(f"`{o}`" for o in ops)
                       + ".\n")
        out.append("| name | kind | torch | parameters | notes |")
        out.append("| --- | --- | --- | --- | --- |")
        for r in rows:
            out.append(f"| `{r['name']}` | {r['kind']} | {r['torch']} | {r['signature']} | "
                       f"{escape('; '.join(r['notes']))} |")
    out.append("\n" + KNOWN_DIFFERENCES.format(torch_version=TORCH_VERSION))
    out.append(probe_section())
    return "\n".join(out).rstrip("\n") + "\n"


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true",
                        help="exit 1 if docs/api.md differs from what the code gives")
    args = parser.parse_args(argv)
    text = render()
    if args.check:
        current = TABLE.read_text(encoding="utf-8") if TABLE.exists() else ""
        if current != text:
            diff = difflib.unified_diff(current.splitlines(), text.splitlines(),
                                        "docs/api.md (committed)", "docs/api.md (from the code)",
                                        lineterm="", n=0)
            print("\n".join(diff))
            print("docs/api.md is out of date: run `python scripts/api_table.py` "
                  "(or `make api-table`) and commit it.", file=sys.stderr)
            return 1
        return 0
    TABLE.parent.mkdir(parents=True, exist_ok=True)
    TABLE.write_text(text, encoding="utf-8")
    print(f"wrote {TABLE.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
