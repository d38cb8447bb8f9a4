#!/usr/bin/env bash
# The error texts the catalog's issue-25 sweeps added, produced for real on the GPU machine and
# triaged as a reporter would paste them: two ranks on one GPU (NCCL's "Duplicate GPU detected"),
# a rendezvous port already taken, init_process_group without torchrun, Triton not installed,
# ninja missing for a C++ extension, nvidia-smi not on PATH, a Triton kernel over the GPU's shared
# memory. Each output goes to `envdoctor triage` and the named cause is asserted; then the
# machine's own paste still finds no problem. Needs root only to hide Triton (it moves the
# package directory aside and back). Exits 1 when an outcome does not hold. About 2 minutes.
set +e
export NO_COLOR=1
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
. "$HERE/../faults.sh"  # the assertions, triaged and own_paste_is_clean
OUT=$(mktemp -d); cd "$OUT" || exit 1

cat > dup.py <<'PY'
import torch, torch.distributed as dist
dist.init_process_group("nccl")
torch.cuda.set_device(0)  # every rank on GPU 0: the bug a reporter pastes
x = torch.ones(1, device="cuda")
dist.all_reduce(x)
torch.cuda.synchronize()
PY
timeout 120 torchrun --nproc-per-node=2 --master-port=29611 dup.py > dup.txt 2>&1
echo "torchrun two ranks on one GPU: exit $?"; grep -m2 -E "Duplicate GPU|ncclInvalidUsage" dup.txt
triaged "two ranks on one GPU" ranks_share_a_gpu dup.txt

python3 -c "import socket,time; s=socket.socket(socket.AF_INET6); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 0); s.bind(('::', 29612)); s.listen(); time.sleep(90)" &
HOLD=$!; sleep 1
MASTER_ADDR=127.0.0.1 MASTER_PORT=29612 RANK=0 WORLD_SIZE=1 timeout 60 python3 -c \
  "import torch.distributed as d; d.init_process_group('gloo'); print('bound?')" > port.txt 2>&1
echo "rendezvous on a taken port: exit $?"; grep -m1 -E "Address already in use|failed to listen" port.txt
kill $HOLD 2>/dev/null; wait $HOLD 2>/dev/null
triaged "the rendezvous port is taken" rendezvous_port_in_use port.txt

env -u RANK -u WORLD_SIZE -u MASTER_ADDR -u MASTER_PORT timeout 60 python3 -c \
  "import torch.distributed as d; d.init_process_group('nccl')" > norank.txt 2>&1
echo "init_process_group without a launcher: exit $?"; grep -m1 "expected, but not set" norank.txt
triaged "not started by torchrun" not_launched_by_torchrun norank.txt

T=$(python3 -c "import triton, os; print(os.path.dirname(triton.__file__))")
mv "$T" "$T.hidden" && echo "hid $T"
timeout 60 python3 -c "import triton" > notriton.txt 2>&1
echo "import triton with the package hidden: exit $?"; tail -1 notriton.txt
mv "$T.hidden" "$T" && echo "restored $T"
triaged "Triton not installed" triton_missing notriton.txt

PY=$(command -v python3)  # the interpreter by its path, and a PATH with no ninja on it
timeout 120 env PATH=/nonexistent "$PY" -c "
import sys; sys.modules['ninja'] = None  # the pip ninja module hidden too
from torch.utils.cpp_extension import load_inline
load_inline('x', 'int f() { return 1; }', functions=['f'])" > noninja.txt 2>&1
echo "load_inline without ninja: exit $?"; grep -m1 -i "ninja" noninja.txt
triaged "ninja missing for a C++ extension" ninja_missing noninja.txt

PATH=/nonexistent /bin/bash -c nvidia-smi > nosmi.txt 2>&1
cat nosmi.txt
triaged "nvidia-smi not on PATH" cuda_not_available_driver nosmi.txt

cat > smem.py <<'PY'
import torch, triton, triton.language as tl

@triton.jit
def k(a, b, c, N: tl.constexpr):
    i = tl.arange(0, N)
    x = tl.load(a + i[:, None] * N + i[None, :])
    y = tl.load(b + i[:, None] * N + i[None, :])
    tl.store(c + i[:, None] * N + i[None, :], tl.dot(x, y))

n = 256  # a 256 x 256 fp32 dot in one block: far over any GPU's shared memory per block
a = torch.randn(n, n, device="cuda"); b = torch.randn(n, n, device="cuda"); c = torch.empty_like(a)
k[(1,)](a, b, c, N=n, num_stages=3)
torch.cuda.synchronize()
PY
timeout 180 python3 smem.py > smem.txt 2>&1
echo "a Triton kernel over the shared memory: exit $?"; grep -m1 "out of resource" smem.txt
triaged "a Triton kernel over the GPU's shared memory" gpu_shared_memory_too_small smem.txt

own_paste_is_clean
cd / && rm -rf "$OUT"
finish
