"""Servers that the remote-read tests start and stop themselves, on loopback only: nginx over a
folder (nginx.py) and a small HTTP server of our own that misbehaves on purpose (faults.py). Plain
modules: the pytest fixtures over them are in fixtures.py, imported by tests/python/conftest.py."""
