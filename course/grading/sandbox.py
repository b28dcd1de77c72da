"""Where a notebook runs during grading: a kernel inside a sandbox, under limits.

Grading never writes a sandbox of its own: it puts together the command line of
tools every Debian/Ubuntu machine has or can install --

- ``bwrap`` (bubblewrap, Debian package ``bubblewrap``): new mount, PID, network, IPC
  and UTS namespaces.  The kernel sees a filesystem of read-only system and Python
  folders, the course's own packages (without the instructor sources in
  ``course/solutions`` and ``course/authoring``), an empty working folder and an
  empty home on size-limited tmpfs, and one folder of its own for the kernel's
  sockets.  Nothing else: no other submission, no instructor source, no ``--out``,
  no gradebook.  It has no network and sees no process outside its sandbox; when
  the sandbox's first process is killed, every process in it dies with it (a
  ``setsid`` daemon included);
- ``setpriv`` (util-linux): when the grader is root, the kernel runs as a dedicated
  unprivileged user, one per parallel job (``learntorch-grader-1``, ...; created the
  first time, reused after), with no capabilities and no way to gain any;
- ``prlimit`` (util-linux): limits on address space, CPU time, processes, open files
  and file size, which the kernel cannot raise.

Three levels, chosen once per grading run (``detect``) and printed by the command:

- ``full``: root, and bubblewrap works -- all of the above;
- ``namespaces``: not root, and bubblewrap can make a user namespace -- the same
  sandbox, but the kernel runs as the instructor's own user (a hole in the sandbox
  would have the instructor's rights);
- ``reduced``: no bubblewrap -- only a new session, the limits and (as root) the
  dedicated user.  The submission can then read every file its user can read, see
  other processes, and, when the grader is not root, signal the grader.
"""
import dataclasses
import os
import pwd
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

# what the kernel sees as its folders, inside a sandbox
KERNEL_DIR = "/grading/kernel"
WORK_DIR = "/grading/work"
HOME_DIR = "/grading/home"
NUMBA_DIR = "/grading/numba"
# the course's own packages: the kernel imports them; everything else of the project
# (tests, instructor sources, authoring scripts) stays out of the sandbox
PACKAGES = ("learntorch", "widgets", "course")
SECRET_PARTS = ("course/solutions", "course/authoring")
USER_PREFIX = "learntorch-grader-"
_ETC = ("ld.so.cache", "ld.so.conf", "ld.so.conf.d", "fonts", "localtime", "passwd", "group",
        "nsswitch.conf", "alternatives", "mime.types", "hosts")
_MB = 1024 * 1024


@dataclasses.dataclass
class Limits:
    """What one submission's kernel may use.  Each limit, when hit, is its own status
    in the gradebook (see course/grading/judge.py)."""
    memory_mb: int = 2048       # address space of each process (RLIMIT_AS)
    cpu_seconds: int = None     # CPU time of each process (RLIMIT_CPU); by default the
                                # submission's time limit plus a minute (one thread each)
    processes: int = 256        # processes and threads of the sandbox's user (RLIMIT_NPROC)
    open_files: int = 256       # file descriptors of each process (RLIMIT_NOFILE)
    file_size_mb: int = 64      # any one file it writes (RLIMIT_FSIZE)
    disk_mb: int = 256          # its working folder and /tmp (tmpfs size), each
    output_mb: int = 16         # what it prints and displays (counted by the grader)

    def prlimit(self):
        return ["prlimit", f"--as={self.memory_mb * _MB}",
                f"--cpu={self.cpu_seconds}:{self.cpu_seconds + 5}",
                f"--nproc={self.processes}", f"--nofile={self.open_files}",
                f"--fsize={self.file_size_mb * _MB}", "--core=0", "--"]


@dataclasses.dataclass
class Isolation:
    level: str              # "full", "namespaces" or "reduced"
    reason: str = ""        # why it is not "full"
    dedicated: bool = False  # kernels run as dedicated users (the grader is root)

    def describe(self):
        if self.level == "full":
            return ("isolation: full -- each submission runs in a bubblewrap sandbox (own "
                    "filesystem view, no network, own process namespace) as a dedicated "
                    "unprivileged user, under limits")
        if self.level == "namespaces":
            return (f"isolation reduced: {self.reason}; each submission still runs in a "
                    f"bubblewrap sandbox (own filesystem view, no network, own process "
                    f"namespace) under limits, but as your own user: run the grader as root "
                    f"for a dedicated unprivileged user")
        who = ("a dedicated unprivileged user" if self.dedicated else "your own user")
        return (f"isolation reduced: {self.reason}; submissions run as {who} in a new "
                f"session under limits only, so they can read every file that user can read "
                f"and see other processes" + ("" if self.dedicated else
                                             ", can signal the grader, and a process that "
                                             "leaves their session can outlive grading")
                + ". Install bubblewrap (apt-get install bubblewrap) for a sandbox")


def detect(force=None):
    """The isolation this machine allows.  ``force`` asks on purpose for what a grader
    that is not root gets -- "namespaces" (bubblewrap, own user) or "reduced" (no
    bubblewrap, own user) -- so that those paths can be tried (and tested) as root."""
    root = os.geteuid() == 0
    if force not in (None, "namespaces", "reduced"):
        raise ValueError(f"isolation {force!r}: choose namespaces or reduced (or leave it "
                         f"out for the strongest this machine allows)")
    if force == "reduced":
        return Isolation("reduced", "reduced isolation was asked for")
    bwrap = shutil.which("bwrap")
    if bwrap is None:
        return Isolation("reduced", "bubblewrap (bwrap) is not installed", dedicated=root)
    namespaces = force == "namespaces" or not root
    probe = [bwrap, "--ro-bind", "/", "/", "--unshare-pid", "--unshare-net",
             "--die-with-parent"] + (["--unshare-user"] if namespaces else []) + ["--", "true"]
    try:
        done = subprocess.run(probe, capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired) as error:
        return Isolation("reduced", f"bubblewrap does not start ({error})")
    if done.returncode != 0:
        why = (done.stderr.strip().splitlines() or ["no message"])[-1]
        return Isolation("reduced", f"bubblewrap cannot make namespaces here ({why})",
                         dedicated=root and not namespaces)
    if namespaces:
        reason = ("namespaces isolation was asked for" if root
                  else "the grader is not root, so submissions cannot run as a dedicated user")
        return Isolation("namespaces", reason)
    return Isolation("full", dedicated=True)


# --- dedicated users ---------------------------------------------------------------

@dataclasses.dataclass
class Account:
    """The user a job's kernels run as (as root), or the grader's own user."""
    name: str
    uid: int
    gid: int


def _user(name):
    """The dedicated user ``name``, created (``useradd --system``) when it is missing."""
    try:
        return pwd.getpwnam(name)
    except KeyError:
        pass
    done = subprocess.run(
        ["useradd", "--system", "--user-group", "--no-create-home", "--home-dir",
         "/nonexistent", "--shell", "/usr/sbin/nologin", "--comment",
         "learntorch grading sandbox", name], capture_output=True, text=True)
    if done.returncode != 0 and "already exists" not in done.stderr:
        raise RuntimeError(f"cannot create the grading user {name}: "
                           f"{done.stderr.strip() or done.returncode}; create it with: "
                           f"useradd --system --user-group {name}")
    return pwd.getpwnam(name)


class Accounts:
    """The users a grading run's kernels run as, one per parallel job.

    With dedicated users, each is held with a lock for as long as the grading run
    lasts: two grading runs at once (two instructors, or the test suite's workers)
    never share one, so one run's clean-up (``sweep``) or process limit never
    touches the other's kernels.  Without them, every job uses the grader's user."""

    LOCKS = "/run/learntorch-grading"
    MOST = 64

    def __init__(self, jobs, isolation):
        self.held, self.locks = [], []
        if not isolation.dedicated:
            me = pwd.getpwuid(os.getuid()).pw_name
            self.held = [Account(me, os.getuid(), os.getgid())] * jobs
            return
        import fcntl
        folder = self.LOCKS if os.path.isdir("/run") else tempfile.gettempdir()
        os.makedirs(folder, mode=0o700, exist_ok=True)
        for number in range(1, self.MOST + 1):
            if len(self.held) == jobs:
                break
            lock = open(os.path.join(folder, f"{USER_PREFIX}{number}.lock"), "w")
            try:
                fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError:
                lock.close()
                continue
            entry = _user(f"{USER_PREFIX}{number}")
            self.locks.append(lock)
            self.held.append(Account(entry.pw_name, entry.pw_uid, entry.pw_gid))
        if len(self.held) < jobs:
            self.release()
            raise RuntimeError(f"all {self.MOST} grading users are busy with other grading "
                               f"runs; wait for one to end, or use fewer --jobs")

    def release(self):
        for lock in self.locks:
            lock.close()
        self.locks = []


def check_account(isolation, account):
    """Without a sandbox, a dedicated user must be able to run this Python from where it
    is installed; say how to fix it when it cannot."""
    if isolation.level != "reduced" or not isolation.dedicated:
        return
    packages = package_folders()
    env = environment(sorted({os.path.dirname(f) for f in packages.values()}),
                      {"HOME": "/", "NUMBA_CACHE_DIR": tempfile.gettempdir()})
    done = subprocess.run(["setpriv", f"--reuid={account.uid}", f"--regid={account.gid}",
                           "--clear-groups", "--", sys.executable, "-c", "import course.checks"],
                          env=env, capture_output=True, text=True, timeout=120, cwd="/")
    if done.returncode != 0:
        why = (done.stderr.strip().splitlines() or ["no message"])[-1]
        raise RuntimeError(
            f"without bubblewrap, submissions run as the user {account.name}, who cannot run "
            f"{sys.executable} with the course's packages ({why}); install bubblewrap "
            f"(apt-get install bubblewrap), or install Python and the course where other "
            f"users can read them")


def sweep(account):
    """Kill every process of a dedicated user (as root): whatever a submission left
    running, wherever it hid.  The grader's own processes are never that user's."""
    if os.geteuid() != 0 or account.uid == os.getuid():
        return
    # kill(-1) as that user reaches all of its processes (but not the caller itself)
    subprocess.run(["kill", "-KILL", "-1"], user=account.uid, group=account.gid,
                   extra_groups=[], capture_output=True, timeout=60)


# --- the command line ---------------------------------------------------------------

def _python_folders():
    """The folders the kernel's Python needs: its installation and virtual environment."""
    folders = {sys.base_prefix, sys.prefix, sys.exec_prefix, sys.base_exec_prefix,
               os.path.dirname(os.path.realpath(sys.executable))}
    return sorted(f for f in folders if f and not f.startswith("/usr/"))


def package_folders():
    """Where the course's packages are imported from in the grader (its PYTHONPATH
    and editable install decide), as ``{name: folder}``."""
    import importlib.util
    found = {}
    for name in PACKAGES:
        spec = importlib.util.find_spec(name)
        if spec is not None and spec.submodule_search_locations:
            found[name] = os.path.realpath(list(spec.submodule_search_locations)[0])
    return found


def _parents(path):
    parts = Path(path).parts
    return [str(Path(*parts[:i])) for i in range(2, len(parts))]


def _inside(path, folder):
    return path == folder or path.startswith(folder.rstrip("/") + "/")


def environment(python_path, extra=None):
    """The kernel's environment: nothing of the grader's but what a chapter needs."""
    env = {"PATH": os.pathsep.join([os.path.dirname(sys.executable), "/usr/local/bin",
                                    "/usr/bin", "/bin"]),
           "HOME": HOME_DIR, "TMPDIR": "/tmp", "LANG": "C.UTF-8", "LC_ALL": "C.UTF-8",
           "PYTHONPATH": os.pathsep.join(python_path), "PYTHONHASHSEED": "0",
           "PYTHONDONTWRITEBYTECODE": "1", "NUMBA_CACHE_DIR": NUMBA_DIR,
           "MPLBACKEND": "agg", "JUPYTER_PLATFORM_DIRS": "1",
           # one thread per kernel: the jobs run in parallel, and the instructor's run
           # and every submission compute in the same order (the same rounding)
           "OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1", "MKL_NUM_THREADS": "1",
           "NUMBA_NUM_THREADS": "1"}
    for key, value in os.environ.items():
        # the engine's own switches (LEARNTORCH_REFERENCE, NUMBA_ENABLE_CUDASIM, ...)
        if key.startswith(("LEARNTORCH_", "NUMBA_")) and key not in env:
            env[key] = value
    env.update(extra or {})
    return env


def command(isolation, account, run_dir, limits, hidden, kernel_argv, numba_dir):
    """``(argv, env, cwd)`` that start ``kernel_argv`` for one run.

    ``run_dir`` (a host folder the grader made) holds the kernel's connection file and
    sockets; ``numba_dir`` its copy of the compiled-kernel cache; ``hidden`` the host
    paths the kernel must not see even where they lie inside a folder it needs
    (instructor sources, --out, submissions, the grader's work folders)."""
    packages = package_folders()
    python_path = sorted({os.path.dirname(folder) for folder in packages.values()})
    drop = ([] if not isolation.dedicated or account.uid == os.getuid() else
            ["setpriv", f"--reuid={account.uid}", f"--regid={account.gid}", "--clear-groups",
             "--inh-caps=-all", "--bounding-set=-all", "--no-new-privs", "--"])
    if isolation.level == "reduced":
        folders = {"work": Path(run_dir) / "work", "home": Path(run_dir) / "home"}
        env = environment(python_path, {"HOME": str(folders["home"]),
                                        "NUMBA_CACHE_DIR": str(numba_dir),
                                        "TMPDIR": str(folders["work"])})
        if drop:
            drop = drop[:-1] + ["--pdeathsig=KILL", "--"]
        return drop + limits.prlimit() + kernel_argv, env, str(folders["work"])
    argv = ["bwrap"]
    made = {"/grading"}
    argv += ["--perms", "0755", "--dir", "/grading"]

    def dirs_for(target):
        for parent in _parents(target):
            if parent not in made:
                made.add(parent)
                argv.extend(["--perms", "0755", "--dir", parent])

    argv += ["--ro-bind", "/usr", "/usr"]
    for name in ("bin", "sbin", "lib", "lib32", "lib64", "libx32"):
        path = f"/{name}"
        if os.path.islink(path):
            argv += ["--symlink", os.readlink(path), path]
        elif os.path.isdir(path):
            argv += ["--ro-bind", path, path]
    argv += ["--perms", "0755", "--dir", "/etc"]
    for name in _ETC:
        if os.path.exists(f"/etc/{name}"):
            argv += ["--ro-bind", f"/etc/{name}", f"/etc/{name}"]
    bound = []
    for folder in _python_folders() + sorted(packages.values()):
        if any(_inside(folder, b) for b in bound):
            continue
        dirs_for(folder)
        argv += ["--ro-bind", folder, folder]
        bound.append(folder)
    secrets = [os.path.join(packages["course"], "..", part) for part in SECRET_PARTS] \
        if "course" in packages else []
    for path in [os.path.realpath(p) for p in secrets] + [os.path.realpath(p) for p in hidden]:
        if any(_inside(path, b) for b in bound) and os.path.exists(path):
            argv += (["--perms", "0000", "--tmpfs", path] if os.path.isdir(path)
                     else ["--ro-bind", "/dev/null", path])
    size = str(limits.disk_mb * _MB)
    argv += ["--proc", "/proc", "--dev", "/dev",
             "--perms", "1777", "--size", size, "--tmpfs", "/tmp",
             "--perms", "1777", "--size", size, "--tmpfs", "/dev/shm",
             "--perms", "1777", "--size", size, "--tmpfs", WORK_DIR,
             "--perms", "1777", "--size", str(64 * _MB), "--tmpfs", HOME_DIR,
             "--bind", str(run_dir), KERNEL_DIR, "--bind", str(numba_dir), NUMBA_DIR,
             "--unshare-pid", "--unshare-net", "--unshare-ipc", "--unshare-uts",
             "--unshare-cgroup-try", "--hostname", "grading",
             "--die-with-parent", "--new-session", "--chdir", WORK_DIR]
    if isolation.level == "namespaces":
        argv += ["--unshare-user"]
    env = environment(python_path)
    argv += ["--clearenv"]
    for key, value in env.items():
        argv += ["--setenv", key, value]
    argv += ["--"] + drop + limits.prlimit() + kernel_argv
    return argv, {"PATH": os.environ.get("PATH", "/usr/bin:/bin")}, None


def prepare(path, account, isolation, private=True):
    """Make ``path`` (a folder) usable by the kernel's user: its own when ``private``,
    else root's with the account's group (so that it can be closed later)."""
    os.makedirs(path, exist_ok=True)
    if not isolation.dedicated or account.uid == os.getuid():
        os.chmod(path, 0o700)
        return
    if private:
        os.chown(path, account.uid, account.gid)
        os.chmod(path, 0o700)
    else:
        os.chown(path, 0, account.gid)
        os.chmod(path, 0o770)


def close(path, isolation):
    """After the kernel made its sockets: its user can no longer add files to ``path``."""
    if isolation.dedicated:
        os.chmod(path, 0o750)
