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
  "trickle:<bytes per second>"
                    send the headers at once, then the body at that rate (a server that never
                    quite stops, nor ever finishes)
  "replace"         replace the object with other bytes of the same size before answering

Set `honour_if_match = False` for a server that ignores If-Match (it still sends the new ETag).
Set `validators` to say which validator answers carry: "etag" (a strong ETag on every answer, the
default), "none" (no ETag, no Last-Modified), "weak" (the weak ETag W/"1" on every answer, whatever
the version), "first_only" (the strong ETag on the first answer of each object, none after); a
server with "none", "weak" or "first_only" also ignores If-Match.

Every request is recorded in `log` as (method, path, Range header, If-Match header).

WebHdfsServer speaks WebHDFS's REST API over the same objects (put("/data/f.h5", ...) is the file
webhdfs://127.0.0.1:<port>/data/f.h5), as a namenode and its datanode in one server:

  GET /webhdfs/v1<path>?op=GETFILESTATUS   200 with {"FileStatus": {"length", "modificationTime",
                                           "type": "FILE", ...}}, or 404 with a RemoteException
  GET /webhdfs/v1<path>?op=OPEN&offset=&length=
                                           307 to /datanode<path>?offset=&length= on this server,
                                           which answers 200 with exactly those bytes

Its faults (plan() as above; the namenode's requests pass the datanode's faults by, untouched,
to the datanode's next request):
"status:<code>", "delay:<seconds>", "replace", and

  "short_body"      the datanode promises the range (Content-Length), sends half, closes
  "long_body"       the datanode sends one byte more than asked, with a Content-Length saying so
  "long_unframed"   the datanode sends one byte more than asked, with no Content-Length (the body
                    ends when the connection closes)
  "redirect_ftp"    OPEN redirects to an ftp:// URL
  "no_redirect"     the namenode answers OPEN itself (200 and the bytes), as WebHDFS may
"""
from __future__ import annotations

import hashlib
import http.server
import json
import re
import threading
import time
import urllib.parse


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
        sent = owner.served.get(path, 0)
        owner.served[path] = sent + 1
        etag = {"etag": etag, "none": None, "weak": 'W/"1"', "first_only": etag if sent == 0 else None}[owner.validators]
        if if_match is not None and if_match != etag and owner.honour_if_match and owner.validators == "etag":
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
        if fault.startswith("trickle:"):
            return self._trickle(body, float(fault.split(":", 1)[1]), etag, content_range)
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

    def _trickle(self, body, rate, etag, content_range):
        self.send_response(206)
        self.send_header("Content-Range", content_range)
        self.send_header("Content-Length", str(len(body)))
        if etag:
            self.send_header("ETag", etag)
        self.end_headers()
        self.wfile.flush()
        try:
            for i in range(len(body)):
                self.wfile.write(body[i:i + 1])
                self.wfile.flush()
                time.sleep(1 / rate)
        except OSError:
            pass  # the client gave up
        self.close_connection = True

    def _send(self, status, body, etag=None, extra=None):
        self.send_response(status)
        if etag:
            self.send_header("ETag", etag)
        for k, v in (extra or {}).items():
            self.send_header(k, v)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


_DATANODE_FAULTS = ("short_body", "long_body", "long_unframed")


class _WebHdfsHandler(_Handler):
    def do_GET(self):  # noqa: N802 (http.server's name)
        owner = self.server.owner
        split = urllib.parse.urlsplit(self.path)
        namenode = split.path.startswith("/webhdfs/v1/")
        fault = owner._next_fault((self.command, self.path, None, None), _DATANODE_FAULTS if namenode else ())
        query = dict(urllib.parse.parse_qsl(split.query))
        if fault.startswith("delay:"):
            time.sleep(float(fault.split(":", 1)[1]))
        if fault.startswith("status:"):
            return self._send(int(fault.split(":", 1)[1]), b'{"RemoteException":{"message":"fault"}}')
        if namenode:
            path = urllib.parse.unquote(split.path[len("/webhdfs/v1"):])
            if fault == "replace":
                owner.replace(path)
            entry = owner.objects.get(path)
            if entry is None:
                return self._send(404, json.dumps({"RemoteException": {
                    "exception": "FileNotFoundException", "javaClassName": "java.io.FileNotFoundException",
                    "message": f"File does not exist: {path}"}}).encode())
            data, _ = entry
            op = query.get("op", "").upper()
            if op == "GETFILESTATUS":
                return self._send(200, json.dumps({"FileStatus": {
                    "accessTime": 0, "blockSize": 134217728, "group": "supergroup", "length": len(data),
                    "modificationTime": owner.modified[path], "owner": "h5tile", "pathSuffix": "",
                    "permission": "644", "replication": 1, "type": "FILE"}}).encode())
            if op != "OPEN":
                return self._send(400, b'{"RemoteException":{"message":"unsupported op"}}')
            if fault == "no_redirect":
                return self._datanode(data, query, "")
            where = f"/datanode{split.path[len('/webhdfs/v1'):]}?{split.query}"
            if fault == "redirect_ftp":
                where = "ftp://127.0.0.1/" + where
            else:
                where = owner.url + where
            return self._send(307, b"", extra={"Location": where})
        if split.path.startswith("/datanode/"):
            entry = owner.objects.get(urllib.parse.unquote(split.path[len("/datanode"):]))
            if entry is None:
                return self._send(404, b"")
            return self._datanode(entry[0], query, fault)
        return self._send(404, b"")

    def _datanode(self, data, query, fault):
        offset = int(query.get("offset", 0))
        length = int(query.get("length", len(data) - offset))
        body = data[offset:offset + length]
        if fault in ("long_body", "long_unframed"):
            body = data[offset:offset + length + 1] if offset + length < len(data) else body + b"\0"
        self.send_response(200)
        self.send_header("Content-Type", "application/octet-stream")
        if fault == "long_unframed":
            self.send_header("Connection", "close")
            self.end_headers()
            self.wfile.write(body)
            self.close_connection = True
            return
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if fault == "short_body":
            self.wfile.write(body[:len(body) // 2])
            self.wfile.flush()
            self.close_connection = True
            return
        self.wfile.write(body)


class FaultServer:
    _handler = _Handler

    class _Server(http.server.ThreadingHTTPServer):
        daemon_threads = True
        owner: "FaultServer"

        def handle_error(self, request, client_address):
            pass  # a client that gave up (a timeout, a refused answer) closes mid-response: expected

    def __init__(self):
        self.objects: dict[str, tuple[bytes, str]] = {}
        self.modified: dict[str, int] = {}  # milliseconds since 1970, as WebHDFS says it
        self.log: list[tuple] = []
        self.honour_if_match = True
        self.validators = "etag"
        self.served: dict[str, int] = {}  # answers sent for each path
        self._lock = threading.Lock()
        self._plan: tuple[str, int, int] = ("", 0, 0)
        self._server = self._Server(("127.0.0.1", 0), self._handler)
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
            self.modified[path] = time.time_ns() // 1_000_000

    def replace(self, path: str) -> None:
        data, _ = self.objects[path]
        self.put(path, bytes(b ^ 0xFF for b in data))

    def plan(self, kind: str, times: int = 1, skip: int = 0) -> None:
        with self._lock:
            self._plan = (kind, times, skip)

    def _next_fault(self, request, passed_by=()) -> str:
        with self._lock:
            self.log.append(request)
            kind, times, skip = self._plan
            if kind in passed_by:
                return ""
            if skip > 0:
                self._plan = (kind, times, skip - 1)
                return ""
            if times > 0:
                self._plan = (kind, times - 1, 0)
                return kind
            return ""


class WebHdfsServer(FaultServer):
    """A WebHDFS namenode and datanode in one (see the module's docstring)."""
    _handler = _WebHdfsHandler

    def webhdfs_url(self, path: str) -> str:
        return f"webhdfs://127.0.0.1:{self._server.server_address[1]}{path}"
