"""A TCP proxy on loopback that adds a fixed delay to every request, and counts them.

    with LatencyProxy("127.0.0.1", server_port, delay=0.020) as proxy:
        url = f"http://127.0.0.1:{proxy.port}/file.h5"      # instead of the server's port
        ...                                                # read through it
        proxy.connections, proxy.requests                  # what the client cost
        proxy.serial_requests                              # how many of them came one after another

A request is a burst of bytes from the client: the first bytes on a connection, and then the
first bytes the client sends after the server has answered. Each one is held back `delay` seconds
before it goes to the server, so every round trip of a request-response protocol (HTTP/1.1, with
keep-alive or not) takes at least `delay` longer, as across a real link between regions. A new
connection's first request also waits `connect_delay` (0 unless given), the round trip of a TCP
handshake. The bytes themselves pass unchanged in both directions.

Each request's arrival and the end of its answer (the last byte passed on before the client's
next request) are logged, so that `serial_requests` can say how many round trips lay on the
client's critical path: the longest chain of requests each of which arrived after the answer to
the one before it had ended (a request that arrived earlier did not wait for that answer). Requests
made side by side count once.

Threads, not asyncio: a client under test may block; the proxy must not depend on its event loop.
"""
from __future__ import annotations

import socket
import threading
import time


class LatencyProxy:
    def __init__(self, upstream_host: str, upstream_port: int, *, delay: float = 0.020,
                 connect_delay: float = 0.0, listen_host: str = "127.0.0.1"):
        self.upstream = (upstream_host, upstream_port)
        self.delay = delay
        self.connect_delay = connect_delay
        self.listen_host = listen_host
        self.port = None
        self._lock = threading.Lock()
        self._connections = 0
        self._requests = 0
        self._log: list[list] = []  # [arrived, answer ended or None], by arrival
        self._listener = None
        self._threads: list[threading.Thread] = []
        self._sockets: set[socket.socket] = set()
        self._stopping = threading.Event()

    # ---- counters ---------------------------------------------------------------------------
    @property
    def connections(self) -> int:
        """Client connections accepted since the start or the last `reset_counts`."""
        with self._lock:
            return self._connections

    @property
    def requests(self) -> int:
        """Requests (client bursts, see the module's docstring) forwarded since the start or reset."""
        with self._lock:
            return self._requests

    @property
    def serial_requests(self) -> int:
        """The longest chain of requests since the start or reset, each arriving after the answer
        to the one before it had ended: the round trips the client made one after another."""
        with self._lock:
            log = [(a, b) for a, b in self._log]
        depth = []  # depth[i]: the longest chain ending with request i
        for i, (arrived, _) in enumerate(log):
            before = [depth[j] for j in range(i) if log[j][1] is not None and log[j][1] <= arrived]
            depth.append(1 + max(before, default=0))
        return max(depth, default=0)

    @property
    def threads_alive(self) -> int:
        """Threads of the proxy still running (0 after `stop`)."""
        with self._lock:
            return sum(t.is_alive() for t in self._threads)

    def reset_counts(self):
        with self._lock:
            self._connections = 0
            self._requests = 0
            self._log = []

    # ---- life cycle -------------------------------------------------------------------------
    def start(self) -> "LatencyProxy":
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
        for s in sockets:
            s.close()

    def __enter__(self) -> "LatencyProxy":
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

    def _accept_loop(self):
        while not self._stopping.is_set():
            try:
                client, _ = self._listener.accept()
            except OSError:
                return
            self._track(client)
            with self._lock:
                self._connections += 1
            self._spawn(self._serve, client)

    def _serve(self, client: socket.socket):
        try:
            server = socket.create_connection(self.upstream, timeout=30)
        except OSError:
            with self._lock:
                self._sockets.discard(client)
            client.close()
            return
        server.settimeout(None)
        self._track(server)
        for s in (client, server):
            s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        # `answered` is set once the server has sent bytes since the client's last burst; the
        # second pump to end closes both sockets.
        state = {"answered": True, "first": True, "ended": 0, "entry": None}
        self._spawn(self._pump_back, server, client, state)
        try:
            while True:
                data = client.recv(1 << 16)
                if not data:
                    break
                if state["answered"]:
                    state["answered"] = False
                    entry = [time.monotonic(), None]
                    with self._lock:
                        self._requests += 1
                        self._log.append(entry)
                        state["entry"] = entry
                    wait = self.delay + (self.connect_delay if state["first"] else 0.0)
                    state["first"] = False
                    if wait > 0 and self._stopping.wait(wait):
                        break
                server.sendall(data)
        except OSError:
            pass
        finally:
            _half_close(server)
            self._pump_ended(state, client, server)

    def _pump_back(self, server: socket.socket, client: socket.socket, state: dict):
        try:
            while True:
                data = server.recv(1 << 16)
                if not data:
                    break
                state["answered"] = True
                with self._lock:
                    if state["entry"] is not None:  # stamped before the bytes go: the client's next
                        state["entry"][1] = time.monotonic()  # request can only come after this
                client.sendall(data)
        except OSError:
            pass
        finally:
            _half_close(client)
            self._pump_ended(state, client, server)

    def _pump_ended(self, state: dict, client: socket.socket, server: socket.socket):
        with self._lock:
            state["ended"] += 1
            if state["ended"] < 2:
                return
            self._sockets.discard(client)
            self._sockets.discard(server)
        client.close()
        server.close()


def _half_close(s: socket.socket):
    try:
        s.shutdown(socket.SHUT_WR)
    except OSError:
        pass

