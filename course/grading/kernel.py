"""Driving one sandboxed kernel through a notebook's cells, from the grader's side.

The grader starts an IPython kernel (``ipykernel``, as JupyterLab does) inside the
sandbox of ``course/grading/sandbox.py`` and talks to it through the Jupyter
protocol over Unix sockets in the run's own folder.  It sends one cell at a time
(``execute``) and waits for that request's reply, with a time limit.

What the checks in the kernel observe comes back through a pipe the grader created
and alone reads: the kernel inherits its writing end as a file descriptor.  A
record read from the pipe while a cell runs belongs to that cell.  The pipe loses
nothing (a writer waits while it is full and the grader keeps reading it), so an
observation an honest notebook made always arrives -- unlike the kernel's
broadcast output channel (iopub), which drops messages when a reader falls behind
and is used here only to count how much a submission prints.

Nothing a record says is trusted: ``read_record`` accepts only well-formed plain
data (``course/observation.py``), the grader decides what to compare with what, and
no file the kernel can write is ever read back -- a process the submission leaves
behind finds no report to append to, and dies with its sandbox at the end of the
run.  The connection's signing key is in a file the kernel reads; the kernel could
forge protocol messages, but only to the grader, about its own run.
"""
import dataclasses
import errno
import json
import os
import secrets
import shutil
import signal
import subprocess
import sys
import time

import zmq
from jupyter_client.session import Session

from .. import observation
from . import sandbox

_MAX_MESSAGE = 64 * 1024 * 1024     # one Jupyter message (zmq refuses longer ones)
_MAX_RECORD = 128 * 1024 * 1024     # one line of the observation pipe
_START_TIMEOUT = 120                # seconds for a kernel to answer its first request
_CONTEXT = zmq.Context()
_CONTEXT.setsockopt(zmq.MAXMSGSIZE, _MAX_MESSAGE)
_CONTEXT.setsockopt(zmq.LINGER, 0)


@dataclasses.dataclass
class CellRun:
    """What happened when one cell ran."""
    status: str            # "ok", "error", "timeout", "died", "output", "out-of-time"
    ename: str = ""        # the exception a failed cell raised (type name and message)
    evalue: str = ""
    records: list = dataclasses.field(default_factory=list)   # checks' observations
    rng: str = None        # an RNG snapshot (instructor's run only)
    exit_status: int = None
    seconds: float = 0.0


class KernelError(RuntimeError):
    """The kernel could not be started at all (a problem of the machine, not of the
    submission): the message says what failed."""


def read_record(line):
    """A record of the observation pipe, checked field by field (WireError otherwise)."""
    try:
        item = json.loads(line)
    except (ValueError, RecursionError) as error:
        raise observation.WireError(f"not JSON ({error})") from None
    if not isinstance(item, dict) or len(item) != 1:
        raise observation.WireError("a record is an object with one field")
    if "rng" in item:
        if not isinstance(item["rng"], str) or len(item["rng"]) > 10_000_000:
            raise observation.WireError("bad rng record")
        return item
    check = item.get("check")
    if not isinstance(check, dict):
        raise observation.WireError("unknown record")
    allowed = {"site", "kind", "name", "inputs", "actual", "expected", "options", "failure"}
    if not set(check) <= allowed:
        raise observation.WireError("unknown check field")
    site = check.get("site")
    if site is not None and (not isinstance(site, int) or isinstance(site, bool)):
        raise observation.WireError("bad site")
    kind = check.get("kind")
    if kind not in ("close", "equal", "shape", "raises", "call"):
        raise observation.WireError("bad kind")
    out = {"site": site, "kind": kind,
           "name": observation.text_field(check.get("name", "")),
           "inputs": observation.text_field(check.get("inputs", ""),
                                            8 * observation.TEXT_LIMIT)}
    actual = check.get("actual")
    if isinstance(actual, dict) and set(actual) <= {"returned", "raised"}:
        out["actual"] = observation.read_outcome(actual)
    else:
        out["actual"] = observation.read_observation(actual)
    expected = check.get("expected")
    if expected is None:
        out["expected"] = None
    elif kind == "raises":
        if not (isinstance(expected, dict) and set(expected) == {"raises", "wanted", "match"}):
            raise observation.WireError("bad raises spec")
        out["expected"] = {"raises": [observation.text_field(t, 300)
                                      for t in expected["raises"]],
                           "wanted": observation.text_field(expected["wanted"], 1000),
                           "match": None if expected["match"] is None
                           else observation.text_field(expected["match"])}
    elif kind == "shape":
        shape = expected.get("shape") if isinstance(expected, dict) else None
        if not (isinstance(shape, list) and all(isinstance(n, int) for n in shape)):
            raise observation.WireError("bad shape spec")
        out["expected"] = {"shape": shape}
    else:
        out["expected"] = observation.read_observation(expected)
    options = check.get("options") or {}
    if not isinstance(options, dict) or not set(options) <= {"atol", "rtol", "check_dtype"} \
            or not all(isinstance(v, (int, float)) for v in options.values()):
        raise observation.WireError("bad options")
    out["options"] = options
    failure = check.get("failure")
    out["failure"] = None if failure is None else observation.text_field(failure,
                                                                    4 * observation.TEXT_LIMIT)
    return {"check": out}


class Kernel:
    """One kernel in one sandbox, for one run of one notebook.

    ``deadline`` (a ``time.monotonic()`` value) ends the whole run: no cell may run
    past it, whatever its own time limit."""

    def __init__(self, isolation, account, limits, base, name, hidden, numba_master,
                 deadline):
        self.isolation, self.account, self.limits = isolation, account, limits
        self.deadline = deadline
        self.folder = os.path.join(base, name)
        self.numba = self.folder + "-numba"
        self.process = None
        self.output_bytes = 0
        self.record_bytes = 0
        self.record_limit = None   # set by the caller from the instructor's run
        self._idle = None          # the request the kernel last said it finished
        self._buffer = b""
        self._pending = []
        self._start(hidden, numba_master)

    # --- starting and stopping -----------------------------------------------

    def _start(self, hidden, numba_master):
        sandbox.prepare(self.folder, self.account, self.isolation, private=False)
        if numba_master and os.path.isdir(numba_master):
            shutil.copytree(numba_master, self.numba)
        os.makedirs(self.numba, exist_ok=True)
        reduced = self.isolation.level == "reduced"
        for path in [self.numba] + ([os.path.join(self.folder, "work"),
                                      os.path.join(self.folder, "home")] if reduced else []):
            sandbox.prepare(path, self.account, self.isolation, private=True)
            if self.isolation.dedicated and self.account.uid != os.getuid():
                for root, dirs, files in os.walk(path):
                    for entry in dirs + files:
                        os.chown(os.path.join(root, entry), self.account.uid, self.account.gid)
        inside = self.folder if reduced else sandbox.KERNEL_DIR
        key = secrets.token_hex(32)
        ports = {"shell_port": 1, "iopub_port": 2, "stdin_port": 3, "control_port": 4,
                 "hb_port": 5}
        connection = dict(ports, transport="ipc", ip=os.path.join(inside, "k"), key=key,
                          signature_scheme="hmac-sha256", kernel_name="")
        path = os.path.join(self.folder, "connection.json")
        with open(path, "w") as stream:
            json.dump(connection, stream)
        if self.isolation.dedicated and self.account.uid != os.getuid():
            os.chown(path, 0, self.account.gid)
            os.chmod(path, 0o640)
        reader, writer = os.pipe()
        self.pipe = reader
        os.set_blocking(reader, False)
        kernel_argv = [sys.executable, "-m", "ipykernel_launcher", "-f",
                       os.path.join(inside, "connection.json"),
                       "--HistoryManager.enabled=False", "--IPKernelApp.quiet=True"]
        argv, env, cwd = sandbox.command(self.isolation, self.account, self.folder,
                                         self.limits, hidden, kernel_argv, self.numba)
        self.stderr = open(self.folder + "-stderr", "w+b")
        try:
            self.process = subprocess.Popen(
                argv, env=env, cwd=cwd, pass_fds=(writer,), stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL, stderr=self.stderr, start_new_session=True)
        except OSError as error:
            raise KernelError(f"cannot start {argv[0]}: {error}") from None
        finally:
            os.close(writer)
        self.channel = writer   # its number in the kernel (pass_fds keeps numbers)
        self.session = Session(key=key.encode("ascii"), signature_scheme="hmac-sha256",
                               username="learntorch-grader")
        prefix = os.path.join(self.folder, "k")
        self.shell = _CONTEXT.socket(zmq.DEALER)
        self.shell.setsockopt(zmq.IDENTITY, self.session.bsession)
        self.shell.connect(f"ipc://{prefix}-{ports['shell_port']}")
        self.iopub = _CONTEXT.socket(zmq.SUB)
        self.iopub.setsockopt(zmq.SUBSCRIBE, b"")
        # one message larger than the whole output limit is over it: zmq refuses it and
        # drops the connection, which the monitor reports
        self.iopub.setsockopt(zmq.MAXMSGSIZE, self.limits.output_mb * 1024 * 1024 + 65536)
        self.iopub.setsockopt(zmq.RCVHWM, 0)
        self.monitor = self.iopub.get_monitor_socket(zmq.EVENT_DISCONNECTED)
        self.iopub.connect(f"ipc://{prefix}-{ports['iopub_port']}")
        self.poller = zmq.Poller()
        for item in (self.shell, self.iopub, self.pipe, self.monitor):
            self.poller.register(item, zmq.POLLIN)
        self._wait_ready()
        sandbox.close(self.folder, self.isolation)

    def _wait_ready(self):
        """Ask for kernel_info until the kernel answers (its sockets may not exist yet:
        zmq connects to an ipc path as soon as it appears)."""
        limit = min(self.deadline, time.monotonic() + _START_TIMEOUT)
        asked = None
        while time.monotonic() < limit:
            if self.process.poll() is not None:
                break
            if asked is None or time.monotonic() - asked > 1.0:
                self.session.send(self.shell, "kernel_info_request", {})
                asked = time.monotonic()
            for socket, _ in self.poller.poll(100):
                if socket is self.shell:
                    message = self._receive(self.shell)
                    if message and message["msg_type"] == "kernel_info_reply":
                        self._drain_iopub()
                        return
                elif socket is self.iopub:
                    self._receive(self.iopub)
                elif self.pipe is not None:
                    self._read_pipe()
        self.stop_process()
        self.stderr.seek(0)
        tail = self.stderr.read()[-2000:].decode("utf-8", "replace").strip()
        self.stop()
        if time.monotonic() >= self.deadline:
            raise TimeoutError("the time for the whole notebook ran out while its kernel "
                               "started")
        raise KernelError(f"the grading kernel did not start (exit status "
                          f"{self.process.returncode}): {tail or 'no message'}")

    def alive(self):
        return self.process is not None and self.process.poll() is None

    def stop(self):
        """Kill the sandbox and everything in it, and wait until it is gone."""
        if self.process is not None and self.process.poll() is None:
            try:
                os.killpg(self.process.pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                self.process.kill()
        if self.process is not None:
            self.process.wait()
        sandbox.sweep(self.account)
        if getattr(self, "iopub", None) is not None:
            self.poller.unregister(self.monitor)
            self.iopub.disable_monitor()
            self.monitor.close(linger=0)
        for socket in (getattr(self, "shell", None), getattr(self, "iopub", None)):
            if socket is not None:
                socket.close(linger=0)
        if getattr(self, "pipe", None) is not None:
            self._close_pipe()
        self.stderr.close()

    def exit_status(self):
        """The kernel's exit status as a signal number when it was killed by one
        (bubblewrap reports 128 + signal), else None."""
        code = self.process.returncode
        if code is None:
            return None
        if code < 0:
            return -code
        return code - 128 if code > 128 else None

    # --- messages ----------------------------------------------------------------

    def _receive(self, socket):
        try:
            _, message = self.session.recv(socket, mode=zmq.NOBLOCK, content=True)
        except zmq.Again:
            return None
        except Exception:   # unsigned, truncated or undecodable: not from this protocol
            return None
        return message

    def _drain_iopub(self):
        while self._count_output(self._receive(self.iopub)):
            pass

    def _iopub_lost(self):
        """The kernel's output connection dropped: an oversized message, unless the
        kernel died (which closes it too)."""
        try:
            self.monitor.recv_multipart(zmq.NOBLOCK)
        except zmq.Again:
            return False
        try:
            self.process.wait(timeout=1.0)
        except subprocess.TimeoutExpired:
            self.output_bytes = float("inf")
        return True

    def _await_idle(self, msg_id, limit):
        """Count the output of request ``msg_id`` until the kernel says it is idle (the
        reply can overtake the output on its way): ``limit`` seconds at most."""
        end = min(time.monotonic() + limit, self.deadline)
        while time.monotonic() < end and self._idle != msg_id:
            for socket, _ in self.poller.poll(50):
                if socket is self.iopub:
                    for _ in range(1000):
                        if not self._count_output(self._receive(self.iopub)):
                            break
                        if self._idle == msg_id:
                            return
                elif socket is self.monitor and self._iopub_lost():
                    return
                elif socket is self.pipe and self.pipe is not None:
                    self._read_pipe()
            if not self.alive():
                return

    def _count_output(self, message):
        if message is None:
            return False
        kind = message.get("msg_type")
        content = message.get("content") or {}
        if kind == "status" and content.get("execution_state") == "idle":
            self._idle = (message.get("parent_header") or {}).get("msg_id")
        if kind == "stream":
            self.output_bytes += len(str(content.get("text", "")))
        elif kind in ("display_data", "execute_result", "update_display_data", "error"):
            self.output_bytes += len(json.dumps(content, default=str))
        return True

    def _read_pipe(self):
        while True:
            try:
                chunk = os.read(self.pipe, 1 << 20)
            except BlockingIOError:
                return
            except OSError as error:
                if error.errno == errno.EAGAIN:
                    return
                raise
            if not chunk:   # every writer is gone (the kernel died, or closed it)
                self._close_pipe()
                return
            self.record_bytes += len(chunk)
            self._buffer += chunk
            while b"\n" in self._buffer:
                line, self._buffer = self._buffer.split(b"\n", 1)
                try:
                    self._pending.append(read_record(line))
                except observation.WireError:
                    self._pending.append({"malformed": True})
            if len(self._buffer) > _MAX_RECORD:
                self._buffer = b""
                self.record_bytes = float("inf")   # one endless line: over any limit

    def _close_pipe(self):
        if self.pipe is not None:
            self.poller.unregister(self.pipe)
            os.close(self.pipe)
            self.pipe = None

    def _over_limit(self):
        if self.output_bytes > self.limits.output_mb * 1024 * 1024:
            return True
        return self.record_limit is not None and self.record_bytes > self.record_limit

    def execute(self, code, timeout, silent=False):
        """Run ``code`` as one cell; returns a CellRun."""
        start = time.monotonic()
        self._pending = []
        if not self.alive():
            return CellRun("died", exit_status=self.exit_status())
        request = self.session.send(self.shell, "execute_request", {
            "code": code, "silent": silent, "store_history": not silent,
            "user_expressions": {}, "allow_stdin": False, "stop_on_error": False})
        msg_id = request["header"]["msg_id"]
        cell_deadline = start + timeout
        while True:
            now = time.monotonic()
            if now >= self.deadline:
                return self._ended("out-of-time", start)
            if now >= cell_deadline:
                return self._ended("timeout", start)
            ready = dict(self.poller.poll(int(1000 * min(0.5, self.deadline - now,
                                                             cell_deadline - now)) + 1))
            if self.pipe is not None and self.pipe in ready:
                self._read_pipe()
            if self.iopub in ready:
                for _ in range(1000):
                    if not self._count_output(self._receive(self.iopub)):
                        break
            if self.monitor in ready:
                self._iopub_lost()
            if self._over_limit():
                return self._ended("output", start)
            if self.shell in ready:
                message = self._receive(self.shell)
                if message and message["msg_type"] == "execute_reply" and \
                        message.get("parent_header", {}).get("msg_id") == msg_id:
                    if self.pipe is not None:
                        self._read_pipe()   # what the cell wrote before it replied
                    self._await_idle(msg_id, 2.0)
                    if self._over_limit():
                        return self._ended("output", start)
                    content = message.get("content") or {}
                    failed = content.get("status") != "ok"
                    return self._finish(CellRun(
                        "error" if failed else "ok",
                        ename=observation.cap(content.get("ename", ""), 300) if failed else "",
                        evalue=observation.cap(content.get("evalue", "")) if failed else ""),
                        start)
            if not self.alive():
                if self.pipe is not None:
                    self._read_pipe()
                return self._ended("died", start)

    def _finish(self, run, start):
        run.records = [r for r in self._pending if "check" in r or "malformed" in r]
        rng = [r["rng"] for r in self._pending if "rng" in r]
        run.rng = rng[-1] if rng else None
        run.seconds = time.monotonic() - start
        self._pending = []
        return run

    def _ended(self, status, start):
        """The cell did not finish: the kernel is killed (its state is gone anyway)."""
        if status != "died":
            self.stop_process()
        run = CellRun(status, exit_status=self.exit_status())
        return self._finish(run, start)

    def stop_process(self):
        if self.process.poll() is None:
            try:
                os.killpg(self.process.pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                self.process.kill()
        self.process.wait()

    def remove(self):
        """Remove the run's folders (after ``stop``)."""
        for path in (self.folder, self.numba, self.folder + "-stderr"):
            if os.path.isdir(path):
                shutil.rmtree(path, ignore_errors=True)
            elif os.path.exists(path):
                os.unlink(path)
