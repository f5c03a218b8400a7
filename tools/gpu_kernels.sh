#!/bin/bash
# The GL kernels on a machine with an NVIDIA GPU: checks that they compute what the CPU
# computes there (the GL tests, `headsplit kernels`' max |diff| column), times them against
# the card's FP32 peak and cuBLAS's SGEMM (PyTorch, TF32 off), and times the whole forward.
#
#   tools/gpu_kernels.sh DIR OUTDIR [quick]
#
# DIR holds what a Debian 12 build needs on another Linux: `headsplit`, `headsplit_tests`,
# `hslib.tar.xz` (the shared libraries `ldd` lists beyond glibc and libstdc++) and, where
# the machine has no GL loader, glvnd's .deb files (libegl1 libglvnd0 libopengl0 libgl1
# libglx0 libgles2), unpacked into /. Everything printed also goes to OUTDIR/log.txt.
# Made here, for example:
#   mkdir -p .gl && cp build/app/headsplit build/tests/headsplit_tests .gl/
#   tar -chf - -C /lib/x86_64-linux-gnu $(ldd build/tests/headsplit_tests build/app/headsplit |
#       awk '/=> \/lib/ {print $1}' | grep -vE '^lib(c|m|dl|pthread|gcc_s|stdc\+\+)\.so' | sort -u) |
#       xz -T2 > .gl/hslib.tar.xz
#   (cd .gl && apt-get download libegl1 libglvnd0 libopengl0 libgl1 libglx0 libgles2)
set -u
dir=${1:?usage: tools/gpu_kernels.sh DIR OUTDIR}
out=${2:?usage: tools/gpu_kernels.sh DIR OUTDIR}
quick=${3:-}  # "quick": the kernels at the first two sizes only, no whole forward
mkdir -p "$out"
exec > >(tee "$out/log.txt") 2>&1

if ! ldconfig -p | grep -q 'libEGL.so.1 '; then
    for f in "$dir"/*.deb; do dpkg -x "$f" /; done
    ldconfig
fi
mkdir -p /tmp/hslib && tar -xJf "$dir/hslib.tar.xz" -C /tmp/hslib
export LD_LIBRARY_PATH=/tmp/hslib
vendor=/usr/local/nvidia/share/glvnd/egl_vendor.d/10_nvidia.json
if [ ! -e /usr/share/glvnd/egl_vendor.d/10_nvidia.json ] && [ -e $vendor ]; then
    export __EGL_VENDOR_LIBRARY_FILENAMES=$vendor
fi
bin=$(ls "$dir"/headsplit "$dir"/headsplit_v* 2>/dev/null | head -1)
echo "== EGL: vendors $(ls /usr/share/glvnd/egl_vendor.d/ 2>/dev/null) | $(ls /usr/local/nvidia/lib64 2>/dev/null | grep -i egl | tr '\n' ' ')"
if ! "$bin" kernels --m 64 --k 64 --n 64 --repeat 1 | grep -q 'gl tiled'; then
    echo "no GL context on the first try; again with NVIDIA's EGL vendor file named"
    export __EGL_VENDOR_LIBRARY_FILENAMES=$vendor
    "$bin" kernels --m 64 --k 64 --n 64 --repeat 1
fi
py=python3
command -v $py >/dev/null || py=/opt/torch/.venv/bin/python3

echo "== the card"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,clocks.mem --format=csv
$py - <<'EOF'
import subprocess, torch
p = torch.cuda.get_device_properties(0)
mhz = float(subprocess.check_output(["nvidia-smi", "--query-gpu=clocks.max.sm", "--format=csv,noheader,nounits"]).split()[0])
# 128 FP32 lanes per SM (Ampere and Hopper), 2 FLOP per FMA.
print(f"SMs {p.multi_processor_count}, max SM clock {mhz:.0f} MHz: FP32 peak {p.multi_processor_count * 128 * 2 * mhz / 1e6:.1f} TFLOP/s")
torch.backends.cuda.matmul.allow_tf32 = False
for n in (4096, 8192):
    a = torch.rand(n, n, device="cuda") - 0.5
    b = torch.rand(n, n, device="cuda") - 0.5
    for _ in range(3): a @ b.T
    times = []
    for _ in range(15):
        s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        s.record(); c = a @ b.T; e.record(); torch.cuda.synchronize()
        times.append(s.elapsed_time(e))
    times.sort()
    ms = times[len(times) // 2]
    print(f"cuBLAS SGEMM (PyTorch, TF32 off) {n}^3: median {ms:.2f} ms, {2 * n**3 / ms / 1e9:.1f} TFLOP/s")
EOF

echo "== the GL tests on this GPU (whole output: OUTDIR/gl_tests.txt)"
timeout 300 "$dir/headsplit_tests" "[gl],[flash],[softmax],[graph]" >"$out/gl_tests.txt" 2>&1
echo "exit $?"
grep -E "FAILED|^test cases|^All tests" "$out/gl_tests.txt" | head -20

echo "== the matmul kernels (every headsplit* build in DIR: another version to compare)"
sizes=("4096 4096 4096" "8192 1600 4800" "8192 8192 8192" "8192 768 2304" "1024 768 2304")
[ "$quick" = quick ] && sizes=("4096 4096 4096" "8192 1600 4800")
for mkn in "${sizes[@]}"; do
    set -- $mkn
    others="$dir/headsplit_v*"  # the other versions at the first two sizes only
    [ "$mkn" = "4096 4096 4096" ] || [ "$mkn" = "8192 1600 4800" ] || others=
    for b in $(ls "$dir"/headsplit 2>/dev/null) $others; do
        [ -x "$b" ] || continue
        echo "-- $(basename "$b")"
        timeout 200 "$b" kernels --m $1 --k $2 --n $3 --repeat 9
        echo "exit $?"
    done
done

[ "$quick" = quick ] && exit 0
echo "== the whole forward (gpt2-small), GL against the CPU"
timeout 240 "$bin" bench --preset gpt2-small --tokens 1024,2048 --modes split,fused,flash --backend all --repeat 5
echo "exit $?"
nvidia-smi --query-gpu=clocks.sm,clocks.max.sm,temperature.gpu,power.draw --format=csv
