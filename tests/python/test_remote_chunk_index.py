"""Remote reads of a dataset whose chunk index is a version-1 B-tree (h5py's default) whose nodes
lie scattered between the chunks, as h5py writes them: HDF5 walks such a tree one node at a time,
and h5tile's remote driver fetches the nodes below an inner node side by side, so that the walk
costs one round trip per level of the tree, not one per node. Read through nginx behind the
latency proxy (servers/latency_proxy.py), which logs when each request came and when its answer
started: its `serial_requests` (the longest chain of requests each made after the answer to the
one before) is the count of round trips on the read's critical path, measured outside h5tile.
Every read is compared with h5py reading the same file locally."""
import re
import struct
import sys

import h5py
import numpy as np
import pytest

from conftest import BUILD, changed_settings, random_array, same_bytes
from servers.latency_proxy import LatencyProxy

sys.path.insert(0, str(BUILD / "python"))
import h5tile  # noqa: E402

SHAPE, CHUNKS = (1024, 1024), (32, 32)  # 1,024 chunks of 4 KiB
BLOCK = 16 << 10  # the driver's block: each leaf of the tree in a block of its own


@pytest.fixture(autouse=True)
def remote_settings():
    with changed_settings(h5tile.settings, remote_block_size=BLOCK, remote_timeout=10, remote_retries=3,
                          remote_connections=16):
        yield


def chunk_btree_nodes(path):
    """(offset, level, entries) of each node of a v1 B-tree of chunks in the file, from its bytes."""
    data = path.read_bytes()
    return [(m.start(), data[m.start() + 5], struct.unpack_from("<H", data, m.start() + 6)[0])
            for m in re.finditer(b"TREE\x01", data)]


@pytest.fixture()
def btree_file(nginx_server):
    """A gzip+shuffle float32 dataset of 1,024 chunks written by h5py, its chunk index a two-level
    v1 B-tree whose leaves lie far apart; yields (path, url through a 50 ms proxy, proxy, array). 50 ms:
    the requests of one level, sent side by side, reach the proxy well within it of each other even
    on a busy machine."""
    a = random_array("float32", SHAPE, seed=7)
    path = nginx_server.root / "btree.h5"
    with h5py.File(path, "w") as f:
        f.create_dataset("data", data=a, chunks=CHUNKS, compression="gzip", shuffle=True)
        assert f["data"].id.get_num_chunks() == 1024
    nodes = chunk_btree_nodes(path)
    leaves = [offset for offset, level, _ in nodes if level == 0]
    assert [level for _, level, _ in nodes].count(1) == 1 and len(leaves) >= 16, nodes
    # The leaves lie in at least 15 blocks of the driver's: each of those a request of its own.
    assert len({offset // BLOCK for offset in leaves}) >= 15, nodes
    with LatencyProxy("127.0.0.1", nginx_server.port, delay=0.050) as proxy:
        yield path, f"http://127.0.0.1:{proxy.port}/btree.h5", proxy, a


def test_a_whole_read_walks_the_chunk_index_a_level_at_a_time(btree_file):
    path, url, proxy, a = btree_file
    with h5py.File(path, "r") as f:
        local = f["data"][()]
    assert same_bytes(local, a)
    proxy.reset_counts()
    got = h5tile.from_file(url, "/data")
    assert same_bytes(got, local)
    io = h5tile.last_remote_io()
    serial = proxy.serial_requests
    print(f"whole read: {proxy.requests} requests, {serial} one after another; h5tile's count: {io}")
    # Walking the nodes one at a time took 19 requests one after another (the open, the root's block,
    # a leaf at a time, the data); now 4: the open, the root's block, the leaves side by side, the data.
    assert serial <= 6, serial
    assert io["critical_path"] <= 6, io


def test_one_chunk_of_a_large_index_costs_few_round_trips(btree_file):
    path, url, proxy, _ = btree_file
    with h5py.File(path, "r") as f:
        local = f["data"][500:540, 990:1000]
    proxy.reset_counts()
    got = h5tile.read_box(url, "/data", (500, 990), (40, 10))
    assert same_bytes(got, local)
    serial = proxy.serial_requests
    print(f"one box: {proxy.requests} requests, {serial} one after another; h5tile's count:",
          h5tile.last_remote_io())
    assert serial <= 6, serial  # 19 when the leaves came one at a time, 4 with them side by side


def test_without_parallel_reads_the_tree_is_walked_as_before_and_reads_the_same(btree_file):
    """One connection: the nodes ahead are still fetched (one after another, as HDF5 would), and a
    read of every byte still equals h5py's."""
    path, url, proxy, a = btree_file
    h5tile.settings.set_remote_connections(1)
    got = h5tile.from_file(url, "/data", threads=1)
    assert same_bytes(got, a)


def test_a_damaged_leaf_is_hdf5s_error_not_other_bytes(btree_file, nginx_server):
    """A leaf whose signature is broken: the nodes fetched ahead hold the object's own (broken)
    bytes, so HDF5 fails on it as when reading the file locally, and h5tile says so."""
    path, url, proxy, _ = btree_file
    leaf = [offset for offset, level, _ in chunk_btree_nodes(path) if level == 0][5]
    with open(path, "r+b") as f:
        f.seek(leaf)
        f.write(b"XXXX")
    with h5py.File(path, "r") as f, pytest.raises(Exception):
        f["data"][()]
    with pytest.raises((h5tile.Hdf5Error, RuntimeError, OSError)):
        h5tile.from_file(url, "/data")


def test_a_three_level_index_is_fetched_a_level_at_a_time(nginx_server):
    """16,384 chunks: a root of level 2, a few nodes of level 1, some 300 leaves. h5tile counts the
    chunks (HDF5 1.10 walks the whole index for it), then reads one box."""
    h5tile.settings.set_remote_block_size("256K")  # room in the cache for a level of ~300 nodes
    a = random_array("int16", (1024, 1024), seed=8)
    path = nginx_server.root / "deep.h5"
    with h5py.File(path, "w") as f:
        f.create_dataset("data", data=a, chunks=(8, 8), compression="gzip")
        local = f["data"][200:216, 600:640]
    levels = [level for _, level, _ in chunk_btree_nodes(path)]
    assert levels.count(2) == 1 and levels.count(1) >= 2 and levels.count(0) >= 200, sorted(set(levels))
    with LatencyProxy("127.0.0.1", nginx_server.port, delay=0.050) as proxy:
        got = h5tile.read_box(f"http://127.0.0.1:{proxy.port}/deep.h5", "/data", (200, 600), (16, 40))
        assert same_bytes(got, local)
        serial = proxy.serial_requests
        print(f"three levels, one box: {proxy.requests} requests, {serial} one after another; h5tile's count:",
              h5tile.last_remote_io())
    # The open, the level-1 nodes side by side, the leaves side by side (neighbours joined), the box's
    # chunks: 4 (12 when HDF5's walk fetched a block at a time, one after another).
    assert serial <= 6, serial


def test_more_chunks_than_hdf5_finds_one_by_one_are_read_side_by_side(nginx_server):
    """20,000 chunks of a gzip dataset: more than HDF5 1.10.8 can find one by one (each lookup a walk of
    the whole index), so h5tile had HDF5 read them, one block of the object after another. Listed from
    the tree (read through the driver's cache, a level side by side), or by H5Dchunk_iter, they are
    read as any URL's chunks are: side by side."""
    h5tile.settings.set_remote_block_size("64K")
    a = random_array("int16", (1000, 1280), seed=9)
    path = nginx_server.root / "many.h5"
    with h5py.File(path, "w") as f:
        f.create_dataset("data", data=a, chunks=(8, 8), compression="gzip")
        assert f["data"].id.get_num_chunks() == 20000
        local = f["data"][()]
    assert path.stat().st_size > 40 * (64 << 10)  # the chunks fill more than 40 of the driver's blocks
    with LatencyProxy("127.0.0.1", nginx_server.port, delay=0.050) as proxy:
        got = h5tile.from_file(f"http://127.0.0.1:{proxy.port}/many.h5", "/data")
        assert same_bytes(got, local)
        serial = proxy.serial_requests
        print(f"20,000 chunks: {proxy.requests} requests, {serial} one after another; h5tile's count:",
              h5tile.last_remote_io())
    # 67 one after another when HDF5 read the chunks (1.10.8); 11 listed (the open, the tree's levels, the
    # chunks side by side).
    assert serial <= 20, serial
