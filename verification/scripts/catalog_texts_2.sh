#!/usr/bin/env bash
# The error texts the 2026-12-03 catalog sweeps added that one machine can produce, produced for
# real on the GPU machine and triaged as a reporter would paste them: DataLoader workers handing
# tensors to a process under `ulimit -n 256` (torch.multiprocessing's "Too many open files"), a
# removed NumPy alias and torch 2.0's removed torch._six, and, where the machine has a CUDA
# toolkit, the toolkit's libcuda stub loaded before the driver's (cudaGetDeviceCount's Error 34).
# Each output goes to `envdoctor triage` and the named cause is asserted; then the machine's own
# paste still finds no problem. Changes nothing on the machine. Exits 1 when an outcome does not
# hold. About 1 minute.
set +e
export NO_COLOR=1
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
. "$HERE/../faults.sh"  # the assertions, triaged and own_paste_is_clean
OUT=$(mktemp -d); cd "$OUT" || exit 1

cat > fd.py <<'PY'
import resource, torch
from torch.utils.data import DataLoader, Dataset
class D(Dataset):
    def __len__(self): return 2000
    def __getitem__(self, i): return torch.ones(8)
if __name__ == "__main__":
    resource.setrlimit(resource.RLIMIT_NOFILE, (256, 256))
    kept = [b for b in DataLoader(D(), batch_size=1, num_workers=2)]
PY
timeout 300 python3 fd.py > fd.txt 2>&1
echo "DataLoader under ulimit -n 256: exit $?"; grep -m1 "Too many open files" fd.txt
triaged "the open-files limit" open_files_limit fd.txt

timeout 60 python3 -c "import numpy as np; print(np.__version__); np.float(1)" > npfloat.txt 2>&1
echo "np.float on this NumPy: exit $?"; head -1 npfloat.txt; grep -m1 "has no attribute" npfloat.txt
triaged "a removed NumPy alias" dependency_too_new npfloat.txt

timeout 60 python3 -c "import torch; print(torch.__version__); from torch._six import inf" > six.txt 2>&1
echo "torch._six on this torch: exit $?"; head -1 six.txt; tail -1 six.txt
triaged "torch 2.0's removed torch._six" dependency_too_new six.txt

STUB=$(ls /usr/local/cuda*/lib64/stubs/libcuda.so /usr/local/cuda*/targets/*/lib/stubs/libcuda.so 2>/dev/null | head -1)
if [ -n "$STUB" ]; then
  mkdir -p stubdir && ln -sf "$STUB" stubdir/libcuda.so.1 && echo "stub: $STUB as stubdir/libcuda.so.1"
  LD_LIBRARY_PATH="$OUT/stubdir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" timeout 60 python3 -c \
    "import torch; print(torch.cuda.is_available()); torch.zeros(1, device='cuda')" > stub.txt 2>&1
  echo "torch with the stub first on LD_LIBRARY_PATH: exit $?"; grep -m1 -E "stub library|Error 34" stub.txt
  triaged "the driver stub library loaded first" library_shadowing stub.txt
else
  echo "no CUDA toolkit stub library on this machine: the stub case is not run"
fi

own_paste_is_clean
cd / && rm -rf "$OUT"
finish
