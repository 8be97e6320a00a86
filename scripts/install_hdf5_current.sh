#!/usr/bin/env bash
# Builds a current HDF5 (1.14.x, the source package of Debian trixie, fetched with apt-get source)
# into a prefix that later runs reuse, for testing h5tile against a second HDF5 version.
#   scripts/install_hdf5_current.sh [PREFIX]     (default: build-hdf5-1.14/prefix)
# Prints the prefix on stdout (its progress on stderr). Skips everything when PREFIX already holds
# an install made with the same version and options (the stamp file PREFIX/.h5tile-stamp).
# The build mirrors Debian's libhdf5-dev where h5tile cares: shared, thread-safe, zlib; leaves
# out what h5tile does not use (high-level library, tools, tests, examples, C++/Fortran/Java,
# szip). About 6 minutes on 2 cores.
set -euo pipefail
cd "$(dirname "$0")/.."
root="$PWD"
prefix="${1:-build-hdf5-1.14/prefix}"
case "$prefix" in /*) ;; *) prefix="$root/$prefix" ;; esac
suite="${H5TILE_HDF5_SUITE:-trixie}"           # the Debian release whose source package we build
wanted_series="${H5TILE_HDF5_SERIES:-1.14.}"  # refuse anything else (trixie could move on)

options=(-DCMAKE_BUILD_TYPE=Release -DBUILD_SHARED_LIBS=ON -DBUILD_STATIC_LIBS=OFF
         -DHDF5_ENABLE_THREADSAFE=ON -DHDF5_BUILD_HL_LIB=OFF -DHDF5_BUILD_TOOLS=OFF
         -DHDF5_BUILD_UTILS=OFF -DBUILD_TESTING=OFF -DHDF5_BUILD_EXAMPLES=OFF
         -DHDF5_BUILD_FORTRAN=OFF -DHDF5_BUILD_CPP_LIB=OFF -DHDF5_BUILD_JAVA=OFF
         -DHDF5_ENABLE_Z_LIB_SUPPORT=ON -DHDF5_ENABLE_SZIP_SUPPORT=OFF -DHDF5_ENABLE_PARALLEL=OFF
         -DHDF5_BUILD_DOC=OFF)
sudo=""; [ "$(id -u)" -eq 0 ] || sudo="sudo"
start=$SECONDS

# The trixie source index: a deb-src entry of its own (the machine's binary sources stay as they are).
list=/etc/apt/sources.list.d/h5tile-$suite-src.list
if ! apt-cache showsrc hdf5 2>/dev/null | grep -q "^Version: $wanted_series"; then
  mirror=$(sed -n 's|^URIs: *\(http[^ ]*/debian\)/*$|\1|p; s|^deb *\(http[^ ]*/debian\)/* .*|\1|p' \
    /etc/apt/sources.list.d/*.sources /etc/apt/sources.list 2>/dev/null | head -n 1 || true)
  echo "deb-src ${mirror:-http://deb.debian.org/debian} $suite main" | $sudo tee "$list" >/dev/null
  $sudo apt-get update -qq -o Dir::Etc::sourcelist="$list" -o Dir::Etc::sourceparts=- \
    -o APT::Get::List-Cleanup=0 >&2
fi
version=$(apt-cache showsrc hdf5 | sed -n "s/^Version: \($wanted_series.*\)/\1/p" | head -n 1)
[ -n "$version" ] || { echo "install_hdf5_current: no hdf5 $wanted_series* source package in $suite" >&2; exit 1; }
stamp="hdf5 $version: ${options[*]}"
if [ -f "$prefix/.h5tile-stamp" ] && [ "$(cat "$prefix/.h5tile-stamp")" = "$stamp" ]; then
  echo "install_hdf5_current: HDF5 $version already in $prefix" >&2
  echo "$prefix"
  exit 0
fi

for p in cmake ninja-build zlib1g-dev dpkg-dev; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" ||
    { echo "install_hdf5_current: $p is missing (scripts/install_deps.sh)" >&2; exit 1; }
done

work="$(dirname "$prefix")/work"
rm -rf "$work" "$prefix"
mkdir -p "$work"
echo "install_hdf5_current: building HDF5 $version into $prefix" >&2
# apt-get verifies the tarball against the signed index; the Debian patches are for Debian's
# autotools build and paths, so the upstream tree (the orig tarball) is built as it is.
(cd "$work" && apt-get source -qq --download-only "hdf5=$version" >/dev/null 2>&1) ||
  { echo "install_hdf5_current: apt-get source hdf5=$version failed" >&2; exit 1; }
tar -xzf "$work"/hdf5_*.orig.tar.gz -C "$work"
src=$(find "$work" -mindepth 1 -maxdepth 1 -type d -name 'hdf5-*')
cmake -S "$src" -B "$work/build" -G Ninja -DCMAKE_INSTALL_PREFIX="$prefix" "${options[@]}" \
  >"$work/configure.log" 2>&1 || { tail -n 40 "$work/configure.log" >&2; exit 1; }
cmake --build "$work/build" -j "$(nproc)" >"$work/build.log" 2>&1 || { tail -n 40 "$work/build.log" >&2; exit 1; }
cmake --install "$work/build" >"$work/install.log" 2>&1 || { tail -n 40 "$work/install.log" >&2; exit 1; }
grep -Eq '^#[[:space:]]*define H5_HAVE_THREADSAFE 1' "$prefix/include/H5pubconf.h" ||
  { echo "install_hdf5_current: the build is not thread-safe" >&2; exit 1; }
echo "$stamp" >"$prefix/.h5tile-stamp"
rm -rf "$work"
echo "install_hdf5_current: HDF5 $version installed in $((SECONDS - start)) s" >&2
echo "$prefix"
