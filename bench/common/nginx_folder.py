"""nginx serving one folder over HTTP on loopback, for the remote-read benchmark.

    with NginxFolder(folder, work_dir) as web:
        web.url("file.h5")           # http://127.0.0.1:<port>/file.h5 (Range, ETag, keep-alive)
        web.requests()               # requests served so far (lines of its access log)
        web.ranges()                 # (Range header, bytes sent) of each of them

Debian's nginx, started as the current user in the foreground (`daemon off`), with a generated
configuration, its pid, logs and temporary folders inside `work_dir`, on a free port of
127.0.0.1. Stopped with SIGQUIT (graceful), then SIGKILL after a timeout.
"""
from __future__ import annotations

import getpass
import grp
import os
import shutil
import signal
import socket
import subprocess
import time
import urllib.error
import urllib.request
from pathlib import Path

_CONF = """worker_processes {workers};
daemon off;
master_process on;
{user}
pid {work}/nginx.pid;
error_log {work}/error.log warn;
events {{ worker_connections 1024; }}
http {{
    log_format ranges '$remote_addr - $remote_user [$time_local] "$request" $status $body_bytes_sent '
                      '"$http_referer" "$http_user_agent" "$http_range"';
    access_log {work}/access.log ranges;
    client_body_temp_path {work}/client_body;
    proxy_temp_path {work}/proxy;
    fastcgi_temp_path {work}/fastcgi;
    uwsgi_temp_path {work}/uwsgi;
    scgi_temp_path {work}/scgi;
    types {{ application/x-hdf5 h5; }}
    default_type application/octet-stream;
    sendfile on;
    tcp_nopush on;
    keepalive_timeout 65;
    keepalive_requests 100000;
    server {{
        listen 127.0.0.1:{port};
        root {root};
        location / {{ }}
    }}
}}
"""


def nginx_binary() -> str | None:
    """$H5TILE_NGINX (a machine without the package: a copied binary), else nginx on PATH or /usr/sbin."""
    if os.environ.get("H5TILE_NGINX"):
        return os.environ["H5TILE_NGINX"]
    return shutil.which("nginx") or next((p for p in ("/usr/sbin/nginx",) if os.access(p, os.X_OK)), None)


class NginxFolder:
    def __init__(self, root, work, workers: int = 2, stop_timeout: float = 10.0):
        self.root = Path(root).resolve()
        self.work = Path(work).resolve()
        self.workers = workers
        self.stop_timeout = stop_timeout
        self.port = None
        self.proc = None

    def start(self) -> "NginxFolder":
        binary = nginx_binary()
        if binary is None:
            raise RuntimeError("nginx is not installed (apt-get install nginx)")
        self.work.mkdir(parents=True, exist_ok=True)
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            self.port = s.getsockname()[1]
        # As root, nginx's workers would switch to `nobody`, who may not read a private folder.
        user = ""
        if os.geteuid() == 0:
            user = f"user {getpass.getuser()} {grp.getgrgid(os.getegid()).gr_name};"
        conf = self.work / "nginx.conf"
        conf.write_text(_CONF.format(workers=self.workers, user=user, work=self.work, port=self.port,
                                     root=self.root))
        self._log = open(self.work / "stderr.log", "ab")
        self.proc = subprocess.Popen([binary, "-p", str(self.work), "-e", str(self.work / "error.log"), "-c",
                                      str(conf)], stdin=subprocess.DEVNULL, stdout=self._log,
                                     stderr=subprocess.STDOUT, start_new_session=True)
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"nginx exited with {self.proc.returncode}: "
                                   f"{(self.work / 'error.log').read_text(errors='replace')[-2000:]}")
            try:
                urllib.request.urlopen(f"http://127.0.0.1:{self.port}/", timeout=2).close()
                return self
            except urllib.error.HTTPError:
                return self  # 403/404 for the folder itself: it answers
            except OSError:
                time.sleep(0.05)
        self.stop()
        raise RuntimeError(f"nginx did not answer on port {self.port} within 30 s")

    def stop(self):
        if self.proc is None:
            return
        if self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGQUIT)
            try:
                self.proc.wait(self.stop_timeout)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait()
        self.proc = None
        self._log.close()

    def __enter__(self) -> "NginxFolder":
        return self.start()

    def __exit__(self, *exc):
        self.stop()

    def url(self, name: str) -> str:
        return f"http://127.0.0.1:{self.port}/{name}"

    def ranges(self) -> list:
        """(Range header or "", bytes sent) of every request logged so far, in order."""
        try:
            lines = (self.work / "access.log").read_text().splitlines()
        except FileNotFoundError:
            return []
        out = []
        for line in lines:
            fields = line.split('"')
            out.append((fields[-2] if fields[-2] != "-" else "", int(fields[2].split()[1])))
        return out

    def requests(self) -> int:
        """Requests logged so far (nginx writes each line when the response is complete)."""
        try:
            with open(self.work / "access.log", "rb") as f:
                return sum(1 for _ in f)
        except FileNotFoundError:
            return 0
