#!/usr/bin/env bash
# Last verification on the GPU machine with the final code: the default run (smokes in turn in
# one worker), faults not covered before (64 MiB /dev/shm, a torchvision built for another torch),
# the system cuDNN on LD_LIBRARY_PATH (now a failure), and the speed bar (median of 3).
# Each outcome is asserted (`expect` in faults.sh); exits 1 when any does not hold.
set +e
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
. "$HERE/../faults.sh"  # the fault kit (fault_* functions), from this repository
h() { echo; echo "=== $* ==="; }
h "envdoctor check (default profile: every default check and smoke)"
expect "default check" 0 "HEALTHY|OK, with warnings" -- envdoctor check --no-color

h "fault_small_shm on; envdoctor check --select system.shm"
fault_small_shm on
expect "64 MiB /dev/shm" '*' "shm" -- envdoctor check --select system.shm --no-color
fault_small_shm off

TVM="$(python3 -c "import importlib.metadata as m; print(m.distribution('torchvision')._path)")/METADATA"
cp "$TVM" "$TVM.orig" && sed -i -E 's/^Requires-Dist: torch( \(|=).*/Requires-Dist: torch==2.6.0/' "$TVM"
h "torchvision dist-info edited to require torch==2.6.0: envdoctor check --select torch.extension_abi"
grep "^Requires-Dist: torch" "$TVM"
expect "torchvision requires torch 2.6" '*' "torchvision" -- envdoctor check --select torch.extension_abi --no-color
cp "$TVM.orig" "$TVM" && rm "$TVM.orig" && echo "restored $TVM"

h "LD_LIBRARY_PATH=/lib/x86_64-linux-gnu:\$LD_LIBRARY_PATH envdoctor check --select torch.loaded_libraries"
expect "system cuDNN on LD_LIBRARY_PATH" 1 "PROBLEMS FOUND" -- env LD_LIBRARY_PATH="/lib/x86_64-linux-gnu:$LD_LIBRARY_PATH" envdoctor check --select torch.loaded_libraries --no-color

h "python3 benchmarks/bench_check.py -n 3 --warmup 1"
expect "speed bar" 0 "bar met" -- python3 "$HERE/../../benchmarks/bench_check.py" -n 3 --warmup 1
finish
