#!/usr/bin/env bash
# Profiles, expectations and --quiet on the one-H200 machine (issue 6). Expected:
#   --profile build: exit 0, no nvidia.* row (nothing that needs a GPU runs in docker build)
#   --profile runtime: exit 0 with expect.gpus ">=1" passing (the runtime profile expects a GPU)
#   --expect gpus=8: exit 1, expect.gpus "expected 8 GPUs, found 1 GPU (NVIDIA H200)"
#   --expect gpus=1 --expect "gpu_name=*H200*" (+ driver, torch_cuda, gpu_memory): exit 0
#   GPU hidden (CUDA_VISIBLE_DEVICES=""): the runtime health check exits 1 naming expect.gpus
#   no C compiler on PATH: --profile build exits 1, compile.cxx_compiler and triton.c_compiler fail
#   config file found upwards, and a config mistake: exit 2 naming the file and the key
# About 2-3 minutes (the full build and runtime profiles run the smoke tests once each).
set +e
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
. "$HERE/../faults.sh"  # the fault kit (fault_* functions), from this repository
h() { echo; echo "=== $1: ${*:2} ==="; }
rc() { echo "(exit $?)"; }
T="$(command -v timeout) 300"

h "build profile (healthy, exit 0)" envdoctor check --profile build -v
$T envdoctor check --profile build -v; rc

h "runtime profile (healthy, exit 0)" envdoctor check --profile runtime -v
$T envdoctor check --profile runtime -v; rc

h "runtime health check, one line" envdoctor check --profile runtime --quiet --deselect smoke
$T envdoctor check --profile runtime --quiet --deselect smoke; rc

h "expect 8 GPUs on a one-GPU machine (exit 1)" envdoctor check --select nvidia.gpus --expect gpus=8
$T envdoctor check --select nvidia.gpus --expect gpus=8; rc

h "same, --quiet" envdoctor check --select nvidia.gpus --expect gpus=8 --quiet
$T envdoctor check --select nvidia.gpus --expect gpus=8 --quiet; rc

h "expectations met (exit 0)" envdoctor check --select nvidia.gpus --expect gpus=1 --expect "gpu_name=*H200*" --expect "driver>=580" --expect torch_cuda=13.0 --expect gpu_memory=140GB --expect "torch>=2.5" -v
$T envdoctor check --select nvidia.gpus --expect gpus=1 --expect "gpu_name=*H200*" --expect "driver>=580" \
  --expect torch_cuda=13.0 --expect gpu_memory=140GB --expect "torch>=2.5" -v; rc

h "gpu_memory above the H200's 140.4 GiB (exit 1)" envdoctor check --select nvidia.gpus --expect gpu_memory=141GiB
$T envdoctor check --select nvidia.gpus --expect gpu_memory=141GiB; rc

h "GPU expectations under --profile build are not judged (exit 0)" envdoctor check --profile build --deselect smoke --expect gpus=8 --quiet
$T envdoctor check --profile build --deselect smoke --expect gpus=8 --quiet; rc

h "GPU hidden from the container: runtime health check fails (exit 1)" CUDA_VISIBLE_DEVICES= envdoctor check --profile runtime --quiet --deselect smoke
CUDA_VISIBLE_DEVICES= $T envdoctor check --profile runtime --quiet --deselect smoke; rc

NOCC=$(fault_no_compiler_path)
h "the PATH without a compiler" "PATH=$NOCC" command -v gcc g++ cc clang
PATH="$NOCC" command -v gcc g++ cc clang; echo "(found above: should be nothing)"

h "no C compiler on PATH: build profile fails (exit 1)" env -u CC -u CXX "PATH=$NOCC" envdoctor check --profile build --deselect smoke
env -u CC -u CXX PATH="$NOCC" $T envdoctor check --profile build --deselect smoke; rc

h "unmet expectation in the build (exit 1)" envdoctor check --profile build --deselect smoke --expect torch==1.0 --quiet
$T envdoctor check --profile build --deselect smoke --expect torch==1.0 --quiet; rc

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
(cd "$D/project/src" && $T envdoctor check --select nvidia.gpus -v); rc

printf '[expect]\ngpus = "eight"\n' > "$D/bad.toml"
h "config mistake (exit 2, names the file and the key)" envdoctor check --config "$D/bad.toml"
$T envdoctor check --config "$D/bad.toml"; rc
rm -rf "$D"
