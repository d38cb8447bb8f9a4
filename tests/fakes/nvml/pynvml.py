"""A fake nvidia-ml-py for the NVML child (put this directory first on its PYTHONPATH).

FAKE_NVML_MODE: h200 (H200s answer), hang (nvmlInit never returns, as on a wedged GPU),
segv (the interpreter dies of SIGSEGV inside NVML), raise (NVML reports an error),
health_hang (init and the driver query answer, but the ECC counters never do: only the
health child hangs).
FAKE_NVML_GPUS: how many GPUs (default 1). FAKE_NVML_FAULT: ``ecc:N`` gives GPU N two
uncorrectable ECC errors since the driver loaded, ``remap:N`` a pending row remap on GPU N,
``reset:N`` recovery action 1 (GPU reset required), ``nvlink:N`` link 5 of GPU N down,
``thermal:N`` HW thermal slowdown on GPU N, ``pcie:N`` GPU N at Gen1 x8 while 97% busy.

The healthy values are those nvidia-ml-py read on two H200s with driver 580.159.04
(tests/fixtures/gpu-explore/explore.txt): ECC on, every counter 0, remapped rows (0, 0, 0, 0),
retired pages Not Supported, field 230 = 0, PCIe Gen5 x16 of Gen5 x16, NVLink links 0-17 up
and 18+ Invalid Argument, clock event reasons 0x1 (idle).
"""

import os
import signal
import time
from types import SimpleNamespace

NVML_P2P_CAPS_INDEX_READ = 0
NVML_P2P_STATUS_OK = 0
NVML_BRAND_NVIDIA = 14
NVML_SUCCESS = 0
NVML_ERROR_INVALID_ARGUMENT = 2
NVML_ERROR_NOT_SUPPORTED = 3
NVML_ERROR_FUNCTION_NOT_FOUND = 13
NVML_VOLATILE_ECC, NVML_AGGREGATE_ECC = 0, 1
NVML_MEMORY_ERROR_TYPE_CORRECTED, NVML_MEMORY_ERROR_TYPE_UNCORRECTED = 0, 1
NVML_PAGE_RETIREMENT_CAUSE_MULTIPLE_SINGLE_BIT_ECC_ERRORS, NVML_PAGE_RETIREMENT_CAUSE_DOUBLE_BIT_ECC_ERROR = 0, 1
NVML_NVLINK_MAX_LINKS = 36
NVML_FI_DEV_GET_GPU_RECOVERY_ACTION = 230


class NVMLError(Exception):
    _TEXT = {2: "Invalid Argument", 3: "Not Supported", 15: "GPU is lost"}

    def __init__(self, value):
        super().__init__(value)
        self.value = value if isinstance(value, int) else None

    def __str__(self):
        return self._TEXT.get(self.value, str(self.args[0]))


def _mode():
    return os.environ.get("FAKE_NVML_MODE", "h200")


def _fault(h):
    """The fault FAKE_NVML_FAULT puts on this GPU ("" for none)."""
    kind, _, index = os.environ.get("FAKE_NVML_FAULT", "").partition(":")
    return kind if index and h == f"handle{index}" else ""


def nvmlInit():
    mode = _mode()
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
    return int(os.environ.get("FAKE_NVML_GPUS", "1"))


def nvmlDeviceGetHandleByIndex(i):
    return f"handle{i}"


def _index(h):
    return int(h[len("handle") :])


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
    return SimpleNamespace(busId=f"00000000:{0x18 + _index(h):02X}:00.0".encode())


def nvmlDeviceGetComputeRunningProcesses(h):
    return []


def nvmlDeviceGetName(h):
    return "NVIDIA H200"


def nvmlDeviceGetUUID(h):
    return f"GPU-8d6ff5c2-1111-2222-3333-44445555666{_index(h)}"


def nvmlDeviceGetSerial(h):
    raise NVMLError("Not Supported")


# ---- health ----------------------------------------------------------------------------------


def nvmlDeviceGetMinorNumber(h):
    return _index(h)


def nvmlDeviceGetEccMode(h):
    return [1, 1]


def nvmlDeviceGetTotalEccErrors(h, err, counter):
    if _mode() == "health_hang":
        while True:
            time.sleep(1)
    if _fault(h) == "ecc" and err == NVML_MEMORY_ERROR_TYPE_UNCORRECTED:
        return 2
    return 0


def nvmlDeviceGetRemappedRows(h):
    return (0, 1, 1, 0) if _fault(h) == "remap" else (0, 0, 0, 0)


def nvmlDeviceGetRetiredPages(h, cause):
    raise NVMLError(NVML_ERROR_NOT_SUPPORTED)  # Hopper remaps rows instead


def nvmlDeviceGetRetiredPagesPendingStatus(h):
    raise NVMLError(NVML_ERROR_NOT_SUPPORTED)


def nvmlDeviceGetFieldValues(h, ids):
    action = 1 if _fault(h) == "reset" else 0
    return [SimpleNamespace(nvmlReturn=NVML_SUCCESS, valueType=1, value=SimpleNamespace(uiVal=action if i == 230 else 0)) for i in ids]


def nvmlDeviceGetCurrPcieLinkGeneration(h):
    return 1 if _fault(h) == "pcie" else 5


def nvmlDeviceGetCurrPcieLinkWidth(h):
    return 8 if _fault(h) == "pcie" else 16


def nvmlDeviceGetMaxPcieLinkGeneration(h):
    return 5


def nvmlDeviceGetMaxPcieLinkWidth(h):
    return 16


def nvmlDeviceGetUtilizationRates(h):
    return SimpleNamespace(gpu=97 if _fault(h) == "pcie" else 0, memory=0)


def nvmlDeviceGetNvLinkState(h, link):
    if link >= 18:
        raise NVMLError(NVML_ERROR_INVALID_ARGUMENT)
    return 0 if _fault(h) == "nvlink" and link == 5 else 1


def nvmlDeviceGetCurrentClocksEventReasons(h):
    return 0x40 if _fault(h) == "thermal" else 0x1


def nvmlDeviceGetP2PStatus(h1, h2, caps):
    return NVML_P2P_STATUS_OK
