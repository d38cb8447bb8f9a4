#!/usr/bin/env bash
# GPU-machine verification for the triton, toolchain, compile and xla areas .
# Run as root with envdoctor installed: bash verification/scripts/triton_toolchain.sh. It sources
# the fault kit verification/faults.sh (fault_* functions). Every fault is undone before the next
# one; the whole script takes well under a minute (none of these checks imports torch). Each
# outcome is asserted (`expect` in faults.sh); exits 1 when any does not hold.
set -u
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
. "$HERE/../faults.sh"  # the fault kit (fault_* functions), from this repository
AREAS=(--select triton --select toolchain --select compile --select xla)


expect healthy 0 "HEALTHY" -- envdoctor check "${AREAS[@]}" -v

# the installed triton no longer satisfies torch's Requires-Dist pin.
fault_triton_version 3.5.1
expect "triton dist-info says 3.5.1" 1 "triton 3.5.1 is installed but torch .* requires triton==" -- envdoctor check --select triton.torch_pin
fault_triton_version off

# Python.h moved away (Triton's launcher and Inductor's C++ kernels include it).
fault_python_h on
expect "Python.h hidden" 1 "Python.h is missing from" -- envdoctor check --select toolchain.python_h
fault_python_h off

# no C or C++ compiler on PATH. A private PATH with only python3 and envdoctor, because
# python3 may live in /usr/bin next to gcc; CC/CXX removed from the environment (not set empty).
nocc=/tmp/nocc-helper-b; rm -rf "$nocc"; mkdir -p "$nocc"
ln -s "$(command -v python3)" "$nocc/python3"; ln -s "$(command -v envdoctor)" "$nocc/envdoctor"
expect "no compiler on PATH" 1 "no g\+\+ on PATH" -- env -u CC -u CXX PATH="$nocc" envdoctor check --select triton.c_compiler --select compile.cxx_compiler
expect "CC is a directory" 1 "CC points to /usr/bin, a directory" -- env CC=/usr/bin envdoctor check --select triton.c_compiler
expect "CC is a command line" 1 "CC is .ccache gcc., a command line" -- env CC="ccache gcc" envdoctor check --select triton.c_compiler
rm -rf "$nocc"

# cache directories on a read-only mount (chmod does not stop root; a ro mount does).
ro=$(fault_ro_dir)
expect "read-only Triton cache" 1 "Triton cache \(TRITON_CACHE_DIR\).* is not writable" -- env TRITON_CACHE_DIR="$ro" envdoctor check --select triton.cache_dir
expect "read-only Inductor cache" 1 "Inductor cache \(TORCHINDUCTOR_CACHE_DIR\).* is not writable" -- env TORCHINDUCTOR_CACHE_DIR="$ro" envdoctor check --select compile.inductor_cache
fault_ro_dir off

# TRITON_LIBCUDA_PATH pointing at a directory without libcuda.so.1.
expect "TRITON_LIBCUDA_PATH wrong" 1 "TRITON_LIBCUDA_PATH=/nonexistent is without libcuda.so.1" -- env TRITON_LIBCUDA_PATH=/nonexistent envdoctor check --select triton.libcuda

# TRITON_PTXAS_PATH set to a CUDA prefix directory instead of the ptxas binary.
expect "TRITON_PTXAS_PATH is a directory" 0 "TRITON_PTXAS_PATH=/usr/local is a directory" -- env TRITON_PTXAS_PATH=/usr/local envdoctor check --select triton.ptxas

# a CUDA toolkit of another major version for extension builds (a fake nvcc 12.4).
fake=/tmp/fakecuda-helper-b; mkdir -p "$fake/bin"
printf '#!/bin/sh\necho "Cuda compilation tools, release 12.4, V12.4.131"\n' > "$fake/bin/nvcc"; chmod +x "$fake/bin/nvcc"
expect "nvcc 12.4 via CUDA_HOME" 0 "nvcc 12.4 at .* but torch is built with CUDA" -- env CUDA_HOME="$fake" envdoctor check --select toolchain.nvcc
rm -rf "$fake"

# compile switched off by a leftover variable.
expect "TORCH_COMPILE_DISABLE=1" 0 "TORCH_COMPILE_DISABLE=1 set: torch.compile silently runs" -- env TORCH_COMPILE_DISABLE=1 envdoctor check --select compile.disabled_by_env

# a UID with no passwd entry and no USER/LOGNAME (docker --user, OpenShift).
if command -v setpriv >/dev/null && setpriv --reuid 54321 --regid 54321 --clear-groups envdoctor --help >/dev/null 2>&1; then
  expect "uid 54321 without passwd entry" 1 "uid 54321 has no passwd entry" -- setpriv --reuid 54321 --regid 54321 --clear-groups \
    env -u USER -u LOGNAME HOME=/tmp envdoctor check --select compile.inductor_cache --select triton.cache_dir
fi

# a torch_xla dist-info of another minor version beside torch.
fault_torch_xla 2.9.0
expect "torch_xla 2.9.0 beside torch" 1 "torch_xla 2.9.0 is built for torch 2.9, but torch" -- envdoctor check --select xla
fault_torch_xla off

expect "healthy again" 0 "HEALTHY" -- envdoctor check "${AREAS[@]}"
finish
