"""Servers that the remote-read tests and benchmarks start themselves, on loopback only.

Each module is self-contained (it imports nothing from its neighbours) and stops what it started,
leaving no process and no file outside the folder it was given.
"""
