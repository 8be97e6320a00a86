"""The latency proxy (tests/python/servers/latency_proxy.py) adds at least its delay to every
round trip, counts connections and requests exactly, and passes the bytes through unchanged.
Timing asserts lower bounds only (a busy CI machine is slow, never fast)."""
import socket
import socketserver
import struct
import threading
import time

import numpy as np
import pytest

from servers.latency_proxy import LatencyProxy


class _Echo(socketserver.BaseRequestHandler):
    """Length-prefixed messages, each answered with the same bytes reversed."""

    def handle(self):
        while True:
            head = _recv_exact(self.request, 4)
            if head is None:
                return
            body = _recv_exact(self.request, struct.unpack("!I", head)[0])
            self.request.sendall(head + body[::-1])


def _recv_exact(sock, n):
    parts, got = [], 0
    while got < n:
        part = sock.recv(min(n - got, 1 << 20))
        if not part:
            return None
        parts.append(part)
        got += len(part)
    return b"".join(parts)


def _exchange(sock, payload):
    sock.sendall(struct.pack("!I", len(payload)) + payload)
    head = _recv_exact(sock, 4)
    return _recv_exact(sock, struct.unpack("!I", head)[0])


@pytest.fixture
def echo_server():
    server = socketserver.ThreadingTCPServer(("127.0.0.1", 0), _Echo)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield server.server_address[1]
    server.shutdown()
    server.server_close()
    thread.join()


def test_every_round_trip_takes_at_least_the_delay_and_is_counted_once(echo_server):
    delay, rounds = 0.050, 6
    with LatencyProxy("127.0.0.1", echo_server, delay=delay) as proxy:
        with socket.create_connection(("127.0.0.1", proxy.port)) as s:
            t0 = time.perf_counter()
            for i in range(rounds):
                assert _exchange(s, b"request %d" % i) == (b"request %d" % i)[::-1]
            elapsed = time.perf_counter() - t0
        assert elapsed >= rounds * delay
        assert (proxy.connections, proxy.requests) == (1, rounds)


def test_a_large_request_is_one_request_and_its_bytes_pass_unchanged(echo_server):
    payload = np.random.default_rng(3).bytes(3 << 20)  # many recv() calls on the proxy's side
    with LatencyProxy("127.0.0.1", echo_server, delay=0.010) as proxy:
        with socket.create_connection(("127.0.0.1", proxy.port)) as s:
            assert _exchange(s, payload) == payload[::-1]
            assert _exchange(s, b"small") == b"llams"
        assert (proxy.connections, proxy.requests) == (1, 2)


def test_connections_are_counted_and_a_new_one_pays_the_connect_delay(echo_server):
    delay, connect_delay = 0.020, 0.060
    with LatencyProxy("127.0.0.1", echo_server, delay=delay, connect_delay=connect_delay) as proxy:
        firsts = []
        for i in range(3):
            with socket.create_connection(("127.0.0.1", proxy.port)) as s:
                t0 = time.perf_counter()
                assert _exchange(s, b"a") == b"a"
                firsts.append(time.perf_counter() - t0)
                assert _exchange(s, b"b") == b"b"
        assert min(firsts) >= delay + connect_delay
        assert (proxy.connections, proxy.requests) == (3, 6)
        proxy.reset_counts()
        assert (proxy.connections, proxy.requests) == (0, 0)


def test_stop_closes_open_connections_and_ends_its_threads(echo_server):
    proxy = LatencyProxy("127.0.0.1", echo_server, delay=0.0).start()
    s = socket.create_connection(("127.0.0.1", proxy.port))
    assert _exchange(s, b"x") == b"x"
    assert proxy.threads_alive == 3  # accepting, and both directions of the connection
    proxy.stop()
    s.settimeout(10)
    assert s.recv(1) == b""  # the proxy closed the client's connection
    s.close()
    assert proxy.threads_alive == 0
    with pytest.raises(OSError):
        socket.create_connection(("127.0.0.1", proxy.port), timeout=2).close()


def test_serial_requests_counts_requests_made_one_after_another_not_side_by_side(echo_server):
    delay, clients = 0.200, 4  # side by side: sent well within the delay of each other, even on a busy machine
    with LatencyProxy("127.0.0.1", echo_server, delay=delay) as proxy:
        sockets = [socket.create_connection(("127.0.0.1", proxy.port)) for _ in range(clients)]
        try:
            together = threading.Barrier(clients)
            answers = []

            def client(s, i):
                for round_ in range(2):  # each round side by side; the second after the first
                    together.wait(30)
                    answers.append(_exchange(s, b"%d-%d" % (i, round_)))

            threads = [threading.Thread(target=client, args=(s, i)) for i, s in enumerate(sockets)]
            for t in threads:
                t.start()
            for t in threads:
                t.join(60)
            assert len(answers) == 2 * clients
            assert (proxy.requests, proxy.serial_requests) == (2 * clients, 2)
            proxy.reset_counts()
            for i in range(3):
                assert _exchange(sockets[0], b"again %d" % i) == (b"again %d" % i)[::-1]
            assert (proxy.requests, proxy.serial_requests) == (3, 3)
        finally:
            for s in sockets:
                s.close()
