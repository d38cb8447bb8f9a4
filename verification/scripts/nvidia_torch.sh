#!/usr/bin/env bash
# nvidia.* and torch.* on the GPU machine: the healthy report, then one injected fault at a time.
# Sources the fault kit verification/faults.sh. Every fault is undone. The torchvision fault runs
# only where torchvision is not installed (final.sh has one for an installed torchvision).
# Each outcome is asserted (`expect` in faults.sh); exits 1 when any does not hold.
set +e
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
. "$HERE/../faults.sh"  # the fault kit (fault_* functions), from this repository
h() { echo; echo "=== $1: ${*:2} ==="; }
SEL="--select nvidia --select torch"
PURELIB="$(python3 -c "import sysconfig; print(sysconfig.get_paths()['purelib'])")"

h "healthy (verbose)" envdoctor check $SEL -v --no-color
expect "healthy" 0 "HEALTHY|OK, with warnings" -- envdoctor check $SEL -v --no-color

h "healthy, facts as JSON (driver, gpus, torch_runtime)" envdoctor check --select nvidia.driver --select torch.loaded_libraries --format json
envdoctor check --select nvidia.driver --select torch.loaded_libraries --format json --no-color | python3 -c '
import json, sys
r = json.load(sys.stdin)
for row in r.get("results", r.get("checks", [])):
    print(row.get("id"), row.get("status"), "-", row.get("message"))
facts = r.get("facts", {})
for k in ("driver", "torch_runtime"):
    print(k, json.dumps(facts.get(k))[:2500])
'

h "CUDA_VISIBLE_DEVICES empty" CUDA_VISIBLE_DEVICES= envdoctor check --select nvidia.cuda_visible_devices --select torch.cuda_available
expect "CUDA_VISIBLE_DEVICES empty" 1 "CUDA_VISIBLE_DEVICES" -- env CUDA_VISIBLE_DEVICES= envdoctor check --select nvidia.cuda_visible_devices --select torch.cuda_available --no-color

h "CUDA_VISIBLE_DEVICES invalid ordinal" CUDA_VISIBLE_DEVICES=3 envdoctor check --select nvidia.cuda_visible_devices --select torch.cuda_available
expect "CUDA_VISIBLE_DEVICES invalid ordinal" 1 "CUDA_VISIBLE_DEVICES" -- env CUDA_VISIBLE_DEVICES=3 envdoctor check --select nvidia.cuda_visible_devices --select torch.cuda_available --no-color

UUID8="$(nvidia-smi --query-gpu=uuid --format=csv,noheader | head -1 | cut -c1-12)"
h "CUDA_VISIBLE_DEVICES by UUID prefix (valid)" CUDA_VISIBLE_DEVICES=$UUID8 envdoctor check --select nvidia.cuda_visible_devices --select torch.cuda_available
expect "CUDA_VISIBLE_DEVICES by UUID prefix" 0 "HEALTHY" -- env CUDA_VISIBLE_DEVICES=$UUID8 envdoctor check --select nvidia.cuda_visible_devices --select torch.cuda_available --no-color

h "CUDA_VISIBLE_DEVICES unknown UUID" CUDA_VISIBLE_DEVICES=GPU-deadbeef envdoctor check --select nvidia.cuda_visible_devices
expect "CUDA_VISIBLE_DEVICES unknown UUID" 1 "GPU-deadbeef" -- env CUDA_VISIBLE_DEVICES=GPU-deadbeef envdoctor check --select nvidia.cuda_visible_devices --no-color

h "broken import torch" 'PYTHONPATH=$(fault_broken_torch_dir):$PYTHONPATH envdoctor check --select torch'
expect "broken import torch" 1 "libcudnn.so.9" -- env PYTHONPATH="$(fault_broken_torch_dir):$PYTHONPATH" envdoctor check --select torch --no-color

mkdir -p /tmp/cpu-torch/torch
echo "raise ImportError('this fake CPU torch is for envdoctor tests')" > /tmp/cpu-torch/torch/__init__.py
printf "__version__ = '2.11.0+cpu'\ncuda = None\nhip = None\ngit_version = 'fake'\n" > /tmp/cpu-torch/torch/version.py
h "CPU-only torch first on the path" 'PYTHONPATH=/tmp/cpu-torch:$PYTHONPATH' envdoctor check --select torch.build --select torch.cpu_build_on_gpu_machine --select torch.duplicate_installs
expect "CPU-only torch first on the path" 1 "2.11.0\\+cpu|CPU" -- env PYTHONPATH="/tmp/cpu-torch:$PYTHONPATH" envdoctor check --select torch.build --select torch.cpu_build_on_gpu_machine --select torch.duplicate_installs --no-color
rm -rf /tmp/cpu-torch

h "system cuDNN directory on LD_LIBRARY_PATH" 'LD_LIBRARY_PATH=/lib/x86_64-linux-gnu:$LD_LIBRARY_PATH' envdoctor check --select torch.loaded_libraries -v
expect "system cuDNN on LD_LIBRARY_PATH" '*' "cudnn|cuDNN" -- env LD_LIBRARY_PATH="/lib/x86_64-linux-gnu:$LD_LIBRARY_PATH" envdoctor check --select torch.loaded_libraries -v --no-color

CUDNN_META="$(python3 -c "import importlib.metadata as m; print(m.distribution('nvidia-cudnn-cu13')._path)" 2>/dev/null)/METADATA"
if [ -f "$CUDNN_META" ]; then
  cp "$CUDNN_META" "$CUDNN_META.orig"; sed -i "s/^Version: .*/Version: 9.8.0.87/" "$CUDNN_META"
  h "nvidia-cudnn-cu13 dist-info says 9.8.0.87 (torch pins another)" envdoctor check --select torch.nvidia_wheel_pins -v
  expect "nvidia-cudnn-cu13 at another version" 0 "9.8.0.87" -- envdoctor check --select torch.nvidia_wheel_pins -v --no-color
  cp "$CUDNN_META.orig" "$CUDNN_META" && rm "$CUDNN_META.orig" && echo "restored $CUDNN_META"
fi

if ! python3 -c "import importlib.metadata as m; m.version('torchvision')" 2>/dev/null; then
  TV="$PURELIB/torchvision-0.21.0.dist-info"; mkdir -p "$TV"
  printf 'Metadata-Version: 2.1\nName: torchvision\nVersion: 0.21.0+cu124\nRequires-Dist: torch==2.6.0\n' > "$TV/METADATA"; : > "$TV/RECORD"
  h "torchvision built for torch 2.6 (dist-info only)" envdoctor check --select torch.extension_abi
  expect "torchvision built for torch 2.6" 1 "torch==2.6.0|2.6" -- envdoctor check --select torch.extension_abi --no-color
  rm -rf "$TV" && echo "removed $TV"
fi

h "after undoing every fault" envdoctor check $SEL -q
expect "after undoing every fault" 0 "HEALTHY|OK, with warnings" -- envdoctor check $SEL -q --no-color
finish
