"""A small HTTP/1.1 server of our own, threaded, on 127.0.0.1, that serves objects held in memory
and misbehaves on purpose, for the fault tests of remote reads.

Objects are set with put(path, data) (a new ETag each time: replace() during a read is "the
object changed"). A fault is planned with plan(kind, times=N, skip=M): the M requests after the
call are served well, the N after them get the fault, the rest are served well again. Kinds:

  "status:<code>"   answer with that status (503, 429, 500, 403, 404, ...) and a short body
  "drop"            send the headers and half the body, then close the connection
  "ignore_range"    answer 200 with the whole object, as a server without Range support does
  "short_body"      206 with a Content-Length (and Content-Range) that promise the whole range,
                    half the body, then close
  "short_length"    206 with the right Content-Range but a Content-Length of half the range, and
                    that many bytes (a server that lies consistently)
  "wrong_range"     206 with a Content-Range one byte later than asked (and those bytes)
  "delay:<seconds>" wait before the first byte of the response
  "replace"         replace the object with other bytes of the same size before answering

Set `honour_if_match = False` for a server that ignores If-Match (it still sends the new ETag).

Every request is recorded in `log` as (method, path, Range header, If-Match header).
"""
from __future__ import annotations

import hashlib
import http.server
import re
import threading
import time


class _Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: "FaultServer._Server"

    def log_message(self, *args):  # quiet
        pass

    def do_GET(self):  # noqa: N802 (http.server's name)
        owner = self.server.owner
        rng = self.headers.get("Range")
        if_match = self.headers.get("If-Match")
        fault = owner._next_fault((self.command, self.path, rng, if_match))
        path = self.path.split("?", 1)[0]
        if fault.startswith("delay:"):
            time.sleep(float(fault.split(":", 1)[1]))
        if fault == "replace":
            owner.replace(path)
        if fault.startswith("status:"):
            return self._send(int(fault.split(":", 1)[1]), b"fault\n")
        entry = owner.objects.get(path)
        if entry is None:
            return self._send(404, b"not found\n")
        data, etag = entry
        if if_match is not None and if_match != etag and owner.honour_if_match:
            return self._send(412, b"precondition failed\n", etag=etag)
        m = re.fullmatch(r"bytes=(\d+)-(\d*)", rng or "")
        if fault == "ignore_range" or m is None:
            return self._send(200, data, etag=etag)
        first = int(m.group(1))
        last = min(int(m.group(2)) if m.group(2) else len(data) - 1, len(data) - 1)
        if first >= len(data):
            return self._send(416, b"", etag=etag, extra={"Content-Range": f"bytes */{len(data)}"})
        body = data[first:last + 1]
        content_range = f"bytes {first}-{last}/{len(data)}"
        if fault == "wrong_range":
            body = data[first + 1:last + 2]
            content_range = f"bytes {first + 1}-{first + len(body)}/{len(data)}"
        if fault == "short_length":
            body = body[:len(body) // 2]
        if fault in ("drop", "short_body"):
            self.send_response(206)
            self.send_header("Content-Range", content_range)
            self.send_header("Content-Length", str(len(body)))
            self.send_header("ETag", etag)
            self.end_headers()
            self.wfile.write(body[:len(body) // 2])
            self.wfile.flush()
            self.close_connection = True
            return
        return self._send(206, body, etag=etag, extra={"Content-Range": content_range})

    def _send(self, status, body, etag=None, extra=None):
        self.send_response(status)
        if etag:
            self.send_header("ETag", etag)
        for k, v in (extra or {}).items():
            self.send_header(k, v)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


class FaultServer:
    class _Server(http.server.ThreadingHTTPServer):
        daemon_threads = True
        owner: "FaultServer"

        def handle_error(self, request, client_address):
            pass  # a client that gave up (a timeout, a refused answer) closes mid-response: expected

    def __init__(self):
        self.objects: dict[str, tuple[bytes, str]] = {}
        self.log: list[tuple] = []
        self.honour_if_match = True
        self._lock = threading.Lock()
        self._plan: tuple[str, int, int] = ("", 0, 0)
        self._server = self._Server(("127.0.0.1", 0), _Handler)
        self._server.owner = self
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    def start(self) -> "FaultServer":
        self._thread.start()
        return self

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=5)

    def put(self, path: str, data: bytes) -> None:
        etag = '"' + hashlib.sha1(data + str(time.monotonic_ns()).encode()).hexdigest()[:16] + '"'
        with self._lock:
            self.objects[path] = (bytes(data), etag)

    def replace(self, path: str) -> None:
        data, _ = self.objects[path]
        self.put(path, bytes(b ^ 0xFF for b in data))

    def plan(self, kind: str, times: int = 1, skip: int = 0) -> None:
        with self._lock:
            self._plan = (kind, times, skip)

    def _next_fault(self, request) -> str:
        with self._lock:
            self.log.append(request)
            kind, times, skip = self._plan
            if skip > 0:
                self._plan = (kind, times, skip - 1)
                return ""
            if times > 0:
                self._plan = (kind, times - 1, 0)
                return kind
            return ""
