"""ProfilerView: where a training step's time went, op by op, forward and backward.

Drawn from ``learntorch.profiler.profile()``'s own records: the events it timed
(every op's forward under the op's name, ``Linear``; every node's backward under
the node's name, ``LinearBackward0``; ``record_function`` regions) and their
averages per name (``key_averages()``), the numbers its ``table()`` prints.

* ``chart="bars"`` -- one bar per op name, its **self** time (or total time:
  ``sort_by``), blue for forward, orange for backward, grey for labelled regions;
  the longest bar is the op to look at first;
* ``chart="timeline"`` -- every event where it ran: time left to right, an event
  opened inside another one row below it (a flame chart), forward and backward in
  their colours.

    >>> import learntorch as torch
    >>> from learntorch.profiler import profile
    >>> from widgets import ProfilerView
    >>> model = torch.nn.Linear(4, 2)
    >>> with profile() as prof:
    ...     model(torch.ones(3, 4)).sum().backward()
    >>> view = ProfilerView(prof)
    >>> view
    ProfilerView(5 events, 5 ops: 3 forward, 2 backward; chart='bars', show='all', sort_by='self_cpu_time_total')
    >>> sorted(op.key for op in view.ops())      # SumBackward0 runs an Expand op inside it
    ['Expand', 'Linear', 'LinearBackward0', 'Sum', 'SumBackward0']
    >>> view.show = "backward"; sorted(op.key for op in view.shown())
    ['LinearBackward0', 'SumBackward0']
"""
from html import escape

from ._base import Widget
from . import _svg_grid as svg

COLOURS = {"forward": "#1f77b4", "backward": "#ff7f0e", "user": "#9e9e9e"}
SORTS = {"self": "self_cpu_time_total", "total": "cpu_time_total"}
CHARTS, SHOWS = ("bars", "timeline"), ("all", "forward", "backward")
BAR_AREA, ROW = 420, 20       # pixels: the longest bar, one bar's row


class ProfilerView(Widget):
    """A profile's records as a bar chart per op or a timeline of every event.

    * ``prof`` -- a finished ``learntorch.profiler.profile`` (or its ``events()`` list);
    * ``chart`` -- ``"bars"`` or ``"timeline"``; ``show`` -- ``"all"``, ``"forward"``
      or ``"backward"``; ``sort_by`` -- ``"self_cpu_time_total"`` or
      ``"cpu_time_total"``; ``rows`` -- how many bars at most;
    * ``ops()`` -- the averages per op name (``key_averages()``); ``shown()`` the bars
      drawn; ``slowest(kind=None)`` the op with the most time by ``sort_by``;
      ``split()`` self time per kind (forward / backward / user), in microseconds;
    * ``timeline()`` -- ``(event, depth, start_us, end_us)`` for every event.

    >>> from learntorch.profiler import profile
    >>> import learntorch as torch
    >>> with profile() as prof:
    ...     (torch.ones(3, requires_grad=True) * 2).sum().backward()
    >>> ProfilerView(prof, chart="timeline").timeline()[0][1]     # depth of the first event
    0
    """

    def __init__(self, prof, chart="bars", show="all", sort_by="self_cpu_time_total", rows=12):
        self.events = list(prof.events() if hasattr(prof, "events") else prof)
        if not self.events:
            raise ValueError("the profile recorded no events: run some ops inside "
                             "`with profile() as prof:` and pass prof after the block")
        self._averages = list(prof.key_averages())  # the rows of prof.table()
        self._pictures = {}
        self.chart, self.show, self.sort_by, self.rows = chart, show, sort_by, rows

    # ---- state ---------------------------------------------------------------------

    def __setattr__(self, name, value):
        allowed = {"chart": CHARTS, "show": SHOWS, "sort_by": tuple(SORTS.values())}
        if name in allowed and value not in allowed[name]:
            raise ValueError(f"{name} must be one of {', '.join(map(repr, allowed[name]))}, "
                             f"got {value!r}")
        if name == "rows" and not (isinstance(value, int) and value >= 1):
            raise ValueError(f"rows must be a positive int, got {value!r}")
        super().__setattr__(name, value)

    def ops(self):
        """Every op name's averages (count, cpu_time_total, self_cpu_time_total in us)."""
        return list(self._averages)

    def shown(self):
        """The bars drawn: the ops of the kind shown, most time first, at most ``rows``."""
        ops = [op for op in self._averages if self.show in ("all", op.kind)]
        ops.sort(key=lambda op: getattr(op, self.sort_by), reverse=True)
        return ops[:self.rows]

    def slowest(self, kind=None):
        """The name of the op with the most time (by ``sort_by``), of ``kind`` if given."""
        ops = [op for op in self._averages if kind in (None, op.kind) and op.kind != "user"]
        return max(ops, key=lambda op: getattr(op, self.sort_by)).key

    def split(self):
        """Self time per kind, in microseconds: {"forward": ..., "backward": ..., "user": ...}."""
        out = {"forward": 0.0, "backward": 0.0, "user": 0.0}
        for event in self.events:
            out[event.kind] += event.self_cpu_time_total
        return out

    def timeline(self):
        """``(event, depth, start_us, end_us)`` per event, times from the first event's start."""
        t0 = min(e.start_ns for e in self.events)
        rows = []
        for event in sorted(self.events, key=lambda e: e.start_ns):
            depth, parent = 0, event.parent
            while parent is not None:
                depth, parent = depth + 1, parent.parent
            rows.append((event, depth, (event.start_ns - t0) / 1e3, (event.end_ns - t0) / 1e3))
        return rows

    def __repr__(self):
        kinds = [op.kind for op in self._averages]
        return (f"ProfilerView({len(self.events)} events, {len(kinds)} ops: "
                f"{kinds.count('forward')} forward, {kinds.count('backward')} backward"
                + (f", {kinds.count('user')} labelled" if "user" in kinds else "")
                + f"; chart={self.chart!r}, show={self.show!r}, sort_by={self.sort_by!r})")

    # ---- picture -------------------------------------------------------------------

    def static_svg(self):
        key = (self.chart, self.show, self.sort_by, self.rows)
        if key not in self._pictures:
            self._pictures[key] = self._bars() if self.chart == "bars" else self._timeline()
        return self._pictures[key]

    def _legend(self, y):
        body, x = [], 12
        for kind, colour in COLOURS.items():
            body.append(f"<rect x='{x}' y='{y - 10}' width='12' height='12' fill='{colour}'/>")
            body.append(svg.text(x + 16, y, kind if kind != "user" else "record_function",
                                 size=11))
            x += 130
        return body

    def _bars(self):
        ops = self.shown()
        label = max([len(op.key) for op in ops] + [8]) * 7 + 16
        top = max((getattr(op, self.sort_by) for op in ops), default=0) or 1.0
        which = "self" if self.sort_by == "self_cpu_time_total" else "total"
        body = [svg.text(12, 20, f"{which} CPU time per op ({self.show}), most first", size=13,
                         weight="bold")]
        y0 = 36
        for i, op in enumerate(ops):
            y = y0 + i * ROW
            value = getattr(op, self.sort_by)
            width = max(1.0, BAR_AREA * value / top)
            body.append(svg.text(label - 6, y + 13, op.key, size=11, anchor="end"))
            body.append(f"<g><title>{escape(op.key)} ({op.kind}): {op.count} call(s), self "
                        f"{op.self_cpu_time_total:.1f} us, total {op.cpu_time_total:.1f} us"
                        f"</title><rect x='{label}' y='{y + 2}' width='{width:.1f}' "
                        f"height='{ROW - 5}' fill='{COLOURS[op.kind]}'/></g>")
            body.append(svg.text(label + width + 6, y + 13,
                                 f"{_time(value)} · {op.count}x", size=10, fill="#444"))
        height = y0 + len(ops) * ROW + 30
        body += self._legend(height - 10)
        return svg.document(label + BAR_AREA + 120, height, body)

    def _timeline(self):
        rows = [r for r in self.timeline() if self.show in ("all", r[0].kind)
                or r[0].kind == "user"]
        span = max(end for _, _, _, end in rows) or 1.0
        depth = max(d for _, d, _, _ in rows)
        width, x0, y0 = 760, 12, 40
        scale = (width - 2 * x0) / span
        body = [svg.text(12, 20, f"every event in time order ({self.show}): left to right "
                         f"{span:.0f} us; below = inside", size=13, weight="bold")]
        for event, d, start, end in rows:
            x, w = x0 + start * scale, max(1.0, (end - start) * scale)
            y = y0 + d * ROW
            body.append(f"<g><title>{escape(event.name)} ({event.kind}): {end - start:.1f} us "
                        f"from {start:.1f} us</title><rect x='{x:.1f}' y='{y}' width='{w:.1f}' "
                        f"height='{ROW - 3}' fill='{COLOURS[event.kind]}' stroke='white' "
                        "stroke-width='0.5'/></g>")
            if w > 7 * len(event.name) + 6:     # the name where it fits
                body.append(svg.text(x + 3, y + 12, event.name, size=10, fill="white"))
        height = y0 + (depth + 1) * ROW + 30
        body += self._legend(height - 10)
        return svg.document(width, height, body)

    # ---- live view -------------------------------------------------------------------

    def _build_view(self):
        import ipywidgets as w

        self.chart_control = w.ToggleButtons(options=list(CHARTS), value=self.chart,
                                             description="chart")
        self.show_control = w.ToggleButtons(options=list(SHOWS), value=self.show,
                                            description="show")
        self.sort_control = w.ToggleButtons(options=list(SORTS.items()),
                                            value=self.sort_by, description="sort by")
        self.rows_control = w.IntSlider(value=self.rows, min=1, max=max(len(self._averages), 1),
                                        description="rows")
        self.picture, self.panel = w.HTML(), w.HTML()
        for control, name in ((self.chart_control, "chart"), (self.show_control, "show"),
                              (self.sort_control, "sort_by"), (self.rows_control, "rows")):
            control.observe(lambda change, name=name: self._changed(name, change["new"]),
                            names="value")
        self._redraw()
        return w.VBox([self.chart_control, self.show_control, self.sort_control,
                       self.rows_control, self.picture, self.panel])

    def _changed(self, name, value):
        setattr(self, name, value)
        self._redraw()

    def _redraw(self):
        self.picture.value = self.static_svg()
        split = self.split()
        slowest = self.slowest(None if self.show == "all" else self.show)
        self.panel.value = (f"<pre style='margin:0'>forward {split['forward']:.0f} us · backward "
                            f"{split['backward']:.0f} us (self time) · slowest "
                            f"({self.show}): {escape(slowest)}</pre>")


def _time(us):
    """Microseconds as the profiler's table prints them: 12.0us, 3.46ms."""
    return f"{us / 1e3:.2f}ms" if us >= 1e3 else f"{us:.1f}us"
