#!/usr/bin/env bash
# Profiles, expectations and --quiet on the one-H200 machine. Expected:
#   --profile build: exit 0, no nvidia.* row (nothing that needs a GPU runs in docker build)
#   --profile runtime: exit 0 with expect.gpus ">=1" passing (the runtime profile expects a GPU)
#   --expect gpus=8: exit 1, expect.gpus "expected 8 GPUs, found 1 GPU (NVIDIA H200)"
#   --expect gpus=1 --expect "gpu_name=*H200*" (+ driver, torch_cuda, gpu_memory): exit 0
#   GPU hidden (CUDA_VISIBLE_DEVICES=""): the runtime health check exits 1 naming expect.gpus
#   no C compiler on PATH: --profile build exits 1, compile.cxx_compiler and triton.c_compiler fail
#   config file found upwards, and a config mistake: exit 2 naming the file and the key
# About 2-3 minutes (the full build and runtime profiles run the smoke tests once each).
# Each outcome is asserted (`expect` in faults.sh); exits 1 when any does not hold.
set +e
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
. "$HERE/../faults.sh"  # the fault kit (fault_* functions), from this repository
h() { echo; echo "=== $1: ${*:2} ==="; }
rc() { echo "(exit $?)"; }
T="$(command -v timeout) 300"

h "build profile (healthy, exit 0)" envdoctor check --profile build -v
expect "build profile" 0 "HEALTHY|OK, with warnings" -- $T envdoctor check --profile build -v

h "runtime profile (healthy, exit 0)" envdoctor check --profile runtime -v
expect "runtime profile" 0 "HEALTHY|OK, with warnings" -- $T envdoctor check --profile runtime -v

h "runtime health check, one line" envdoctor check --profile runtime --quiet --deselect smoke
expect "runtime health check, one line" 0 "HEALTHY|OK, with warnings" -- $T envdoctor check --profile runtime --quiet --deselect smoke

h "expect 8 GPUs on a one-GPU machine (exit 1)" envdoctor check --select nvidia.gpus --expect gpus=8
expect "expect 8 GPUs" 1 "expected 8 GPUs, found 1" -- $T envdoctor check --select nvidia.gpus --expect gpus=8

h "same, --quiet" envdoctor check --select nvidia.gpus --expect gpus=8 --quiet
expect "expect 8 GPUs, --quiet" 1 "PROBLEMS FOUND" -- $T envdoctor check --select nvidia.gpus --expect gpus=8 --quiet

h "expectations met (exit 0)" envdoctor check --select nvidia.gpus --expect gpus=1 --expect "gpu_name=*H200*" --expect "driver>=580" --expect torch_cuda=13.0 --expect gpu_memory=140GB --expect "torch>=2.5" -v
expect "expectations met" 0 "HEALTHY" -- $T envdoctor check --select nvidia.gpus --expect gpus=1 --expect "gpu_name=*H200*" --expect "driver>=580" --expect torch_cuda=13.0 --expect gpu_memory=140GB --expect "torch>=2.5" -v

h "gpu_memory above the H200's 140.4 GiB (exit 1)" envdoctor check --select nvidia.gpus --expect gpu_memory=141GiB
expect "gpu_memory above the GPU" 1 "gpu_memory|GiB" -- $T envdoctor check --select nvidia.gpus --expect gpu_memory=141GiB

h "GPU expectations under --profile build are not judged (exit 0)" envdoctor check --profile build --deselect smoke --expect gpus=8 --quiet
expect "GPU expectations not judged in a build" 0 "HEALTHY|OK, with warnings" -- $T envdoctor check --profile build --deselect smoke --expect gpus=8 --quiet

h "GPU hidden from the container: runtime health check fails (exit 1)" CUDA_VISIBLE_DEVICES= envdoctor check --profile runtime --quiet --deselect smoke
expect "GPU hidden: runtime health fails" 1 "expect.gpus|PROBLEMS FOUND" -- env CUDA_VISIBLE_DEVICES= $T envdoctor check --profile runtime --quiet --deselect smoke

NOCC=$(fault_no_compiler_path)
h "the PATH without a compiler" "PATH=$NOCC" command -v gcc g++ cc clang
PATH="$NOCC" command -v gcc g++ cc clang; echo "(found above: should be nothing)"

h "no C compiler on PATH: build profile fails (exit 1)" env -u CC -u CXX "PATH=$NOCC" envdoctor check --profile build --deselect smoke
expect "no C compiler: build profile fails" 1 "PROBLEMS FOUND" -- env -u CC -u CXX PATH="$NOCC" $T envdoctor check --profile build --deselect smoke

h "unmet expectation in the build (exit 1)" envdoctor check --profile build --deselect smoke --expect torch==1.0 --quiet
expect "unmet expectation in the build" 1 "PROBLEMS FOUND" -- $T envdoctor check --profile build --deselect smoke --expect torch==1.0 --quiet

D=$(mktemp -d)
mkdir -p "$D/project/src"
cat > "$D/project/envdoctor.toml" <<'TOML'
must_pass = ["torch.cuda_available"]

[expect]
torch_cuda = "13.0"
gpus = 1
gpu_name = "*H200*"
TOML
h "config file found upwards from project/src (exit 0)" "cd $D/project/src &&" envdoctor check --select nvidia.gpus -v
expect "config file found upwards" 0 "HEALTHY" -- env -C "$D/project/src" $T envdoctor check --select nvidia.gpus -v

printf '[expect]\ngpus = "eight"\n' > "$D/bad.toml"
h "config mistake (exit 2, names the file and the key)" envdoctor check --config "$D/bad.toml"
expect "config mistake" 2 "bad.toml: expect.gpus" -- $T envdoctor check --config "$D/bad.toml"
rm -rf "$D"
finish
