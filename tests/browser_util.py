"""Headless Chromium for the tests, driven through chromedriver's WebDriver HTTP interface with the
standard library (Debian's `chromium` and `chromium-driver`; no Python package needed)."""
from __future__ import annotations

import base64
import json
import shutil
import socket
import subprocess
import time
import urllib.error
import urllib.request
from pathlib import Path

CHROMIUM = ("chromium", "chromium-browser")
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--window-size=1280,1000"]


def missing() -> str | None:
    """Why no browser can be started here (None when one can)."""
    if not shutil.which("chromedriver"):
        return "chromedriver not found (Debian package chromium-driver; ./benchcast.sh test installs it as root)"
    if not any(shutil.which(c) for c in CHROMIUM):
        return "chromium not found (Debian package chromium; ./benchcast.sh test installs it as root)"
    return None


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Browser:
    """One headless Chromium session; the browser's console is kept (``console()``)."""

    def __init__(self, timeout: float = 30):
        port = _free_port()
        self.base = f"http://127.0.0.1:{port}"
        self.proc = subprocess.Popen(["chromedriver", f"--port={port}"], stdout=subprocess.DEVNULL,
                                     stderr=subprocess.DEVNULL)
        try:
            deadline = time.monotonic() + timeout
            while True:
                try:
                    if self._call("GET", "/status")["ready"]:
                        break
                except (urllib.error.URLError, ConnectionError):
                    pass
                if time.monotonic() > deadline or self.proc.poll() is not None:
                    raise RuntimeError("chromedriver did not start")
                time.sleep(0.1)
            binary = next(shutil.which(c) for c in CHROMIUM if shutil.which(c))
            caps = {"browserName": "chrome", "goog:chromeOptions": {"binary": binary, "args": ARGS},
                    "goog:loggingPrefs": {"browser": "ALL"}}
            self.session = self._call("POST", "/session", {"capabilities": {"alwaysMatch": caps}})["sessionId"]
        except BaseException:
            self.proc.terminate()
            self.proc.wait()
            raise

    def _call(self, method: str, path: str, body=None):
        data = None if body is None else json.dumps(body).encode()
        req = urllib.request.Request(self.base + path, data=data, method=method,
                                     headers={"Content-Type": "application/json"})
        try:
            with urllib.request.urlopen(req, timeout=120) as resp:
                return json.loads(resp.read())["value"]
        except urllib.error.HTTPError as exc:
            raise RuntimeError(f"webdriver {method} {path}: {exc.read().decode()[:500]}") from None

    def _session(self, method: str, path: str, body=None):
        return self._call(method, f"/session/{self.session}{path}", body)

    def get(self, url: str) -> None:
        self._session("POST", "/url", {"url": url})

    def js(self, script: str, *args):
        """Run ``script`` (a function body: ``return ...``) in the page."""
        return self._session("POST", "/execute/sync", {"script": script, "args": list(args)})

    def wait(self, script: str, timeout: float = 30, *args):
        """Poll ``script`` until it returns something true; return it (or the last value at the
        timeout)."""
        deadline = time.monotonic() + timeout
        while True:
            value = self.js(script, *args)
            if value or time.monotonic() > deadline:
                return value
            time.sleep(0.2)

    def frame(self, index) -> None:
        """Switch into the ``index``-th iframe of the page (None: back to the page)."""
        self._session("POST", "/frame", {"id": index})

    def console(self) -> list[dict]:
        """The browser console's entries since the last call (level, message)."""
        return self._session("POST", "/se/log", {"type": "browser"})

    def screenshot(self, path) -> Path:
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(base64.b64decode(self._session("GET", "/screenshot")))
        return path

    def close(self) -> None:
        try:
            self._call("DELETE", f"/session/{self.session}")
        finally:
            self.proc.terminate()
            self.proc.wait()
