"""A fake nvidia-ml-py for the NVML child (put this directory first on its PYTHONPATH).

FAKE_NVML_MODE: h200 (one H200 answers), hang (nvmlInit never returns, as on a wedged GPU),
segv (the interpreter dies of SIGSEGV inside NVML), raise (NVML reports an error).
"""

import os
import signal
import time
from types import SimpleNamespace

NVML_P2P_CAPS_INDEX_READ = 0
NVML_P2P_STATUS_OK = 0
NVML_BRAND_NVIDIA = 14


class NVMLError(Exception):
    pass


def nvmlInit():
    mode = os.environ.get("FAKE_NVML_MODE", "h200")
    if mode == "hang":
        while True:
            time.sleep(1)
    if mode == "segv":
        os.kill(os.getpid(), signal.SIGSEGV)
    if mode == "raise":
        raise NVMLError("Driver Not Loaded")


def nvmlShutdown():
    pass


def nvmlSystemGetDriverVersion():
    return "580.65.06"


def nvmlSystemGetCudaDriverVersion_v2():
    return 13000


def nvmlDeviceGetCount():
    return 1


def nvmlDeviceGetHandleByIndex(i):
    return f"handle{i}"


def nvmlDeviceGetCudaComputeCapability(h):
    return (9, 0)


def nvmlDeviceGetMemoryInfo(h):
    return SimpleNamespace(total=143771 << 20, used=512 << 20)


def nvmlDeviceGetMigMode(h):
    return (0, 0)


def nvmlDeviceGetPersistenceMode(h):
    return 1


def nvmlDeviceGetComputeMode(h):
    return 0


def nvmlDeviceGetBrand(h):
    return 14


def nvmlDeviceGetPciInfo(h):
    return SimpleNamespace(busId=b"00000000:18:00.0")


def nvmlDeviceGetComputeRunningProcesses(h):
    return []


def nvmlDeviceGetName(h):
    return "NVIDIA H200"


def nvmlDeviceGetUUID(h):
    return "GPU-8d6ff5c2-1111-2222-3333-444455556666"


def nvmlDeviceGetSerial(h):
    raise NVMLError("Not Supported")
