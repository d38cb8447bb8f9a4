#!/usr/bin/env bash
# GPU-machine verification for the triton, toolchain, compile and xla areas (helper B).
# Run as root with envdoctor installed: bash verification/scripts/triton_toolchain.sh. It sources
# the fault kit verification/faults.sh (fault_* functions). Every fault is undone before the next
# one; the whole script takes well under a minute (none of these checks imports torch).
set -u
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
. "$HERE/../faults.sh"  # the fault kit (fault_* functions), from this repository
AREAS=(--select triton --select toolchain --select compile --select xla)

show() {  # show LABEL COMMAND...: print a header, run the command, print its exit code
  local label=$1; shift
  echo
  echo "=== $label: $* ==="
  "$@"
  echo "[exit $?]"
}

show "healthy" envdoctor check "${AREAS[@]}" -v

# A6: the installed triton no longer satisfies torch's Requires-Dist pin.
fault_triton_version 3.5.1
show "triton dist-info says 3.5.1" envdoctor check --select triton.torch_pin
fault_triton_version off

# A2: Python.h moved away (Triton's launcher and Inductor's C++ kernels include it).
fault_python_h on
show "Python.h hidden" envdoctor check --select toolchain.python_h
fault_python_h off

# A3/C1: no C or C++ compiler on PATH. A private PATH with only python3 and envdoctor, because
# python3 may live in /usr/bin next to gcc; CC/CXX removed from the environment (not set empty).
nocc=/tmp/nocc-helper-b; rm -rf "$nocc"; mkdir -p "$nocc"
ln -s "$(command -v python3)" "$nocc/python3"; ln -s "$(command -v envdoctor)" "$nocc/envdoctor"
show "no compiler on PATH" env -u CC -u CXX PATH="$nocc" envdoctor check --select triton.c_compiler --select compile.cxx_compiler
show "CC is a directory" env CC=/usr/bin envdoctor check --select triton.c_compiler
show "CC is a command line" env CC="ccache gcc" envdoctor check --select triton.c_compiler
rm -rf "$nocc"

# A5/C4: cache directories on a read-only mount (chmod does not stop root; a ro mount does).
ro=$(fault_ro_dir)
show "read-only Triton cache" env TRITON_CACHE_DIR="$ro" envdoctor check --select triton.cache_dir
show "read-only Inductor cache" env TORCHINDUCTOR_CACHE_DIR="$ro" envdoctor check --select compile.inductor_cache
fault_ro_dir off

# A1: TRITON_LIBCUDA_PATH pointing at a directory without libcuda.so.1.
show "TRITON_LIBCUDA_PATH wrong" env TRITON_LIBCUDA_PATH=/nonexistent envdoctor check --select triton.libcuda

# A4: TRITON_PTXAS_PATH set to a CUDA prefix directory instead of the ptxas binary.
show "TRITON_PTXAS_PATH is a directory" env TRITON_PTXAS_PATH=/usr/local envdoctor check --select triton.ptxas

# B13: a CUDA toolkit of another major version for extension builds (a fake nvcc 12.4).
fake=/tmp/fakecuda-helper-b; mkdir -p "$fake/bin"
printf '#!/bin/sh\necho "Cuda compilation tools, release 12.4, V12.4.131"\n' > "$fake/bin/nvcc"; chmod +x "$fake/bin/nvcc"
show "nvcc 12.4 via CUDA_HOME" env CUDA_HOME="$fake" envdoctor check --select toolchain.nvcc
rm -rf "$fake"

# C6: compile switched off by a leftover variable.
show "TORCH_COMPILE_DISABLE=1" env TORCH_COMPILE_DISABLE=1 envdoctor check --select compile.disabled_by_env

# C4: a UID with no passwd entry and no USER/LOGNAME (docker --user, OpenShift).
if command -v setpriv >/dev/null && setpriv --reuid 54321 --regid 54321 --clear-groups envdoctor --help >/dev/null 2>&1; then
  show "uid 54321 without passwd entry" setpriv --reuid 54321 --regid 54321 --clear-groups \
    env -u USER -u LOGNAME HOME=/tmp envdoctor check --select compile.inductor_cache --select triton.cache_dir
fi

# D1/D5: a torch_xla dist-info of another minor version beside torch.
fault_torch_xla 2.9.0
show "torch_xla 2.9.0 beside torch 2.11" envdoctor check --select xla
fault_torch_xla off

show "healthy again" envdoctor check "${AREAS[@]}"
