"""Profiler events, their averages per op, and the table torch's profiler prints.

Times are kept in integer nanoseconds and shown in microseconds like torch
(``cpu_time_total`` etc. are in us, floats).
"""
import enum


class ProfilerActivity(enum.Enum):
    CPU = "cpu"
    CUDA = "cuda"


class FunctionEvent:
    """One call: an op's forward, a node's backward, or a ``record_function`` region."""

    __slots__ = ("name", "kind", "input_shapes", "start_ns", "end_ns", "child_ns", "parent")

    def __init__(self, name, kind, input_shapes, start_ns, end_ns=None):
        self.name, self.kind, self.input_shapes = name, kind, input_shapes
        self.start_ns, self.end_ns = start_ns, end_ns
        self.child_ns = 0  # time spent in the events opened inside this one
        self.parent = None

    @property
    def key(self):
        return self.name

    @property
    def count(self):
        return 1

    @property
    def cpu_time_total(self):
        return (self.end_ns - self.start_ns) / 1e3

    @property
    def self_cpu_time_total(self):
        return (self.end_ns - self.start_ns - self.child_ns) / 1e3

    @property
    def cpu_time(self):
        return self.cpu_time_total

    def __repr__(self):
        return (f"<FunctionEvent name={self.name} kind={self.kind} "
                f"cpu_time_total={self.cpu_time_total:.3f}us>")


class FunctionEventAvg:
    """All the calls of one op (one name, and one input shape when grouped by shape)."""

    __slots__ = ("key", "kind", "input_shapes", "count", "cpu_time_total", "self_cpu_time_total")

    def __init__(self, key, kind, input_shapes):
        self.key, self.kind, self.input_shapes = key, kind, input_shapes
        self.count = 0
        self.cpu_time_total = 0.0
        self.self_cpu_time_total = 0.0

    def add(self, event):
        self.count += 1
        self.cpu_time_total += event.cpu_time_total
        self.self_cpu_time_total += event.self_cpu_time_total

    @property
    def cpu_time(self):
        """Average time per call, in us."""
        return self.cpu_time_total / self.count if self.count else 0.0

    def __repr__(self):
        return (f"<FunctionEventAvg key={self.key} count={self.count} "
                f"cpu_time_total={self.cpu_time_total:.3f}us>")


_SORT_KEYS = ("cpu_time_total", "self_cpu_time_total", "cpu_time", "count")


class EventList(list):
    """A list of events (or of averages), with ``key_averages()`` and ``table()``."""

    def key_averages(self, group_by_input_shape=False):
        groups = {}
        for event in self:
            shapes = event.input_shapes if group_by_input_shape else None
            key = (event.name, str(shapes) if group_by_input_shape else None)
            if key not in groups:
                groups[key] = FunctionEventAvg(event.name, event.kind, shapes)
            groups[key].add(event)
        return EventList(groups.values())

    @property
    def self_cpu_time_total(self):
        return sum(e.self_cpu_time_total for e in self)

    def table(self, sort_by="cpu_time_total", row_limit=100, max_name_column_width=55):
        """The text table torch's ``key_averages().table()`` prints (CPU columns)."""
        if sort_by not in _SORT_KEYS:
            raise ValueError(f"sort_by={sort_by!r} is not one of {', '.join(_SORT_KEYS)}")
        rows = sorted(self, key=lambda e: getattr(e, sort_by), reverse=True)
        if row_limit is not None and row_limit >= 0:
            rows = rows[:row_limit]
        return format_table(rows, self.self_cpu_time_total, max_name_column_width)


def format_time(us):
    """Microseconds as torch prints them: 12.000us, 3.456ms, 1.234s."""
    if us >= 1e6:
        return f"{us / 1e6:.3f}s"
    if us >= 1e3:
        return f"{us / 1e3:.3f}ms"
    return f"{us:.3f}us"


def format_table(rows, self_total_us, name_width_limit):
    with_shapes = any(getattr(r, "input_shapes", None) is not None for r in rows)
    width = min(max([len("Name")] + [len(r.key) for r in rows]) + 4, name_width_limit)
    headers = ["Self CPU %", "Self CPU", "CPU total %", "CPU total", "CPU time avg",
               "# of Calls"]
    if with_shapes:
        headers.append("Input Shapes")
    column = 14
    line = "-" * width + "  " + "  ".join("-" * column for _ in headers)
    out = [line, "Name".rjust(width) + "  " + "  ".join(h.rjust(column) for h in headers), line]
    total = self_total_us or 1.0
    for r in rows:
        name = r.key if len(r.key) <= width else r.key[:width - 3] + "..."
        cells = [f"{100 * r.self_cpu_time_total / total:.2f}%",
                 format_time(r.self_cpu_time_total),
                 f"{100 * r.cpu_time_total / total:.2f}%",
                 format_time(r.cpu_time_total), format_time(r.cpu_time), str(r.count)]
        if with_shapes:
            cells.append(str(r.input_shapes))
        out.append(name.rjust(width) + "  " + "  ".join(c.rjust(column) for c in cells))
    out.append(line)
    out.append(f"Self CPU time total: {format_time(self_total_us)}")
    return "\n".join(out) + "\n"
