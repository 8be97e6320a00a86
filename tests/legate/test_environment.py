"""Legate starts on CPUs through the no-GPU driver stand-in, with the processors the Legate tests
rely on (two CPUs, so that arrays split into several tiles; no GPU)."""
import numpy as np

from legate.core import TaskTarget, get_legate_runtime, get_machine, types as ty


def test_two_cpus_and_no_gpu():
    machine = get_machine()
    assert machine.count(TaskTarget.CPU) == 2
    assert machine.count(TaskTarget.GPU) == 0


def test_a_store_round_trips_through_host_memory():
    runtime = get_legate_runtime()
    store = runtime.create_store(ty.int64, shape=(1000, 3))
    store.fill(7)
    runtime.issue_execution_fence(block=True)
    assert np.array_equal(np.asarray(store.get_physical_store()), np.full((1000, 3), 7, np.int64))
