"""The engines bench/remote_read.py compares: each reads one whole dataset from a target (an S3
object on a custom endpoint, or an HTTP URL) and returns it as a NumPy array, or raises
Unavailable saying why it cannot (not installed, a codec it lacks, no URL support)."""
import h5py
import numpy as np

from . import use_package


class Unavailable(Exception):
    pass


DEVICE = None  # --device: the CUDA device every engine reads into (None: host memory)


def to_destination(out):
    """The array in the destination memory: engines that read into host memory only (h5py, h5coro)
    pay their copy to the device inside the timed read, as their users would."""
    if DEVICE is None or out is None:
        return out
    import cupy
    with cupy.cuda.Device(DEVICE):
        out = cupy.asarray(out)
        cupy.cuda.runtime.deviceSynchronize()
    return out


def _try_import(name):
    try:
        return __import__(name), None
    except Exception as e:  # an optional engine: report, do not stop the run
        return None, f"{name} does not import: {type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}"


class FsspecH5py:
    """h5py on an fsspec file object (s3fs for S3, fsspec's HTTP filesystem for HTTP)."""

    def __init__(self, cache=None, rows=None):
        self.cache = cache
        self.rows = rows  # read only the first `rows` rows (the cache-type sweep)
        self.name = f"h5py+fsspec[{cache or 'default'}]"

    def open(self, target):
        kwargs = {} if self.cache is None else {"cache_type": self.cache}
        if target["transport"] == "s3":
            s3fs, err = _try_import("s3fs")
            if s3fs is None:
                raise Unavailable(err)
            fs = s3fs.S3FileSystem(key=target["key_id"], secret=target["secret"], skip_instance_cache=True,
                                   use_listings_cache=False,
                                   client_kwargs={"endpoint_url": target["endpoint"], "region_name": target["region"]})
            return fs.open(f"{target['bucket']}/{target['key']}", "rb", **kwargs)
        import fsspec
        return fsspec.filesystem("http", skip_instance_cache=True).open(target["url"], "rb", **kwargs)

    def read(self, target, dataset):
        with self.open(target) as f, h5py.File(f, "r") as h:
            return h[dataset][...] if self.rows is None else h[dataset][: self.rows]


class H5coro:
    name = "h5coro"

    def read(self, target, dataset):
        mod, err = _try_import("h5coro")
        if mod is None:
            raise Unavailable(err)
        from h5coro import h5coro, s3driver, webdriver
        with h5py.File(target["local"], "r") as f:
            plist = f[dataset].id.get_create_plist()
            filters = {plist.get_filter(i)[0] for i in range(plist.get_nfilters())}
        if filters - {h5py.h5z.FILTER_DEFLATE, h5py.h5z.FILTER_SHUFFLE}:
            raise Unavailable(f"h5coro decodes deflate and shuffle only; this dataset's filters are {sorted(filters)}")
        if target["transport"] == "s3":  # boto3 takes the endpoint and keys from AWS_* (remote_read sets them)
            h = h5coro.H5Coro(f"{target['bucket']}/{target['key']}", s3driver.S3Driver, credentials={})
        else:
            h = h5coro.H5Coro(target["url"], webdriver.HTTPDriver, credentials={})
        try:
            promise = h.readDatasets([dataset], block=True)
            values = promise[dataset.lstrip("/")]
        except Exception as e:
            raise Unavailable(f"h5coro failed: {type(e).__name__}: {e}") from None
        if values is None or not isinstance(values, np.ndarray) or values.size == 0:
            raise Unavailable("h5coro read nothing (a format feature or filter it lacks)")
        return values


class KvikioRaw:
    """KvikIO RemoteFile reading the contiguous dataset's bytes (offset from HDF5) into host memory."""

    def __init__(self, threads):
        self.threads = threads
        self.name = f"kvikio raw [{threads} threads]"  # into device memory with --device

    def read(self, target, dataset):
        kvikio, err = _try_import("kvikio")
        if kvikio is None:
            raise Unavailable(err)
        import kvikio.defaults
        with h5py.File(target["local"], "r") as f:
            d = f[dataset]
            offset, shape, dtype = d.id.get_offset(), d.shape, d.dtype
        if offset is None:
            raise Unavailable("not a contiguous dataset")
        if DEVICE is None:
            out = np.empty(shape, dtype)
        else:
            import cupy
            with cupy.cuda.Device(DEVICE):
                out = cupy.empty(shape, dtype)
        with kvikio.defaults.set({"num_threads": self.threads}):
            if target["transport"] == "s3":
                rf = kvikio.RemoteFile.open_s3(target["bucket"], target["key"], aws_region_name=target["region"],
                                               aws_access_key_id=target["key_id"],
                                               aws_secret_access_key=target["secret"],
                                               aws_endpoint_url=target["endpoint"])
            else:
                rf = kvikio.RemoteFile.open_http(target["url"])
            try:
                got = rf.read(out, out.nbytes, offset)
            except RuntimeError as e:
                if "libcuda" in str(e):  # KvikIO 26.10 loads the CUDA driver even for host memory
                    raise Unavailable(f"KvikIO {kvikio.__version__} needs the CUDA driver even to read into "
                                      f"host memory: {str(e).split(': ', 1)[-1]}") from None
                raise Unavailable(f"KvikIO failed: {e}") from None
            finally:
                rf.close()
        if got != out.nbytes:
            raise Unavailable(f"KvikIO read {got} of {out.nbytes} bytes")
        return out


class Ros3:
    name = "h5py ros3"

    def read(self, target, dataset):
        if not h5py.get_config().ros3:
            raise Unavailable(f"h5py {h5py.__version__} is built without the ROS3 driver (as PyPI's wheels are)")
        if target["transport"] == "s3":
            url = f"{target['endpoint']}/{target['bucket']}/{target['key']}"
            kw = {"aws_region": target["region"].encode(), "secret_id": target["key_id"].encode(),
                  "secret_key": target["secret"].encode()}
        else:
            url, kw = target["url"], {}
        with h5py.File(url, "r", driver="ros3", **kw) as h:
            return h[dataset][...]


def presigned_url(target, seconds=3600):
    """A presigned GET URL of the S3 object (SigV4 in the query string), from boto3."""
    import boto3
    client = boto3.client("s3", endpoint_url=target["endpoint"], region_name=target["region"],
                          aws_access_key_id=target["key_id"], aws_secret_access_key=target["secret"])
    return client.generate_presigned_url("get_object", Params={"Bucket": target["bucket"], "Key": target["key"]},
                                         ExpiresIn=seconds)


class H5tile:
    """h5tile.from_file (or read_box of the whole extent: --h5tile-call) on the URL; after each
    read, `io` holds what h5tile's last_remote_io() reported for it."""

    def __init__(self, call="from_file", local=False):
        self.call, self.local = call, local
        self.name = ("h5tile local" if local else "h5tile") + ("" if call == "from_file" else f" [{call}]")
        self.module, self.error, self.io = None, None, None
        self.presign = False  # set where the build reads no s3:// URL: S3 objects by presigned URL
        use_package()
        try:
            import h5tile
            self.module = h5tile
        except ImportError as e:
            self.error = f"h5tile's Python module does not import (scripts/build.sh): {e}"

    def read(self, target, dataset):
        if self.module is None:
            raise Unavailable(self.error)
        where = str(target["local"]) if self.local else target["url"]
        if target["transport"] == "s3" and not self.local and self.presign:
            where = presigned_url(target)
        self.io = None
        try:
            if self.call == "read_box":
                with h5py.File(target["local"], "r") as f:
                    shape = f[dataset].shape
                out = self.module.read_box(where, dataset, [0] * len(shape), list(shape))
            else:
                out = self.module.from_file(where, dataset, **({} if DEVICE is None else {"device": DEVICE}))
        except Exception as e:
            text = str(e).splitlines()[0] if str(e) else ""
            if "s3:// urls are not supported" in text.lower() and not self.presign:
                # A build without the S3 dialect still reads presigned https URLs: time those.
                self.presign = True
                self.name += " [presigned]"
                print(f"{self.name}: this build reads no s3:// URL ({text}); reading presigned URLs instead")
                return self.read(target, dataset)
            if "not supported" in text.lower():
                raise Unavailable(f"this build cannot read it: {text}") from None
            raise Unavailable(f"failed: {type(e).__name__}: {text}") from None
        if not self.local:
            self.io = dict(self.module.last_remote_io())
        return out


class H5pyLocal:
    """h5py reading the local file the servers serve: this machine's decode limit, for context."""
    name = "h5py local"
    local = True

    def read(self, target, dataset):
        with h5py.File(target["local"], "r") as h:
            return h[dataset][...]


class ENGINES:
    """The engines of each case; the fsspec cache type is chosen by timing (pick_cache)."""

    def __init__(self, caches, kvikio_threads, h5tile_call="from_file", local=True):
        for module in ("s3fs", "fsspec", "h5coro", "kvikio"):  # imported before any timing
            _try_import(module)
        self.caches = caches
        self.kvikio = [KvikioRaw(n) for n in kvikio_threads]
        self.h5tile = H5tile(h5tile_call)
        self.fixed = [H5coro(), Ros3(), self.h5tile]
        self.local = [H5tile(h5tile_call, local=True), H5pyLocal()] if local else []
        self.sweep = {}
        self.best = {}

    def pick_cache(self, time_one, transport, rows):
        """Times each cache type once, reading the first `rows` rows of the contiguous case;
        returns the fastest."""
        self.sweep[transport] = {}
        for cache in self.caches:
            try:
                self.sweep[transport][cache] = time_one(FsspecH5py(cache, rows))
            except Exception as e:  # a cache type that fails is reported, not fatal
                print(f"{transport}: fsspec cache {cache}: {type(e).__name__}: {e}")
                self.sweep[transport][cache] = None
        timed = {c: s for c, s in self.sweep[transport].items() if s}
        self.best[transport] = min(timed, key=timed.get) if timed else None
        return self.best[transport]

    def for_case(self, transport, case):
        if case == "small":  # cheap: every cache type
            fsspec_engines = [FsspecH5py(None)] + [FsspecH5py(c) for c in self.caches]
        else:
            best = self.best.get(transport)
            fsspec_engines = [FsspecH5py(None)] + ([FsspecH5py(best)] if best else [])
        raw = self.kvikio if case == "contiguous" else []
        local = [] if case == "small" else self.local
        return fsspec_engines + [self.fixed[0]] + raw + self.fixed[1:] + local
