#!/usr/bin/env bash
# Packs what the GPU machine needs for the shape sweep into one archive to carry: shape_sweep
# and any further programs (with the libraries the GPU machine may lack, ../shared/tools/device-pack),
# stripped; the exported models; these scripts.
#
#   bench/shape_sweep/pack.sh BUILD_DIR MODELS_DIR OUT.tar.xz [PROGRAM ...]
#
# On the GPU machine: tar xJf OUT.tar.xz -C /tmp && cd /tmp/pack && LD_LIBRARY_PATH=$PWD/lib
#   sweep/shape_sweep.sh bin/shape_sweep models OUT_DIR COMMIT
set -euo pipefail
build=$1 models=$2 out=$3
shift 3
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$root/../shared/tools/device-pack" "$tmp/pack" "$build/bench/shape_sweep" "$@" >/dev/null
strip "$tmp/pack/bin/"*
cp -r "$models" "$tmp/pack/models"
mkdir "$tmp/pack/sweep" "$tmp/pack/peers"
cp "$here"/*.py "$here"/*.sh "$tmp/pack/sweep/"
cp "$root/bench/peers/peer_timing.py" "$tmp/pack/peers/"  # torch_peer.py imports it from ../peers
XZ_OPT=-3 tar -cJf "$out" -C "$tmp" pack
du -h "$out" | awk '{print "pack: " $2 " " $1}'
