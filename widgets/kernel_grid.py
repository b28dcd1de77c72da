"""KernelGrid: which CUDA thread of which block computes which element -- from a real launch.

A CUDA kernel runs as a **grid** of **blocks** of **threads**; each thread reads its
``blockIdx`` and ``threadIdx`` and works out which element is its own.  The widget
shows two of the engine's own launch layouts (``learntorch/backends/cuda``), each
recorded by a kernel that really runs -- on the GPU, or thread by thread in Numba's
CUDA simulator where there is none (chosen by ``backends.gpu_or_simulator``):

* ``kernel="map"`` -- an elementwise op: ``driver.launch`` starts ``blocks(numel)``
  blocks of ``threads_per_block()`` threads, and thread ``cuda.grid(1)`` (block *
  threads per block + thread) handles that element of the flattened tensor.  The
  recording kernel writes, for every element, the block and thread that reached it.
* ``kernel="reduce"`` -- ``sum(dim=1)`` as ``backends/cuda/reduction.py`` lays it out:
  one block per row, ``T`` threads; thread ``t`` first folds elements ``t, t+T,
  t+2T, ...`` into a running sum, writes it to a **shared** array, then in log2(T)
  rounds thread ``t < step`` adds slot ``t + step`` into slot ``t``, with
  ``cuda.syncthreads()`` between rounds.  The recording kernel stores the shared
  array after every barrier; ``round`` 0 is the array after the fold.

    >>> import numpy as np
    >>> from widgets import KernelGrid
    >>> x = np.arange(24, dtype=np.float32).reshape(2, 12) % 5
    >>> grid = KernelGrid(x, kernel="reduce", threads=4)
    >>> grid
    KernelGrid(reduce: 2 blocks x 4 threads over a (2, 12) tensor, round 0 of 2)
    >>> grid.folded_by[0].tolist()        # thread t folded elements t, t+4, t+8
    [0, 1, 2, 3, 0, 1, 2, 3, 0, 1, 2, 3]
    >>> grid.shared(0).tolist()           # block 0's shared array after the fold
    [7.0, 5.0, 3.0, 6.0]
    >>> grid.round = 1; grid.shared(0).tolist()     # t < 2 added slot t + 2
    [10.0, 11.0, 3.0, 6.0]
    >>> grid.result().tolist() == x.sum(axis=1).tolist()
    True
"""
import math

import numpy as np

from ._base import Widget
from . import _svg_grid as svg

MAX_ROWS, MAX_ELEMENTS = 8, 32        # what fits a notebook's width, one cell per element
SIDE = 26                             # a cell's side in pixels (smaller than the explorers')
ACTIVE, READ = "#d62728", "#1f77b4"   # outlines: the slots written / read in the round shown
IDLE = "#eeeeee"


def _numpy(value):
    if hasattr(value, "detach"):
        value = value.detach()
        if getattr(value, "device", None) is not None and value.device.type != "cpu":
            value = value.cpu()
        return value.numpy()
    return np.asarray(value)


_KERNELS = {}
# numba.cuda, imported on first launch; a module global, because the simulator runs a
# kernel by swapping the ``cuda`` its globals name for one that knows each thread's indices
cuda = None


def _cuda():
    """numba.cuda, after the simulator was chosen where there is no GPU."""
    global cuda
    from learntorch.backends.gpu_or_simulator import simulate_unless_gpu
    simulate_unless_gpu()
    from numba import cuda
    if not cuda.is_available():
        raise RuntimeError("KernelGrid runs a real CUDA kernel, and CUDA is not usable in "
                           "this process (numba.cuda was imported before the simulator could "
                           "be chosen): restart the kernel, or set NUMBA_ENABLE_CUDASIM=1")
    return cuda


def _map_kernel():
    if "map" not in _KERNELS:
        _cuda()

        @cuda.jit
        def where_each_element_goes(block_of, thread_of):
            i = cuda.grid(1)                # blockIdx.x * blockDim.x + threadIdx.x
            if i < block_of.size:           # threads past the end do nothing
                block_of[i] = cuda.blockIdx.x
                thread_of[i] = cuda.threadIdx.x
        _KERNELS["map"] = where_each_element_goes
    return _KERNELS["map"]


def _tree_kernel(T):
    """The engine's row-sum layout for T threads, storing the shared array after each barrier."""
    if ("tree", T) not in _KERNELS:
        _cuda()
        from numba import float64

        @cuda.jit
        def sum_rows_recorded(x, out, trace, folded_by):
            row, t = cuda.blockIdx.x, cuda.threadIdx.x
            partial = cuda.shared.array(T, float64)
            acc = 0.0
            for j in range(t, x.shape[1], T):      # fold t, t+T, t+2T, ...
                acc += x[row, j]
                folded_by[row, j] = t
            partial[t] = acc
            cuda.syncthreads()
            trace[row, 0, t] = partial[t]          # each thread records its own slot only
            level, step = 1, T // 2
            while step > 0:
                if t < step:
                    partial[t] += partial[t + step]
                cuda.syncthreads()
                trace[row, level, t] = partial[t]
                level += 1
                step //= 2
            if t == 0:
                out[row] = partial[0]
        _KERNELS[("tree", T)] = sum_rows_recorded
    return _KERNELS[("tree", T)]


class KernelGrid(Widget):
    """A small 2-D tensor and the CUDA threads a real launch gave each element.

    * ``x`` -- a 2-D tensor or array (at most 8 rows of 32 elements); default: a 3 x 12
      tensor of small integers;
    * ``kernel`` -- ``"map"`` (one thread per element, the engine's elementwise layout)
      or ``"reduce"`` (one block per row, a shared-memory tree: ``sum(dim=1)``);
    * ``threads`` -- threads per block for ``"reduce"`` (a power of two); None: the
      engine's own choice, ``backends.cuda.reduction.threads(n)``;
    * ``round`` -- the tree round shown (0 = after the fold; ``rounds`` in all);
      ``step()`` / ``reset()``;
    * ``block_of``, ``thread_of`` (map), ``folded_by``, ``trace`` (reduce): what the
      launch recorded; ``shared(block)``, ``result()``, ``owner(row, col)``.

    >>> grid = KernelGrid(kernel="map")
    >>> grid.owner(0, 5)                       # (block, thread) that computed x[0, 5]
    (0, 5)
    """

    def __init__(self, x=None, kernel="map", threads=None):
        if x is None:
            x = np.arange(36, dtype=np.float32).reshape(3, 12) % 7
        x = _numpy(x)
        if x.ndim != 2 or not (1 <= x.shape[0] <= MAX_ROWS and 1 <= x.shape[1] <= MAX_ELEMENTS):
            raise ValueError(f"KernelGrid draws a 2-D tensor of at most {MAX_ROWS} rows of "
                             f"{MAX_ELEMENTS} elements (one cell each), got shape {x.shape}")
        if threads is not None and (threads < 1 or threads & (threads - 1)):
            raise ValueError(f"threads must be a power of two (the tree halves it each round), "
                             f"got {threads}")
        self.x = np.array(x, dtype=np.float32)
        self.threads = threads
        self._pictures = {}
        self._round = 0
        self.kernel = kernel

    # ---- the launches ----------------------------------------------------------------

    @property
    def kernel(self):
        return self._kernel

    @kernel.setter
    def kernel(self, kernel):
        if kernel not in ("map", "reduce"):
            raise ValueError(f"kernel must be 'map' or 'reduce', got {kernel!r}")
        self._kernel = kernel
        if kernel == "map" and not hasattr(self, "block_of"):
            self._launch_map()
        if kernel == "reduce" and not hasattr(self, "trace"):
            self._launch_reduce()
        self._round = min(self._round, self.rounds)

    def _launch_map(self):
        _cuda()                                        # first: it may choose the simulator
        from learntorch.backends.cuda import driver   # the engine's launch geometry
        n = self.x.size
        self.threads_per_block, self.blocks = driver.threads_per_block(), driver.blocks(n)
        block_of, thread_of = np.full(n, -1, np.int32), np.full(n, -1, np.int32)
        driver.launch(_map_kernel(), n)(block_of, thread_of)
        self.block_of = block_of.reshape(self.x.shape)
        self.thread_of = thread_of.reshape(self.x.shape)

    def _launch_reduce(self):
        _cuda()
        from learntorch.backends.cuda import reduction
        rows, n = self.x.shape
        T = self.threads or reduction.threads(n)
        self.tree_threads = T
        levels = int(math.log2(T))
        trace = np.zeros((rows, levels + 1, T), np.float64)
        folded_by = np.full((rows, n), -1, np.int32)
        out = np.zeros(rows, np.float64)
        _tree_kernel(T)[rows, T](self.x.astype(np.float64), out, trace, folded_by)
        self.trace, self.folded_by, self._out = trace, folded_by, out

    # ---- state -------------------------------------------------------------------

    @property
    def rounds(self):
        """Tree rounds after the fold: log2(threads) (0 for ``"map"``)."""
        return int(math.log2(self.tree_threads)) if self.kernel == "reduce" else 0

    @property
    def round(self):
        return self._round

    @round.setter
    def round(self, value):
        if not 0 <= value <= self.rounds:
            raise IndexError(f"round {value} is out of range: 0 (after the fold) to "
                             f"{self.rounds}")
        self._round = int(value)

    def step(self):
        self.round = min(self._round + 1, self.rounds)
        return self._round

    def reset(self):
        self._round = 0

    def owner(self, row, col):
        """(block, thread) that computed ``x[row, col]`` (map) or folded it (reduce)."""
        if self.kernel == "map":
            return int(self.block_of[row, col]), int(self.thread_of[row, col])
        return row, int(self.folded_by[row, col])

    def active_step(self, round=None):
        """The ``step`` of a tree round: threads t < step add slot t + step (0 for round 0)."""
        round = self._round if round is None else round
        return self.tree_threads >> round if round else 0

    def shared(self, block):
        """Block ``block``'s shared array after the round shown (a copy)."""
        return self.trace[block, self._round].copy()

    def result(self):
        """What the reduction wrote: ``out[row]`` = the row's sum."""
        return self._out.copy()

    def matches_engine(self):
        """True when the recorded sums equal the engine's ``sum(dim=1)`` on a cuda tensor."""
        import learntorch
        engine = learntorch.tensor(self.x, device="cuda").sum(dim=1).cpu().numpy()
        return bool(np.allclose(self.result(), engine, rtol=1e-6, atol=1e-6))

    def describe(self):
        rows, n = self.x.shape
        if self.kernel == "map":
            idle = self.blocks * self.threads_per_block - self.x.size
            return (f"{self.blocks} block(s) of {self.threads_per_block} threads for "
                    f"{self.x.size} elements: thread i = blockIdx.x * {self.threads_per_block} + "
                    f"threadIdx.x computes element i of the flattened tensor; {idle} thread(s) "
                    "past the end do nothing")
        T = self.tree_threads
        if self._round == 0:
            return (f"after the fold: thread t of block r added x[r, t], x[r, t+{T}], ... "
                    f"into slot t of the block's shared array; then syncthreads()")
        step = self.active_step()
        done = " -- slot 0 holds the row's sum" if self._round == self.rounds else ""
        return (f"round {self._round} of {self.rounds}: threads t < {step} add slot t + {step} "
                f"into slot t; then syncthreads(){done}")

    def __repr__(self):
        rows, n = self.x.shape
        if self.kernel == "map":
            return (f"KernelGrid(map: {self.blocks} block(s) x {self.threads_per_block} threads "
                    f"over a ({rows}, {n}) tensor)")
        return (f"KernelGrid(reduce: {rows} blocks x {self.tree_threads} threads over a "
                f"({rows}, {n}) tensor, round {self._round} of {self.rounds})")

    # ---- picture -------------------------------------------------------------------

    def static_svg(self):
        key = (self.kernel, self._round)
        if key not in self._pictures:
            self._pictures[key] = self._draw_map() if self.kernel == "map" else self._draw_reduce()
        return self._pictures[key]

    def _draw_map(self):
        rows, n = self.x.shape
        x0, y0 = 70, 60
        body = [svg.text(12, 20, "kernel='map': one thread per element", size=13,
                         weight="bold"), svg.text(12, 40, self.describe(), size=11)]
        for r in range(rows):
            y = y0 + r * (SIDE + 6)
            body.append(svg.text(12, y + SIDE / 2 + 4, f"row {r}", size=11))
            for c in range(n):
                block, thread = self.owner(r, c)
                body.append(svg.cell(x0 + c * SIDE, y, str(thread), size=SIDE,
                                     fill=svg.PALETTE[block % len(svg.PALETTE)],
                                     title=f"x[{r}, {c}] (element {r * n + c}): block {block}, "
                                           f"thread {thread}"))
        height = y0 + rows * (SIDE + 6) + 30
        body.append(svg.text(12, height - 12, "number: threadIdx.x · colour: blockIdx.x",
                             size=10, fill="#555"))
        width = max(x0 + n * SIDE + 20, 24 + 0.62 * 11 * len(self.describe()))
        return svg.document(round(width), height, body)

    def _draw_reduce(self):
        rows, n = self.x.shape
        T, step = self.tree_threads, self.active_step()
        x0, y0, gap = 92, 60, 22
        body = [svg.text(12, 20, f"kernel='reduce': sum(dim=1), one block of {T} threads per row",
                         size=13, weight="bold"), svg.text(12, 40, self.describe(), size=11)]
        band = 2 * SIDE + 8 + gap
        for r in range(rows):
            y = y0 + r * band
            body.append(svg.text(12, y + SIDE / 2 + 4, f"x[{r}]", size=11))
            for c in range(n):
                t = int(self.folded_by[r, c])
                body.append(svg.cell(x0 + c * SIDE, y, svg.number(float(self.x[r, c])), size=SIDE,
                                     fill=svg.PALETTE[t % len(svg.PALETTE)],
                                     title=f"x[{r}, {c}]: folded by thread {t} of block {r}"))
            ys = y + SIDE + 8
            body.append(svg.text(12, ys + SIDE / 2 + 4, f"block {r}", size=11, weight="bold"))
            values = self.trace[r, self._round]
            for t in range(T):
                live = t < (step if self._round else T)
                written = self._round and t < step
                read = self._round and step <= t < 2 * step
                fill = svg.PALETTE[t % len(svg.PALETTE)] if live else IDLE
                stroke, width = (ACTIVE, 2) if written else (READ, 2) if read else ("#555", 1)
                role = (f"written: slot {t} += slot {t + step}" if written else
                        f"read by thread {t - step}" if read else "")
                body.append(svg.cell(x0 + t * SIDE, ys, svg.number(float(values[t])), size=SIDE,
                                     fill=fill, stroke=stroke, stroke_width=width,
                                     title=f"block {r}, shared[{t}] after round {self._round}"
                                           + (f" ({role})" if role else "")))
        height = y0 + rows * band + 24
        legend = ("top: the row, coloured by the thread that folded each element · bottom: the "
                  "shared array · red: written this round · blue: read")
        body.append(svg.text(12, height - 10, legend, size=10, fill="#555"))
        width = max(x0 + max(n, T) * SIDE + 20, 24 + 0.62 * 10 * len(legend),
                    24 + 0.62 * 11 * len(self.describe()))
        return svg.document(round(width), height, body)

    # ---- live view -------------------------------------------------------------------

    def _build_view(self):
        import ipywidgets as w

        self.kernel_control = w.ToggleButtons(options=["map", "reduce"], value=self.kernel,
                                              description="kernel")
        self.round_control = w.IntSlider(value=self._round, min=0, max=self.rounds,
                                         description="round")
        self.step_button = w.Button(description="Step", icon="step-forward",
                                    tooltip="One round of the tree: add, then syncthreads()")
        self.reset_button = w.Button(description="Reset", icon="undo")
        self.picture, self.panel = w.HTML(), w.HTML()
        self.kernel_control.observe(self._kernel_chosen, names="value")
        self.round_control.observe(self._round_moved, names="value")
        self.step_button.on_click(lambda _: self._show_round(self._round + 1))
        self.reset_button.on_click(lambda _: self._show_round(0))
        self._redraw()
        return w.VBox([w.HBox([self.kernel_control, self.step_button, self.reset_button]),
                       self.round_control, self.picture, self.panel])

    def _show_round(self, value):
        # the slider is the one source of truth: its observer moves the state and redraws
        self.round_control.value = max(0, min(value, self.rounds))

    def _kernel_chosen(self, change):
        self.kernel = change["new"]
        self.round_control.max = max(self.rounds, 0)
        self.round_control.value = self._round
        self._redraw()

    def _round_moved(self, change):
        self.round = min(change["new"], self.rounds)
        self._redraw()

    def _redraw(self):
        from html import escape
        self.picture.value = self.static_svg()
        self.panel.value = f"<pre style='white-space:pre-wrap;margin:0'>{escape(self.describe())}</pre>"
        self.round_control.disabled = self.kernel == "map"
        self.step_button.disabled = self.kernel == "map" or self._round == self.rounds
