"""pytest fixtures over the servers of this folder (imported by tests/python/conftest.py). Each
server is started for the test that asks for it and stopped at its end; nothing is left behind."""
from __future__ import annotations

import pytest

from servers import faults, nginx


@pytest.fixture()
def nginx_server(tmp_path):
    """An nginx serving tmp_path / "www" (create files there) at nginx_server.url."""
    if nginx.executable() is None:
        pytest.skip("nginx is not installed (scripts/install_deps.sh installs it)")
    root = tmp_path / "www"
    root.mkdir()
    server = nginx.Nginx(root, tmp_path / "nginx").start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture()
def fault_server():
    """A FaultServer (servers/faults.py) at fault_server.url."""
    server = faults.FaultServer().start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture()
def webhdfs_server():
    """A WebHdfsServer (servers/faults.py): a namenode and datanode speaking WebHDFS."""
    server = faults.WebHdfsServer().start()
    try:
        yield server
    finally:
        server.stop()
