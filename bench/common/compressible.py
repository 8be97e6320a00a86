"""What the compressed benchmarks (compressed_read.py, compressed_write.py and those that reuse
their data) share: the data (a smooth field plus noise, float32, compressing 2-4x) and the codecs
as h5py + hdf5plugin and h5tile name them."""
import numpy as np

COLS = 4096
CHUNK = (64, COLS)  # 1 MiB of float32

# name: (h5tile's to_file keywords, a function of hdf5plugin giving h5py's create_dataset keywords)
CODECS = {
    "gzip 4 + shuffle": ({"compression": "gzip", "level": 4, "shuffle": True},
                         lambda p: {"compression": "gzip", "compression_opts": 4, "shuffle": True}),
    "zstd 3 + shuffle": ({"compression": "zstd", "level": 3, "shuffle": True},
                         lambda p: {"shuffle": True, **p.Zstd(clevel=3)}),
    "lz4 + shuffle": ({"compression": "lz4", "shuffle": True}, lambda p: {"shuffle": True, **p.LZ4()}),
    "blosc lz4 5 + shuffle": ({"compression": "blosc", "level": 5, "shuffle": True},
                              lambda p: dict(p.Blosc(cname="lz4", clevel=5, shuffle=p.Blosc.SHUFFLE))),
}
# Codecs h5tile reads but does not write (None: no to_file keywords), for the benchmarks that read
# files h5py wrote.
READ_ONLY_CODECS = {
    "bitshuffle lz4": (None, lambda p: dict(p.Bitshuffle(cname="lz4"))),
}


def field(mib):
    """`mib` MiB of float32 (rows of COLS): a smooth sine product plus N(0, 0.01) noise, rounded to
    multiples of 2^-12 (12 fractional bits, as a simulation that stores what it resolves):
    gzip + shuffle compresses it about 2.7x."""
    rows = mib * (1 << 20) // (4 * COLS)
    y = np.linspace(0, 8 * np.pi, rows, dtype=np.float32)[:, None]
    x = np.linspace(0, 8 * np.pi, COLS, dtype=np.float32)[None, :]
    noise = np.random.default_rng(0).normal(0, 0.01, (rows, COLS)).astype(np.float32)
    q = np.float32(2.0**-12)
    return (np.round((np.sin(y) * np.cos(x) + noise) / q) * q).astype(np.float32)

