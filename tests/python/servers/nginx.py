"""nginx (Debian's) serving a folder over HTTP on 127.0.0.1, run as the current user in the
foreground from a generated configuration: pid, logs and temporary files in a folder of the
caller's, a free port, stopped (and killed if it lingers) by stop()."""
from __future__ import annotations

import os
import pathlib
import shutil
import socket
import subprocess
import time


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def executable() -> str | None:
    """The nginx binary, or None (tests then skip, saying so)."""
    return shutil.which("nginx") or next((p for p in ("/usr/sbin/nginx",) if os.access(p, os.X_OK)), None)


class Nginx:
    """`root` served read-only at http://127.0.0.1:<port>/ (Range, ETag, If-Match, keep-alive);
    `workdir` holds the configuration, pid, logs and temporary folders."""

    def __init__(self, root: pathlib.Path, workdir: pathlib.Path):
        self.root = pathlib.Path(root).resolve()
        self.workdir = pathlib.Path(workdir).resolve()
        self.port = 0
        self.process: subprocess.Popen | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def access_log(self) -> pathlib.Path:
        return self.workdir / "access.log"

    def requests(self) -> list[str]:
        """The access log's lines so far: one per request served. nginx writes a line after it has
        sent the response, so read until the log has stopped growing for 0.1 s."""
        def lines():
            return self.access_log.read_text().splitlines() if self.access_log.exists() else []
        seen = lines()
        while True:
            time.sleep(0.1)
            again = lines()
            if again == seen:
                return seen
            seen = again

    def _config(self) -> str:
        w = self.workdir
        # As root, nginx would hand its worker to "nobody", which cannot read a private folder:
        # one process, and it stays the user that started it.
        user = "user root;" if os.geteuid() == 0 else ""
        temps = "\n".join(f"    {name}_temp_path {w / ('tmp-' + name)};"
                          for name in ("client_body", "proxy", "fastcgi", "uwsgi", "scgi"))
        return f"""
daemon off;
master_process off;
{user}
worker_processes 1;
pid {w / 'nginx.pid'};
error_log {w / 'error.log'} info;
events {{ worker_connections 256; }}
http {{
    # nginx's combined format, the request's Range header appended (which part each request took).
    log_format ranges '$remote_addr - $remote_user [$time_local] "$request" $status $body_bytes_sent '
                      '"$http_referer" "$http_user_agent" "$http_range"';
    access_log {self.access_log} ranges;
{temps}
    default_type application/octet-stream;
    keepalive_requests 100000;
    server {{
        listen 127.0.0.1:{self.port};
        root {self.root};
        location / {{ }}
    }}
}}
"""

    def start(self, timeout: float = 10.0) -> "Nginx":
        binary = executable()
        if binary is None:
            raise RuntimeError("nginx is not installed (scripts/install_deps.sh installs it)")
        self.workdir.mkdir(parents=True, exist_ok=True)
        for attempt in range(5):  # another program may take the free port first
            self.port = free_port()
            conf = self.workdir / "nginx.conf"
            conf.write_text(self._config())
            self.process = subprocess.Popen(
                [binary, "-p", str(self.workdir), "-e", str(self.workdir / "error.log"), "-c", str(conf)],
                stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
            deadline = time.monotonic() + timeout
            while time.monotonic() < deadline:
                if self.process.poll() is not None:
                    break
                try:
                    with socket.create_connection(("127.0.0.1", self.port), timeout=0.2):
                        return self
                except OSError:
                    time.sleep(0.05)
            err = self.process.stderr.read().decode(errors="replace") if self.process.poll() is not None else ""
            self.stop()
            if "Address already in use" not in err:
                log = (self.workdir / "error.log").read_text() if (self.workdir / "error.log").exists() else ""
                raise RuntimeError(f"nginx did not start: {err} {log[-2000:]}")
        raise RuntimeError("nginx did not find a free port in 5 tries")

    def stop(self) -> None:
        if self.process is None:
            return
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        if self.process.stderr:
            self.process.stderr.close()
        self.process = None
