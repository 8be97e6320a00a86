"""An HTTP/1.1 reverse proxy on loopback in front of an S3 server, that fails chosen requests.

    with S3FaultProxy.in_front_of(seaweedfs.endpoint) as proxy:     # or S3FaultProxy(host, port)
        env = dict(seaweedfs.aws_env(), AWS_ENDPOINT_URL=proxy.endpoint)
        proxy.fail("UploadPart", nth=3, status=503)            # the 3rd UploadPart gets a 503 S3 error
        proxy.fail("UploadPart", nth=2, times=None)            # every UploadPart from the 2nd on: 500
        proxy.fail("UploadPart", part=2)                       # the first UploadPart of part number 2
        proxy.drop("UploadPart", nth=2, after_bytes=65536)     # read 64 KiB of the body, then hang up
        proxy.lose_response("CompleteMultipartUpload")         # the server completes, the client never hears
        proxy.fail("CompleteMultipartUpload", status=200)      # S3's 200 OK with an <Error> body
        proxy.count("UploadPart"), proxy.count("AbortMultipartUpload")
        proxy.requests("UploadPart")                           # [Request(kind, part, fault, status, ...)]
        proxy.clear()                                          # no rules any more (the log stays)

Every request that no rule picks is forwarded unchanged, on a connection to the server of its
own (one per client connection, kept alive as the client's is): the request line, the headers as
the client sent them (Host included: SigV4 signs it, and it names the proxy, which the server
does not check) and the body (Content-Length or chunked); `Expect: 100-continue` goes through,
and the server's 100 Continue comes back. The answer comes back unchanged (Content-Length,
chunked or close-delimited). Clients must use path-style addressing (boto3 does for an IP
endpoint): the bucket and key are read from the path.

Each request is classified by method, query and path into an S3 operation, its `kind`:
CreateMultipartUpload, UploadPart, UploadPartCopy, CompleteMultipartUpload, AbortMultipartUpload,
ListParts, ListMultipartUploads, PutObject, CopyObject, GetObject, HeadObject, DeleteObject,
DeleteObjects, ListObjects, or Other (bucket operations, ?acl, ?tagging, ...).

A rule picks requests by kind (a name, a tuple of names, or None for any) and optionally bucket,
key and part number; it counts the requests it matches from the moment it is added, and acts on the
`nth` of them and the `times - 1` after it (`times=None`: on every one from the `nth` on). Rules are
tried in the order they were added; the first that acts wins, and every matching rule counts the
request. The actions:

  fail(status, code, message, before_body)
        The request is not forwarded. The proxy reads the whole body (answering an `Expect:
        100-continue` with 100 Continue itself), then answers `status` with an S3 error XML body
        (<Error><Code>...</Code><Message>...</Message><Resource>...</Resource><RequestId>...),
        keeping the connection alive. The code defaults by status: 500 InternalError, 503 SlowDown,
        400 InvalidRequest, 403 AccessDenied, 404 NoSuchUpload/NoSuchKey, 409 OperationAborted,
        412 PreconditionFailed, 429 SlowDown, 501 NotImplemented, 504 GatewayTimeout, other 5xx
        InternalError. status=200 sends the 200 OK with an <Error> body (code InternalError) that S3
        may send for CompleteMultipartUpload and copies, which botocore retries. before_body=True
        answers right after the headers, without reading the body, and closes the connection (a
        client that sent `Expect: 100-continue` then sends no body).
  drop(after_bytes)
        The request is not forwarded. The proxy reads `after_bytes` bytes of the body as sent
        (chunk framing included; 0: none, None: all of it, a shorter body: all of it), answering an
        `Expect: 100-continue` itself where it reads any, then closes the connection without an
        answer (an RST where unread bytes remain, else a FIN).
  lose_response()
        The request is forwarded and the server acts on it; its answer is read and thrown away, and
        the client's connection is closed without an answer: the client cannot tell whether its
        request took effect.
  delay(seconds)
        The request is forwarded after `seconds`.

Every request is logged as it arrives (faulted ones included) as a `Request` whose `status` is
filled in when the client has been answered (None: it never was) and whose `fault` names the
action taken (None: forwarded unchanged).

Threads, not asyncio, as in latency_proxy.py: a client under test may block; the proxy must not
depend on its event loop. Loopback only; `stop` (or leaving the `with`) closes every connection
and returns when all its threads have ended.

multipart_uploads(client, bucket, prefix), list_parts(client, bucket, key, upload_id) and
list_keys(client, bucket, prefix) are the boto3 look-ups a test of aborted uploads needs, and
boto3_client(endpoint, access_key, secret_key, region, attempts) makes a client for the proxy.
"""
from __future__ import annotations

import dataclasses
import itertools
import select
import socket
import threading
import time
import urllib.parse
from email.utils import formatdate
from xml.sax.saxutils import escape

KINDS = ("CreateMultipartUpload", "UploadPart", "UploadPartCopy", "CompleteMultipartUpload",
         "AbortMultipartUpload", "ListParts", "ListMultipartUploads", "PutObject", "CopyObject", "GetObject",
         "HeadObject", "DeleteObject", "DeleteObjects", "ListObjects", "Other")

# Query parameters that make a request on an object something other than a plain GET/PUT/HEAD/DELETE.
_OBJECT_SUBRESOURCES = {"acl", "tagging", "retention", "legal-hold", "attributes", "torrent", "restore",
                        "select", "select-type", "uploads", "uploadId", "renameObject"}
# Query parameters of a bucket listing (ListObjects/ListObjectsV2); x-id is botocore's operation tag.
_LISTING_PARAMS = {"list-type", "prefix", "delimiter", "marker", "continuation-token", "max-keys",
                   "encoding-type", "start-after", "fetch-owner", "x-id"}

_REASONS = {100: "Continue", 200: "OK", 400: "Bad Request", 403: "Forbidden", 404: "Not Found",
            409: "Conflict", 412: "Precondition Failed", 429: "Too Many Requests", 500: "Internal Server Error",
            501: "Not Implemented", 502: "Bad Gateway", 503: "Service Unavailable", 504: "Gateway Timeout"}
_CODES = {200: "InternalError", 400: "InvalidRequest", 403: "AccessDenied", 409: "OperationAborted",
          412: "PreconditionFailed", 429: "SlowDown", 500: "InternalError", 501: "NotImplemented",
          503: "SlowDown", 504: "GatewayTimeout"}
_MESSAGES = {"InternalError": "We encountered an internal error. Please try again.",
             "SlowDown": "Please reduce your request rate.",
             "NoSuchUpload": "The specified upload does not exist.",
             "NoSuchKey": "The specified key does not exist.",
             "AccessDenied": "Access Denied",
             "PreconditionFailed": "At least one of the pre-conditions you specified did not hold"}
_UPLOAD_KINDS = {"UploadPart", "UploadPartCopy", "CompleteMultipartUpload", "AbortMultipartUpload", "ListParts"}
_MAX_LINE = 65536
_MAX_HEAD = 1 << 20


def classify(method: str, target: str, headers=()) -> tuple[str, str | None, str | None, dict]:
    """(kind, bucket, key, query) of a path-style S3 request; `headers`: (name, value) pairs."""
    split = urllib.parse.urlsplit(target)
    query = urllib.parse.parse_qs(split.query, keep_blank_values=True)
    parts = split.path.lstrip("/").split("/", 1)
    bucket = urllib.parse.unquote(parts[0]) or None
    key = urllib.parse.unquote(parts[1]) if len(parts) > 1 and parts[1] else None
    copy = any(name.lower() == "x-amz-copy-source" for name, _ in headers)
    m = method.upper()
    kind = "Other"
    if key is not None:
        if "uploadId" in query:
            kind = {"PUT": ("UploadPartCopy" if copy else "UploadPart") if "partNumber" in query else "Other",
                    "POST": "CompleteMultipartUpload", "DELETE": "AbortMultipartUpload",
                    "GET": "ListParts"}.get(m, "Other")
        elif "uploads" in query:
            kind = "CreateMultipartUpload" if m == "POST" else "Other"
        elif not set(query) & _OBJECT_SUBRESOURCES:
            kind = {"PUT": "CopyObject" if copy else "PutObject", "GET": "GetObject", "HEAD": "HeadObject",
                    "DELETE": "DeleteObject"}.get(m, "Other")
    elif bucket is not None:
        if m == "GET" and "uploads" in query:
            kind = "ListMultipartUploads"
        elif m == "GET" and set(query) <= _LISTING_PARAMS:
            kind = "ListObjects"
        elif m == "POST" and "delete" in query:
            kind = "DeleteObjects"
    return kind, bucket, key, query


@dataclasses.dataclass
class Request:
    """One request as the proxy saw it."""
    kind: str
    method: str
    target: str                 # path and query, as sent
    bucket: str | None
    key: str | None
    part: int | None            # partNumber (UploadPart), else None
    upload_id: str | None
    fault: str | None = None    # "fail:<status>", "drop", "lose_response", "delay"; None: forwarded
    status: int | None = None   # the final status the client got; None: no answer (yet, or ever)
    body_bytes: int = 0         # request body bytes the proxy read (as sent: chunk framing included)
    arrived: float = 0.0        # time.monotonic()
    headers: list = dataclasses.field(default_factory=list)  # (name, value) pairs, as sent

    def header(self, name: str) -> str | None:
        """A header's value (case-insensitive; repeated ones joined by commas); None where absent."""
        values = [v for k, v in self.headers if k.lower() == name.lower()]
        return ", ".join(values) if values else None


@dataclasses.dataclass
class Rule:
    """A fault rule (see the module's docstring); `seen`: requests it matched, `fired`: acted on."""
    action: str
    kind: str | tuple | None
    nth: int = 1
    times: int | None = 1
    bucket: str | None = None
    key: str | None = None
    part: int | None = None
    status: int = 500
    code: str | None = None
    message: str | None = None
    before_body: bool = False
    after_bytes: int | None = 0
    seconds: float = 0.0
    seen: int = 0
    fired: int = 0

    def matches(self, req: Request) -> bool:
        kinds = (self.kind,) if isinstance(self.kind, str) else self.kind
        return ((kinds is None or req.kind in kinds) and (self.bucket is None or req.bucket == self.bucket)
                and (self.key is None or req.key == self.key) and (self.part is None or req.part == self.part))


class _Closed(Exception):
    """The peer closed the connection (or sent something that is not HTTP) mid-message."""


class S3FaultProxy:
    def __init__(self, upstream_host: str, upstream_port: int, *, listen_host: str = "127.0.0.1"):
        self.upstream = (upstream_host, upstream_port)
        self.listen_host = listen_host
        self.port = None
        self._lock = threading.Lock()
        self._rules: list[Rule] = []
        self._log: list[Request] = []
        self._connections = 0
        self._listener = None
        self._threads: list[threading.Thread] = []
        self._sockets: set[socket.socket] = set()
        self._stopping = threading.Event()
        self._ids = itertools.count(1)

    @classmethod
    def in_front_of(cls, endpoint: str, **kwargs) -> "S3FaultProxy":
        """A proxy for an http:// endpoint URL such as SeaweedFS(...).endpoint."""
        split = urllib.parse.urlsplit(endpoint)
        if split.scheme != "http" or not split.hostname:
            raise ValueError(f"an http://host:port endpoint is needed, not {endpoint!r}")
        return cls(split.hostname, split.port or 80, **kwargs)

    @property
    def endpoint(self) -> str:
        """The URL to give clients instead of the server's (AWS_ENDPOINT_URL, endpoint_url=)."""
        return f"http://{self.listen_host}:{self.port}"

    # ---- rules ------------------------------------------------------------------------------
    def fail(self, kind=None, *, nth: int = 1, times: int | None = 1, status: int = 500, code: str | None = None,
             message: str | None = None, before_body: bool = False, bucket: str | None = None,
             key: str | None = None, part: int | None = None) -> Rule:
        """Answer the chosen requests with `status` and an S3 error body; they are not forwarded."""
        return self._add(Rule("fail", kind, nth, times, bucket, key, part, status=status, code=code,
                              message=message, before_body=before_body))

    def drop(self, kind=None, *, nth: int = 1, times: int | None = 1, after_bytes: int | None = 0,
             bucket: str | None = None, key: str | None = None, part: int | None = None) -> Rule:
        """Read `after_bytes` of the chosen requests' bodies (None: all), then close, unanswered."""
        return self._add(Rule("drop", kind, nth, times, bucket, key, part, after_bytes=after_bytes))

    def lose_response(self, kind=None, *, nth: int = 1, times: int | None = 1, bucket: str | None = None,
                      key: str | None = None, part: int | None = None) -> Rule:
        """Forward the chosen requests, then close the client's connection instead of answering."""
        return self._add(Rule("lose_response", kind, nth, times, bucket, key, part))

    def delay(self, kind=None, seconds: float = 1.0, *, nth: int = 1, times: int | None = 1,
              bucket: str | None = None, key: str | None = None, part: int | None = None) -> Rule:
        """Forward the chosen requests `seconds` late."""
        return self._add(Rule("delay", kind, nth, times, bucket, key, part, seconds=seconds))

    def clear(self):
        """Removes every rule (the request log stays: see reset_counts)."""
        with self._lock:
            self._rules = []

    def _add(self, rule: Rule) -> Rule:
        if rule.nth < 1 or (rule.times is not None and rule.times < 1):
            raise ValueError("nth and times count from 1 (times=None: every one)")
        kinds = (rule.kind,) if isinstance(rule.kind, str) else rule.kind or ()
        unknown = [k for k in kinds if k not in KINDS]
        if unknown:
            raise ValueError(f"unknown kind(s) {unknown}; known: {KINDS}")
        with self._lock:
            self._rules.append(rule)
        return rule

    def _choose(self, req: Request) -> Rule | None:
        chosen = None
        with self._lock:
            for rule in self._rules:
                if not rule.matches(req):
                    continue
                rule.seen += 1
                if chosen is None and rule.seen >= rule.nth and (rule.times is None or rule.fired < rule.times):
                    rule.fired += 1
                    chosen = rule
        return chosen

    # ---- what went through ------------------------------------------------------------------
    def requests(self, kind=None) -> list[Request]:
        """Copies of the logged requests (of `kind`: a name or a tuple of names), in arrival order."""
        kinds = (kind,) if isinstance(kind, str) else kind
        with self._lock:
            return [dataclasses.replace(r, headers=list(r.headers)) for r in self._log
                    if kinds is None or r.kind in kinds]

    def count(self, kind=None, *, faulted: bool | None = None) -> int:
        """Requests of `kind` received (None: all kinds); faulted=True/False: only those a rule
        acted on / only those forwarded unchanged."""
        return sum(1 for r in self.requests(kind) if faulted is None or (r.fault is not None) == faulted)

    @property
    def connections(self) -> int:
        """Client connections accepted since the start or the last reset_counts."""
        with self._lock:
            return self._connections

    @property
    def threads_alive(self) -> int:
        """Threads of the proxy still running (0 after `stop`)."""
        with self._lock:
            return sum(t.is_alive() for t in self._threads)

    def reset_counts(self):
        """Empties the request log and the connection count (rules stay, with their counts)."""
        with self._lock:
            self._log = []
            self._connections = 0

    # ---- life cycle -------------------------------------------------------------------------
    def start(self) -> "S3FaultProxy":
        self._listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self._listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self._listener.bind((self.listen_host, 0))
        self._listener.listen(128)
        self.port = self._listener.getsockname()[1]
        self._spawn(self._accept_loop)
        return self

    def stop(self):
        """Closes the listener and every connection; returns when all its threads have ended."""
        self._stopping.set()
        if self._listener is not None:
            try:
                self._listener.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            self._listener.close()
        with self._lock:
            sockets = list(self._sockets)
        for s in sockets:
            try:
                s.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
        for t in list(self._threads):
            t.join(10)

    def __enter__(self) -> "S3FaultProxy":
        return self.start()

    def __exit__(self, *exc):
        self.stop()

    # ---- the work ---------------------------------------------------------------------------
    def _spawn(self, target, *args):
        t = threading.Thread(target=target, args=args, daemon=True)
        with self._lock:
            self._threads = [x for x in self._threads if x.is_alive()] + [t]
        t.start()

    def _track(self, s: socket.socket):
        with self._lock:
            self._sockets.add(s)
        if self._stopping.is_set():  # stop() may have shut the others down before this one came
            try:
                s.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass

    def _close(self, s: socket.socket | None):
        if s is None:
            return
        with self._lock:
            self._sockets.discard(s)
        try:
            s.close()
        except OSError:
            pass

    def _accept_loop(self):
        while not self._stopping.is_set():
            try:
                client, _ = self._listener.accept()
            except OSError:
                return
            client.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            self._track(client)
            with self._lock:
                self._connections += 1
            self._spawn(self._serve, client)

    def _serve(self, client: socket.socket):
        link = {"client": client, "creader": client.makefile("rb"), "up": None, "ureader": None}
        try:
            while not self._stopping.is_set():
                head = _read_head(link["creader"], first=True)
                if head is None:
                    break
                method, target, version, headers = _parse_request_head(head)
                kind, bucket, key, query = classify(method, target, headers)
                part = query.get("partNumber", [None])[0]
                req = Request(kind, method, target, bucket, key,
                              int(part) if part is not None and part.isdigit() else None,
                              query.get("uploadId", [None])[0], arrived=time.monotonic(), headers=headers)
                with self._lock:
                    self._log.append(req)
                rule = self._choose(req)
                framing = _request_framing(headers)
                expect = "100-continue" in _header(headers, "expect").lower()
                keep = version == "HTTP/1.1" and "close" not in _header(headers, "connection").lower()
                if rule is None or rule.action in ("delay", "lose_response"):
                    if rule is not None:
                        req.fault = rule.action
                        if rule.action == "delay" and self._stopping.wait(rule.seconds):
                            break
                    keep = self._forward(link, req, head, headers, framing, expect,
                                         deliver=rule is None or rule.action == "delay") and keep
                elif rule.action == "fail":
                    req.fault = f"fail:{rule.status}"
                    keep = self._fail(link, req, rule, framing, expect) and keep
                else:
                    req.fault = "drop"
                    self._drop(link, req, rule, framing, expect)
                    keep = False
                if not keep:
                    break
        except (OSError, _Closed, ValueError):
            pass
        finally:
            for f in ("creader", "ureader"):
                if link[f] is not None:
                    try:
                        link[f].close()
                    except OSError:
                        pass
            self._close(link["up"])
            self._close(client)

    def _upstream(self, link):
        """The client connection's own connection to the server: the one it had, unless the server
        has closed it since (it idles out), else a new one."""
        up = link["up"]
        if up is not None:
            readable, _, _ = select.select([up], [], [], 0)
            if readable:  # between requests the server sends nothing: this is its close
                link["ureader"].close()
                self._close(up)
                up = link["up"] = link["ureader"] = None
        if up is None:
            up = socket.create_connection(self.upstream, timeout=30)
            up.settimeout(None)
            up.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            self._track(up)
            link["up"], link["ureader"] = up, up.makefile("rb")
        return up

    def _forward(self, link, req: Request, head: bytes, headers, framing, expect: bool, deliver: bool) -> bool:
        """Sends the request on and its answer back (to no one where `deliver` is false); returns
        whether both connections may carry another request."""
        client, creader = link["client"], link["creader"]
        up = self._upstream(link)
        ureader = link["ureader"]
        up.sendall(head)
        if expect:
            status, rhead, rheaders = _read_response_head(ureader)
            if status == 100:
                client.sendall(rhead)
            else:  # a final answer instead of 100 Continue: the client sends no body, or may; close after
                req.status = status if deliver else None
                self._relay_response(req, status, rhead, rheaders, ureader, client if deliver else None)
                return False
        for piece in _body_pieces(creader, framing):
            req.body_bytes += len(piece)
            up.sendall(piece)
        while True:
            status, rhead, rheaders = _read_response_head(ureader)
            if status >= 200 or status == 101:
                break
            if deliver:  # 1xx (a late 100 Continue, 102 Processing): passed on
                client.sendall(rhead)
        if deliver:  # logged before the client can see it: a test reads the log once it has its answer
            req.status = status
        reusable = self._relay_response(req, status, rhead, rheaders, ureader, client if deliver else None)
        return deliver and reusable and status != 101

    def _relay_response(self, req, status, rhead, rheaders, ureader, client) -> bool:
        if client is not None:
            client.sendall(rhead)
        if req.method == "HEAD" or status in (204, 304) or status < 200:
            framing = ("length", 0)
        elif "chunked" in _header(rheaders, "transfer-encoding").lower():
            framing = ("chunked", None)
        elif _header(rheaders, "content-length"):
            framing = ("length", int(_header(rheaders, "content-length")))
        else:
            framing = ("close", None)
        for piece in _body_pieces(ureader, framing):
            if client is not None:
                client.sendall(piece)
        return framing[0] != "close" and "close" not in _header(rheaders, "connection").lower()

    def _fail(self, link, req: Request, rule: Rule, framing, expect: bool) -> bool:
        client = link["client"]
        if not rule.before_body:
            if expect:
                client.sendall(b"HTTP/1.1 100 Continue\r\n\r\n")
            for piece in _body_pieces(link["creader"], framing):
                req.body_bytes += len(piece)
        req.status = rule.status  # logged before the client can see it, as in _forward
        client.sendall(self._error_response(req, rule, close=rule.before_body))
        return not rule.before_body

    def _drop(self, link, req: Request, rule: Rule, framing, expect: bool):
        if rule.after_bytes != 0:
            if expect:
                link["client"].sendall(b"HTTP/1.1 100 Continue\r\n\r\n")
            for piece in _body_pieces(link["creader"], framing, budget=rule.after_bytes):
                req.body_bytes += len(piece)
        # _serve closes the connection; with unread bytes queued the kernel answers with an RST.

    def _error_response(self, req: Request, rule: Rule, close: bool) -> bytes:
        status = rule.status
        code = rule.code or _CODES.get(status) or (
            ("NoSuchUpload" if req.kind in _UPLOAD_KINDS else "NoSuchKey") if status == 404 else
            "InternalError" if status >= 500 else "InvalidRequest")
        message = rule.message or _MESSAGES.get(code, f"{code} (injected by the test's S3 fault proxy)")
        request_id = f"H5TFAULT{next(self._ids):08d}"
        resource = urllib.parse.unquote(urllib.parse.urlsplit(req.target).path)
        body = (f'<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>{escape(code)}</Code>'
                f"<Message>{escape(message)}</Message><Resource>{escape(resource)}</Resource>"
                f"<RequestId>{request_id}</RequestId><HostId>h5tile-s3-fault-proxy</HostId></Error>").encode()
        if req.method == "HEAD":
            body = b""
        lines = [f"HTTP/1.1 {status} {_REASONS.get(status, 'Error')}", "Content-Type: application/xml",
                 f"Content-Length: {len(body)}", f"x-amz-request-id: {request_id}",
                 f"Date: {formatdate(usegmt=True)}", "Server: h5tile-s3-fault-proxy"]
        if close:
            lines.append("Connection: close")
        return ("\r\n".join(lines) + "\r\n\r\n").encode() + body


# ---- HTTP/1.1 framing ---------------------------------------------------------------------------
def _read_head(reader, first: bool = False) -> bytes | None:
    """The head of a message (start line to the blank line, as sent); None where the peer closed
    cleanly before its first byte (first=True: between requests)."""
    lines, size = [], 0
    while True:
        line = reader.readline(_MAX_LINE + 1)
        if not line:
            if first and not lines:
                return None
            raise _Closed("closed mid-head")
        if not line.endswith(b"\n"):
            raise _Closed("line too long or cut")
        if first and not lines and line in (b"\r\n", b"\n"):
            continue  # stray CRLF between requests (RFC 9112 2.2)
        lines.append(line)
        size += len(line)
        if size > _MAX_HEAD:
            raise _Closed("head too long")
        if line in (b"\r\n", b"\n"):
            return b"".join(lines)


def _parse_headers(lines) -> list[tuple[str, str]]:
    headers = []
    for raw in lines:
        name, sep, value = raw.decode("latin-1").partition(":")
        if not sep:
            raise _Closed(f"not a header: {raw!r}")
        headers.append((name.strip(), value.strip()))
    return headers


def _parse_request_head(head: bytes):
    lines = head.rstrip(b"\r\n").split(b"\n")
    parts = lines[0].decode("latin-1").strip().split(" ")
    if len(parts) != 3 or not parts[2].startswith("HTTP/"):
        raise _Closed(f"not a request line: {lines[0]!r}")
    method, target, version = parts
    return method, target, version, _parse_headers(line.rstrip(b"\r") for line in lines[1:])


def _read_response_head(reader):
    head = _read_head(reader)
    lines = head.rstrip(b"\r\n").split(b"\n")
    status_line = lines[0].decode("latin-1").strip().split(" ", 2)
    if len(status_line) < 2 or not status_line[0].startswith("HTTP/") or not status_line[1].isdigit():
        raise _Closed(f"not a status line: {lines[0]!r}")
    return int(status_line[1]), head, _parse_headers(line.rstrip(b"\r") for line in lines[1:])


def _header(headers, name: str) -> str:
    """The values of a header, joined by commas ("" where absent)."""
    return ", ".join(v for k, v in headers if k.lower() == name)


def _request_framing(headers):
    if "chunked" in _header(headers, "transfer-encoding").lower():
        return ("chunked", None)
    length = _header(headers, "content-length")
    if length:
        if not length.isdigit():
            raise _Closed(f"bad Content-Length {length!r}")
        return ("length", int(length))
    return ("length", 0)


def _body_pieces(reader, framing, budget: int | None = None):
    """The raw bytes of a body as they arrive (chunk framing included), at most `budget` of them."""
    mode, length = framing
    left = [budget]

    def take(n):
        if left[0] is not None:
            n = min(n, left[0])
        data = reader.read1(min(n, 1 << 16)) if n > 0 else b""
        if left[0] is not None:
            left[0] -= len(data)
        return data

    def exhausted():
        return left[0] is not None and left[0] <= 0

    if mode == "length" or mode == "close":
        remaining = length if mode == "length" else float("inf")
        while remaining > 0 and not exhausted():
            data = take(remaining if mode == "length" else 1 << 16)
            if not data:
                if mode == "close":
                    return
                raise _Closed("closed mid-body")
            remaining -= len(data)
            yield data
        return
    while not exhausted():  # chunked
        line = reader.readline(_MAX_LINE + 1)
        if not line.endswith(b"\n"):
            raise _Closed("closed mid-chunk-size")
        if left[0] is not None:
            left[0] -= len(line)
        yield line
        size = int(line.split(b";", 1)[0].strip() or b"x", 16)
        if size == 0:
            while True:  # trailers, to the blank line
                trailer = reader.readline(_MAX_LINE + 1)
                if not trailer.endswith(b"\n"):
                    raise _Closed("closed mid-trailer")
                yield trailer
                if trailer in (b"\r\n", b"\n"):
                    return
        while size > 0 and not exhausted():
            data = take(size)
            if not data:
                raise _Closed("closed mid-chunk")
            size -= len(data)
            yield data
        if exhausted():
            return
        crlf = reader.readline(_MAX_LINE + 1)
        if crlf not in (b"\r\n", b"\n"):
            raise _Closed("chunk not followed by CRLF")
        if left[0] is not None:
            left[0] -= len(crlf)
        yield crlf


# ---- boto3 look-ups -------------------------------------------------------------------------------
def multipart_uploads(client, bucket: str, prefix: str = "") -> list[dict]:
    """The multipart uploads in progress in `bucket` under `prefix` (boto3's Uploads entries:
    Key, UploadId, Initiated, ...), all pages."""
    uploads = []
    for page in client.get_paginator("list_multipart_uploads").paginate(Bucket=bucket, Prefix=prefix):
        uploads.extend(page.get("Uploads", []))
    return uploads


def list_parts(client, bucket: str, key: str, upload_id: str) -> list[dict]:
    """The parts stored so far of one upload (PartNumber, Size, ETag, ...), all pages; raises
    NoSuchUpload where the upload is gone (completed or aborted)."""
    parts = []
    for page in client.get_paginator("list_parts").paginate(Bucket=bucket, Key=key, UploadId=upload_id):
        parts.extend(page.get("Parts", []))
    return parts


def list_keys(client, bucket: str, prefix: str = "") -> list[str]:
    """The keys of the objects in `bucket` under `prefix`, all pages, sorted."""
    keys = []
    for page in client.get_paginator("list_objects_v2").paginate(Bucket=bucket, Prefix=prefix):
        keys.extend(o["Key"] for o in page.get("Contents", []))
    return sorted(keys)


def boto3_client(endpoint: str, access_key: str, secret_key: str, region: str = "us-east-1",
                 attempts: int = 5):
    """A signed path-style boto3 S3 client for `endpoint` (a proxy's) that tries each request
    `attempts` times in all (standard retry mode; 1: no retries). botocore's own
    retries={"max_attempts": N} counts retries after the first try, so 1 still retries once."""
    import boto3
    from botocore.config import Config
    return boto3.client("s3", endpoint_url=endpoint, region_name=region, aws_access_key_id=access_key,
                        aws_secret_access_key=secret_key,
                        config=Config(s3={"addressing_style": "path"},
                                      retries={"total_max_attempts": attempts, "mode": "standard"}))
