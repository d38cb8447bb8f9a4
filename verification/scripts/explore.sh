#!/usr/bin/env bash
# Raw facts of the GPU machine, gathered once so checks are designed against reality.
# Raw facts, no judgement; asserted only that nvidia-smi answers, CUDA initialises and the check
# passes (`want` in faults.sh): exits 1 otherwise.
set +e
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
. "$HERE/../faults.sh"  # the fault kit (fault_* functions), from this repository
h() { echo; echo "=== $* ==="; }
h uname; uname -a
h nvidia-smi; timeout 20 nvidia-smi; want 0 "nvidia-smi answers"
h "nvidia-smi -q (head)"; timeout 20 nvidia-smi -q | head -80
h /proc/driver/nvidia/version; cat /proc/driver/nvidia/version; cat /sys/module/nvidia/version
h ls /dev/nvidia*; ls -la /dev/nvidia* 2>&1 | head
h "ldconfig -p (cuda-ish)"; /sbin/ldconfig -p | grep -Ei "cuda|cudnn|nccl|nvidia-ml|cublas|gomp|nvrtc" 
h "realpath libcuda"; for f in $(/sbin/ldconfig -p | awk '/libcuda.so.1|libnvidia-ml.so.1/{print $NF}'); do echo "$f -> $(readlink -f $f)"; done
h env; env | grep -Ei "cuda|nvidia|ld_library|^path=|torch|triton|nccl|^home|^user|tmpdir|pjrt|xla" | sort
h python; which python3; python3 -c "import sys, sysconfig; print(sys.version); print(sysconfig.get_default_scheme(), sysconfig.get_paths())"
h Python.h; python3 -c "import sysconfig, os; i=sysconfig.get_paths()['include']; print(i, os.path.exists(i+'/Python.h'))"
h compilers; which cc gcc g++ clang clang++ nvcc ninja; gcc --version | head -1; nvcc --version | tail -2; echo CUDA_HOME=$CUDA_HOME; ls -d /usr/local/cuda* 2>&1; cat /usr/local/cuda/version.json 2>/dev/null | head -20
h shm; df -h /dev/shm /tmp / ; mount | grep -E "shm| /tmp| / " 
h mountinfo; head -40 /proc/self/mountinfo
h getpass; python3 -c "import getpass, os; print(getpass.getuser(), os.getuid())"
h pci; for d in /sys/bus/pci/devices/*; do v=$(cat $d/vendor 2>/dev/null); c=$(cat $d/class 2>/dev/null); [ "$v" = 0x10de ] && echo "$d $v $c $(cat $d/device)"; done
h pynvml; python3 - <<'PY'
import pynvml as n
n.nvmlInit()
print("driver", n.nvmlSystemGetDriverVersion(), "cuda", n.nvmlSystemGetCudaDriverVersion_v2())
for i in range(n.nvmlDeviceGetCount()):
    h = n.nvmlDeviceGetHandleByIndex(i)
    def g(f, *a):
        try: return f(h, *a)
        except Exception as e: return f"ERR {type(e).__name__}: {e}"
    print(i, g(n.nvmlDeviceGetName), g(n.nvmlDeviceGetUUID), g(n.nvmlDeviceGetSerial), g(n.nvmlDeviceGetCudaComputeCapability))
    print(" mem", g(n.nvmlDeviceGetMemoryInfo), "mig", g(n.nvmlDeviceGetMigMode), "persist", g(n.nvmlDeviceGetPersistenceMode), "compute", g(n.nvmlDeviceGetComputeMode), "brand", g(n.nvmlDeviceGetBrand))
    print(" pci", g(n.nvmlDeviceGetPciInfo).busId if not isinstance(g(n.nvmlDeviceGetPciInfo), str) else g(n.nvmlDeviceGetPciInfo))
    print(" procs", g(n.nvmlDeviceGetComputeRunningProcesses))
    print(" clocks", g(n.nvmlDeviceGetClockInfo, 1), g(n.nvmlDeviceGetMaxClockInfo, 1), "throttle", g(n.nvmlDeviceGetCurrentClocksEventReasons))
    try:
        fi = n.c_nvmlGpuFabricInfoV_t(); print(" fabric", g(n.nvmlDeviceGetGpuFabricInfoV, fi) , fi.state, fi.status)
    except Exception as e: print(" fabric ERR", e)
PY
h cuDriverGetVersion; python3 -c "
import ctypes; l=ctypes.CDLL('libcuda.so.1'); v=ctypes.c_int(); print(l.cuDriverGetVersion(ctypes.byref(v)), v.value)"
h "pip metadata"; python3 - <<'PY'
import importlib.metadata as md
for n in ["torch","triton","nvidia-cudnn-cu13","nvidia-nccl-cu13","cuda-toolkit","nvidia-cublas","numpy","torchvision","torchaudio"]:
    try: print(n, md.version(n))
    except Exception as e: print(n, "ERR", e)
print([r for r in md.requires("torch")])
PY
h "torch probe"; time python3 - <<'PY'
import time, os
t=time.time(); import torch; print("import", time.time()-t)
print(torch.__version__, torch.version.cuda, torch.backends.cudnn.version(), torch.cuda.nccl.version(), torch._C._cuda_getArchFlags())
t=time.time(); print(torch.cuda.is_available(), torch.cuda.device_count(), torch.cuda.get_device_name(0), torch.cuda.get_device_capability(0)); torch.zeros(1, device="cuda"); print("cuda init", time.time()-t)
libs=set()
for line in open("/proc/self/maps"):
    p=line.split()[-1]
    if ".so" in p and any(k in p for k in ["cudnn","cublas","nccl","cudart","gomp","iomp","libcuda","nvrtc","nvJitLink"]): libs.add(p)
for p in sorted(libs): print(" ", p, "->", os.path.realpath(p))
import triton; print("triton", triton.__version__, triton.__file__)
PY
want 0 "torch probe: CUDA initialises on GPU 0"
h ptxas; ls /opt/torch/.venv/lib/python3.12/site-packages/triton/backends/nvidia/bin/ 2>&1; for p in /opt/torch/.venv/lib/python3.12/site-packages/triton/backends/nvidia/bin/ptxas*; do $p --version | tail -2; done
h "floor: import+init+compile a+b (fresh caches)"; export TRITON_CACHE_DIR=$(mktemp -d) TORCHINDUCTOR_CACHE_DIR=$(mktemp -d); time python3 -c "
import time; t=time.time(); import torch; a=torch.randn(8,device='cuda'); f=torch.compile(lambda a,b:a+b); f(a,a); torch.cuda.synchronize(); print('floor', time.time()-t)"
h "envdoctor check (as of now)"; time envdoctor check --no-color -v
want 0 "envdoctor check passes on the healthy machine"
finish
