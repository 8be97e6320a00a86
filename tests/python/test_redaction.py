"""No URL's query string (a presigned URL's signature and credential), user information or fragment
appears in any error, warning or output that h5tile produces, from the Python package or the
command: each failure below names the URL as scheme://host/path, and nothing more of it."""
import subprocess
import sys
import warnings

import h5py
import numpy as np
import pytest

from conftest import BUILD, random_array

sys.path.insert(0, str(BUILD / "python"))
import h5tile  # noqa: E402

H5TILE = BUILD / "cli" / "h5tile"
SECRETS = ("SECRET123", "KEY", "Credential", "Signature", "USERX", "PASSX", "FRAGX")


@pytest.fixture()
def served(fault_server, tmp_path):
    """f.h5 (a dataset /data and a group /g), a file that is not HDF5, and a virtual layout whose
    tile is missing, on the fault server; the URLs that name them with secrets."""
    h5tile.settings.set_remote_timeout(5)
    a = random_array("float64", (64, 32), seed=1)
    with h5py.File(tmp_path / "f.h5", "w") as f:
        f["data"] = a
        f.create_group("g")["inner"] = np.arange(3)
    fault_server.put("/f.h5", (tmp_path / "f.h5").read_bytes())
    fault_server.put("/junk.h5", b"not an HDF5 file at all\n" * 100)
    h5tile.to_file(a, tmp_path / "v.h5", "/data", ranks=2, layout="virtual").wait()
    with h5py.File(tmp_path / "v.h5", "r") as f:
        first = f["data"].virtual_sources()[1].file_name
    fault_server.put("/v.h5", (tmp_path / "v.h5").read_bytes())  # its tiles are not served
    base = fault_server.url
    return fault_server, a, {
        "presigned": (base + "/{}?X-Amz-Signature=SECRET123&X-Amz-Credential=KEY", base + "/{}"),
        "userinfo": (base.replace("http://", "http://USERX:PASSX@") + "/{}#FRAGX", base + "/{}"),
    }, first


def check(message, shown):
    for secret in SECRETS:
        assert secret not in message, message
    assert shown in message, message


FAILURES = {
    "404": lambda url, a: h5tile.from_file(url("missing.h5"), "/data"),
    "not_hdf5": lambda url, a: h5tile.from_file(url("junk.h5"), "/data"),
    "missing_dataset": lambda url, a: h5tile.from_file(url("f.h5"), "/nothere"),
    "a_group": lambda url, a: h5tile.from_file(url("f.h5"), "/g"),
    "past_the_end": lambda url, a: h5tile.read_box(url("f.h5"), "/data", [60, 0], [10, 32]),
    "wrong_dtype": lambda url, a: h5tile.from_file(url("f.h5"), "/data", out=np.empty(a.shape, "int32")),
    "describe_missing": lambda url, a: h5tile.describe(url("f.h5"), "/nothere"),
    "missing_tile": lambda url, a: h5tile.from_file(url("v.h5"), "/data"),
}


@pytest.mark.parametrize("form", ["presigned", "userinfo"])
@pytest.mark.parametrize("case", sorted(FAILURES))
def test_errors_name_the_url_without_its_secrets(served, case, form):
    _, a, forms, _ = served
    template, shown_template = forms[form]
    name = {"404": "missing.h5", "not_hdf5": "junk.h5", "missing_tile": "v.h5"}.get(case, "f.h5")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with pytest.raises(Exception) as e:
            FAILURES[case](template.format, a)
    check(str(e.value), shown_template.format(name))
    for w in caught:
        check(str(w.message), "")
    assert isinstance(e.value, (h5tile.Error, ValueError, FileNotFoundError)), repr(e.value)


def test_forbidden(served):
    server, _, forms, _ = served
    template, shown = forms["presigned"]
    server.plan("status:403", times=1000)
    with pytest.raises(h5tile.IoError) as e:
        h5tile.from_file(template.format("f.h5"), "/data")
    check(str(e.value), shown.format("f.h5"))
    assert "403" in str(e.value)


def test_a_bad_dataset_name_names_no_secret(served):
    _, _, forms, _ = served
    template, _ = forms["presigned"]
    with pytest.raises(h5tile.InvalidArgumentError) as e:
        h5tile.from_file(template.format("f.h5"), "a//b")
    for secret in SECRETS:
        assert secret not in str(e.value)
    with pytest.raises(h5tile.InvalidArgumentError) as e:
        list(h5tile.from_file_batched(template.format("f.h5"), "/data", [0, 4]))
    for secret in SECRETS:
        assert secret not in str(e.value)


def test_a_write_to_a_url_names_no_secret(served):
    _, a, forms, _ = served
    for template, shown in forms.values():
        with pytest.raises(h5tile.InvalidArgumentError) as e:
            h5tile.to_file(a, template.format("new.h5"), "/data").wait()
        check(str(e.value), shown.format("new.h5"))


@pytest.mark.parametrize("form", ["presigned", "userinfo"])
def test_the_command_shows_no_secret(served, tmp_path, form):
    server, _, forms, _ = served
    template, shown = forms[form]
    u = template.format
    runs = [(["info", u("f.h5")], "f.h5"), (["info", u("f.h5:/data"), "--json"], "f.h5"),
            (["info", u("f.h5:/nothere")], "f.h5"), (["verify", "--read", u("f.h5:/data"), "--json"], "f.h5"),
            (["verify", "--read", u("v.h5:/data")], "v.h5"), (["info", u("missing.h5")], "missing.h5"),
            (["info", u("junk.h5")], "junk.h5"),
            (["consolidate", u("f.h5:/data"), str(tmp_path / "out.h5")], "f.h5")]
    for args, name in runs:
        out = subprocess.run([str(H5TILE), *args], capture_output=True, text=True, timeout=120, cwd=tmp_path)
        text = out.stdout + out.stderr
        for secret in SECRETS:
            assert secret not in text, (args, text)
        assert shown.format(name) in text, (args, text)
    # and the reads that failed did fail
    out = subprocess.run([str(H5TILE), "info", template.format("missing.h5")], capture_output=True, text=True,
                         timeout=120, cwd=tmp_path)
    assert out.returncode != 0
