"""Fixtures of the real-browser tests: Debian's Chromium, a private JupyterLab, one page.

The browser tests check what headless tests cannot: that the widgets' views
really render in JupyterLab's widget manager, and that moving a control there
changes the picture.  Everything runs on this machine, offline:

* ``chromium`` -- Debian's ``chromium`` package, driven by Playwright
  (``playwright install`` would download a browser; it is never needed);
* ``jupyter_lab`` -- ``python -m jupyter lab`` from this Python, bound to
  127.0.0.1 with a random token, in a temporary folder that holds copies of the
  notebooks, its own kernel spec (this Python) and its own settings (all cells
  rendered, no news, no update checks); stopped at the end of the session by the
  process id it was started with;
* ``page`` -- a fresh browser page per test module.

Screenshots go to ``test-artifacts/browser/`` at the repository root (git-ignored).
"""
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
import uuid
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
ARTIFACTS = HERE.parent.parent / "test-artifacts" / "browser"

# Debian's chromium running as root in a container: no sandbox (it needs user
# namespaces), no GPU, and nothing that would try the (closed) network.
CHROMIUM_ARGS = [
    "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-quic",
    "--no-first-run", "--disable-component-update", "--disable-sync",
]
INSTALL_CHROMIUM = "sudo apt-get install chromium   (or: make test, which installs it as root)"

SERVER_START_SECONDS = 90


# ---- the browser ------------------------------------------------------------------------

@pytest.fixture(scope="session")
def chromium_executable():
    """Path of Debian's chromium; skip without it (fail under CI, where it must be there)."""
    path = shutil.which("chromium")
    if path is None:
        message = f"the browser tests need Debian's chromium on PATH: {INSTALL_CHROMIUM}"
        if os.environ.get("CI"):
            pytest.fail(message, pytrace=False)
        pytest.skip(message)
    return path


@pytest.fixture(scope="session")
def browser(chromium_executable):
    """One headless Chromium for the session (Playwright gives it a fresh temporary profile)."""
    sync_api = pytest.importorskip("playwright.sync_api", reason="pip install playwright")
    with sync_api.sync_playwright() as playwright:
        chromium = playwright.chromium.launch(
            executable_path=chromium_executable, headless=True, args=CHROMIUM_ARGS)
        try:
            yield chromium
        finally:
            chromium.close()


@pytest.fixture(scope="module")
def page(browser):
    """A fresh page (its own context: cookies, storage) per test module."""
    context = browser.new_context(viewport={"width": 1400, "height": 1200})
    new_page = context.new_page()
    try:
        yield new_page
    finally:
        context.close()


@pytest.fixture(scope="session")
def artifacts():
    """The folder for screenshots (git-ignored), created on first use."""
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    return ARTIFACTS


# ---- the JupyterLab server ----------------------------------------------------------------

def free_port():
    """A TCP port on 127.0.0.1 that nobody listens on right now."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def write_json(path, data):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, indent=1), encoding="utf-8")


def private_jupyter_folders(base):
    """Environment variables that give the server its own data, config and settings.

    The user's own ``~/.jupyter`` settings (a notebook windowing mode, a theme)
    must not change what the test sees, and the kernel must be this Python.
    """
    data = base / "data"
    # JUPYTER_PATH is searched first, so this spec wins over any other 'python3'
    write_json(data / "kernels" / "python3" / "kernel.json", {
        "argv": [sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}"],
        "display_name": "Python 3 (browser tests)", "language": "python"})
    settings = base / "lab-settings"
    # windowingMode 'none': JupyterLab 4 otherwise leaves cells outside the viewport
    # unrendered, and a widget that is never attached never renders
    write_json(settings / "@jupyterlab" / "notebook-extension" / "tracker.jupyterlab-settings",
               {"windowingMode": "none"})
    write_json(settings / "@jupyterlab" / "apputils-extension" / "notification.jupyterlab-settings",
               {"fetchNews": "false", "checkForUpdates": False})
    return {
        "JUPYTER_PATH": str(data),
        "JUPYTER_DATA_DIR": str(base / "user-data"),
        "JUPYTER_CONFIG_DIR": str(base / "config"),
        "JUPYTER_RUNTIME_DIR": str(base / "runtime"),
        "JUPYTERLAB_SETTINGS_DIR": str(settings),
        "JUPYTERLAB_WORKSPACES_DIR": str(base / "workspaces"),
        "IPYTHONDIR": str(base / "ipython"),
    }


class JupyterLab:
    """A running ``jupyter lab`` on 127.0.0.1: its URLs, its folder, its log."""

    def __init__(self, process, port, token, root_dir, log_path):
        self.process, self.port, self.token = process, port, token
        self.root_dir, self.log_path = root_dir, log_path

    def url(self, path=""):
        return f"http://127.0.0.1:{self.port}/{path.lstrip('/')}?token={self.token}"

    def notebook_url(self, name):
        """The JupyterLab page that opens ``name`` (a file in the server's folder)."""
        return self.url(f"lab/tree/{name}")

    def log_tail(self, lines=40):
        text = self.log_path.read_text(encoding="utf-8", errors="replace")
        return "\n".join(text.splitlines()[-lines:])

    def wait_until_ready(self, seconds):
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"jupyter lab exited with code {self.process.returncode}:\n"
                                   f"{self.log_tail()}")
            try:
                with urllib.request.urlopen(self.url("api/status"), timeout=2) as response:
                    if response.status == 200:
                        return
            except (urllib.error.URLError, ConnectionError, TimeoutError):
                pass
            time.sleep(0.25)
        raise RuntimeError(f"jupyter lab did not answer on port {self.port} within {seconds} s:\n"
                           f"{self.log_tail()}")

    def stop(self):
        """Terminate the server we started (it shuts its kernels down), then kill if it hangs."""
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(timeout=10)
        # a kernel the server failed to shut down is still in the server's own process
        # group (started with start_new_session): end it by that group's id
        try:
            os.killpg(self.process.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass


@pytest.fixture(scope="session")
def jupyter_lab(chromium_executable, tmp_path_factory):
    """JupyterLab serving a temporary folder with copies of this folder's notebooks."""
    base = tmp_path_factory.mktemp("jupyterlab")
    root_dir = base / "notebooks"
    root_dir.mkdir()
    for notebook in HERE.glob("*.ipynb"):
        shutil.copy(notebook, root_dir / notebook.name)
    env = {**os.environ, **private_jupyter_folders(base), "PYTHONUNBUFFERED": "1"}
    port, token = free_port(), uuid.uuid4().hex
    command = [
        sys.executable, "-m", "jupyter", "lab", "--no-browser",
        "--ip=127.0.0.1", f"--port={port}", f"--ServerApp.token={token}",
        f"--ServerApp.root_dir={root_dir}", "--ServerApp.port_retries=0",
        # the page reaches the app (run all cells, read outputs) through window.jupyterapp
        "--LabApp.expose_app_in_browser=True",
        # offline: no news feed, no update check, no PyPI extension manager
        "--LabApp.news_url=None",
        "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate",
        "--LabApp.extension_manager=readonly",
    ]
    if os.geteuid() == 0:  # Jupyter refuses root unless told that it is meant
        command.append("--allow-root")
    log_path = base / "jupyter-lab.log"
    with open(log_path, "wb") as log:
        process = subprocess.Popen(command, cwd=root_dir, env=env, stdout=log,
                                   stderr=subprocess.STDOUT, start_new_session=True)
    server = JupyterLab(process, port, token, root_dir, log_path)
    try:
        server.wait_until_ready(SERVER_START_SECONDS)
        yield server
    finally:
        server.stop()
