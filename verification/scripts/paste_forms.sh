#!/usr/bin/env bash
# The paste forms triage learned on 2026-12-02, produced for real on the GPU machine and triaged:
# torch's own answers echoed by python -c / print (healthy, and with CUDA hidden by an empty
# CUDA_VISIBLE_DEVICES beside the machine's nvidia-smi -L), pip's own install output, and a
# sentence naming the machine's GPU, torch and Python. The healthy pastes must give no cause
# (exit 0); the hidden GPU must be named. No root, no fault kit needed. About 1 minute.
set +e
export NO_COLOR=1
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
. "$HERE/../faults.sh"  # the assertions
REPO=$(pwd)
OUT=$(mktemp -d); cd "$OUT" || exit 1
ASK='import torch; print(torch.__version__, torch.version.cuda, torch.cuda.is_available())'

# 1. healthy: the echo of torch's answers, as a reporter pastes it (the command, then its output)
{ echo "\$ python -c \"$ASK\""; python3 -c "$ASK"; nvidia-smi -L; } > echo.txt 2>&1
cat echo.txt
expect "torch's answers echoed on the healthy machine" 0 "No environment problem was found" -- envdoctor triage echo.txt
V=$(python3 -c 'import torch; print(torch.__version__)'); C=$(python3 -c 'import torch; print(torch.version.cuda)')
V=${V//+/\\+}  # as a pattern: "2.11.0+cu130" -> "2.11.0\+cu130"
expect "... read as torch's CUDA build" '*' "\"message\": \"torch $V \\(CUDA $C build\\)\"" -- envdoctor triage --format json echo.txt

# 2. CUDA hidden: the same echo answers False; the paste shows the empty variable and the GPUs
{ echo "\$ export CUDA_VISIBLE_DEVICES="; echo "\$ python -c \"$ASK\""; CUDA_VISIBLE_DEVICES= python3 -c "$ASK"; nvidia-smi -L; } > hidden.txt 2>&1
cat hidden.txt
expect "torch.cuda.is_available() False with the GPUs hidden" 1 "cuda_visible_devices|CUDA_VISIBLE_DEVICES" -- envdoctor triage hidden.txt

# 3. pip's own output of a real install (this machine's envdoctor wheel into a scratch target)
python3 -m pip install --no-deps --no-build-isolation --target "$OUT/t" "$REPO" > pip.txt 2>&1
{ cat pip.txt; echo "Requirement already satisfied: torch in $(python3 -c 'import torch, os; print(os.path.dirname(os.path.dirname(torch.__file__)))') ($(python3 -c 'import torch; print(torch.__version__)'))"; } > pipout.txt
cat pipout.txt
expect "pip's install output and a satisfied torch" 0 "No environment problem was found" -- envdoctor triage pipout.txt
expect "... read as the installed torch" '*' "\"message\": \"torch $V \\(CUDA $C build\\)\"" -- envdoctor triage --format json pipout.txt

# 4. a sentence: this machine's GPU, torch and Python as a reporter writes them
python3 - > prose.txt <<'PY'
import platform, torch
print(f"I run PyTorch {torch.__version__.split('+')[0]} with CUDA {torch.version.cuda} on an {torch.cuda.get_device_name(0)}, Python {platform.python_version()}")
PY
cat prose.txt
expect "the machine described in a sentence" 0 "No environment problem was found" -- envdoctor triage prose.txt
expect "... read as a CUDA build on the GPU" '*' "\"message\": \"torch ${V%%\\+*} \\(CUDA $C build\\)\"" -- envdoctor triage --format json prose.txt
saw "\"message\": \"1 GPU\\(s\\): .*\\(CC [0-9]+\\.[0-9]\\)\""
# 5. live: nvidia.cuda_visible_devices now reads the env_vars fact (the allowlisted variables)
expect "live, CUDA_VISIBLE_DEVICES unset" 0 "unset: CUDA sees all" -- env -u CUDA_VISIBLE_DEVICES envdoctor check --select nvidia.cuda_visible_devices -v
expect "live, CUDA_VISIBLE_DEVICES empty" 1 "set to an empty string" -- env CUDA_VISIBLE_DEVICES= envdoctor check --select nvidia.cuda_visible_devices
expect "live, CUDA_VISIBLE_DEVICES=0" 0 "nvidia.cuda_visible_devices" -- env CUDA_VISIBLE_DEVICES=0 envdoctor check --select nvidia.cuda_visible_devices -v
expect "live, the default check of the untouched machine" 0 "HEALTHY|OK" -- env -u CUDA_VISIBLE_DEVICES envdoctor check -q
cd / && rm -rf "$OUT"
finish
