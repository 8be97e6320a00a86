"""Servers that the remote-read tests and benchmarks start themselves, on loopback only: nginx over
a folder (nginx.py), a small HTTP server of our own that misbehaves on purpose (faults.py), SeaweedFS
as an S3 server (seaweedfs.py), a proxy that delays bytes (latency_proxy.py) and one in front of an
S3 server that fails chosen requests (s3_faults.py).

Each server module is self-contained (it imports nothing from its neighbours) and stops what it
started, leaving no process and no file outside the folder it was given. The pytest fixtures over
nginx and the fault server are in fixtures.py (seaweedfs.py holds its own), all imported by
tests/python/conftest.py.
"""
