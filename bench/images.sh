#!/bin/bash
# SPDX-License-Identifier: MIT
# The figures of issue 8 (images), measured in one run:
#   sbx image import of a ~40 MB OCI layout (busybox + Python's stdlib, made with umoci)
#   sbx run --image IMG -- true   vs  sbx run -- true (host base)   (target: within 1.2x)
#   podman run of the same image (oci-archive loaded into podman), when podman works here
#
#   bench/images.sh [RUNS]     (default 100; needs hyperfine, umoci, busybox-static: scripts/bootstrap)
#
# Writes bench/results/images.md. sbx runs with `--memory/--cpus/--pids unlimited` and podman
# with `--cgroups=disabled` (bench/README.md, "Peers on a hybrid-cgroup host": crun refuses
# these cgroups, so podman runs in a mount namespace with an empty tmpfs over
# /sys/fs/cgroup/unified, and with lowered ulimits). Import runs start from an empty store each time.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

runs=${1:-100}
sbx=$PWD/build/sbx
out=bench/results
mkdir -p "$out"
work=$(mktemp -d /tmp/sbx-bench-images.XXXXXX)
trap 'rm -rf "$work"' EXIT
export SBX_RUNTIME_DIR=$work/rt SBX_IMAGE_STORE=$work/store
nolimits=(--memory unlimited --cpus unlimited --pids unlimited)

# the image: busybox and Python's standard library (no tests, no pycache): about 40 MB
root=$work/rootfs
mkdir -p "$root/bin" "$root/usr/lib" "$root/etc"
cp /bin/busybox "$root/bin/"
for t in sh true cat ls; do ln -s busybox "$root/bin/$t"; done
py=$(/usr/bin/python3 -c 'import sysconfig; print(sysconfig.get_paths()["stdlib"])')
cp -a "$py" "$root/usr/lib/"
find "$root/usr/lib" -name __pycache__ -prune -exec rm -rf {} +
rm -rf "$root/usr/lib/$(basename "$py")"/{test,dist-packages,lib2to3,idlelib,tkinter,ensurepip}
umoci init --layout "$work/oci"
umoci new --image "$work/oci:bench"
umoci unpack --image "$work/oci:bench" "$work/bundle" >/dev/null
cp -a "$root/." "$work/bundle/rootfs/"
umoci repack --image "$work/oci:bench" "$work/bundle"
tar -C "$work/oci" -cf "$work/bench.tar" .
size=$(du -sh "$root" | cut -f1)

hyperfine -N --runs 10 --prepare "rm -rf $work/store" --export-markdown "$work/import.md" \
        "$sbx image import bench:1 $work/oci" >&2
"$sbx" image import bench:1 "$work/oci" >/dev/null
hyperfine -N --warmup 5 --runs "$runs" --export-markdown "$work/run.md" \
        "$sbx run ${nolimits[*]} --image bench:1 -- true" \
        "$sbx run ${nolimits[*]} -- true" >&2

podman_md="podman: not measured (not installed)"
if command -v podman >/dev/null && podman load -i "$work/bench.tar" >/dev/null 2>&1; then
        cat >"$work/pod.sh" <<'EOF'
#!/bin/sh
exec podman run --rm --cgroups=disabled --network none --ulimit nofile=1024:1024 \
        --ulimit nproc=4096:4096 localhost/bench /bin/true
EOF
        chmod +x "$work/pod.sh"
        if unshare -m sh -c "mount -t tmpfs none /sys/fs/cgroup/unified 2>/dev/null; $work/pod.sh" \
                >/dev/null 2>&1; then
                unshare -m sh -c "mount -t tmpfs none /sys/fs/cgroup/unified 2>/dev/null;
                        hyperfine -N --warmup 2 --runs 15 --export-markdown $work/podman.md $work/pod.sh" >&2
                podman_md=$(cat "$work/podman.md")
        else
                podman_md="podman: not measured (podman run fails here)"
        fi
        podman rmi localhost/bench >/dev/null 2>&1 || true
fi

{
        echo "# Images (bench/images.sh, $(date -u +%Y-%m-%dT%H:%MZ), image of $size)"
        echo
        echo "## import (empty store each run)"
        cat "$work/import.md"
        echo
        echo "## run"
        cat "$work/run.md"
        echo
        echo "## podman run of the same image"
        echo "$podman_md"
} >"$out/images.md"
cat "$out/images.md"
