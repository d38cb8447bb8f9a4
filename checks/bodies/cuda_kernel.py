"""A kernel on every visible GPU through the CUDA driver API, with no torch and no compiler.

Run as a script (``python cuda_kernel.py``) by ``envdoctor_checks.liveness``, in a child process
of its own with a deadline (a wedged GPU blocks ``cuInit`` or a synchronise forever). It loads
``libcuda.so.1`` with ctypes, hands the driver a tiny PTX kernel (the driver JIT-compiles PTX
for any GPU from Maxwell on, so no ``ptxas`` or CUDA toolkit is involved), launches it on each
visible device, copies the result back and compares every element with what the kernel must
have written. It imports the standard library only and prints one JSON line:
``{"ok": true, "driver": int, "library": {...}, "gpus": [{"index", "name", "pci_bus_id", "ok",
"error", "ms"}]}`` or ``{"ok": false, "stage": "...", "error": "...", "code": int, ...}``.
"""

import array
import ctypes
import json
import os
import sys
import time
from concurrent.futures import ThreadPoolExecutor

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from nvml_child import lib_info, loaded_library  # type: ignore[import-not-found]  # noqa: E402  (this file's directory, put on sys.path above)

N = 1 << 16
SEED = 0x5EED
# out[i] = i * 3 + seed, for i < n: every thread writes a value only it can know.
PTX = b"""
.version 6.0
.target sm_50
.address_size 64
.visible .entry envdoctor_fill(.param .u64 out, .param .u32 n, .param .u32 seed)
{
    .reg .pred %p;
    .reg .b32 %r<7>;
    .reg .b64 %rd<4>;
    ld.param.u64 %rd1, [out];
    ld.param.u32 %r1, [n];
    ld.param.u32 %r5, [seed];
    mov.u32 %r2, %ctaid.x;
    mov.u32 %r3, %ntid.x;
    mov.u32 %r4, %tid.x;
    mad.lo.s32 %r2, %r2, %r3, %r4;
    setp.ge.u32 %p, %r2, %r1;
    @%p bra DONE;
    cvta.to.global.u64 %rd2, %rd1;
    mul.wide.u32 %rd3, %r2, 4;
    add.s64 %rd2, %rd2, %rd3;
    mad.lo.s32 %r6, %r2, 3, %r5;
    st.global.u32 [%rd2], %r6;
DONE:
    ret;
}
\x00"""


EXPECTED = memoryview(array.array("I", range(SEED, SEED + 3 * N, 3)))


# The driver's names for the codes this child can meet; the stub library's cuGetErrorName does not
# answer (seen on the H200 with CUDA 13.0's stubs/libcuda.so), so the name must not depend on it.
ERROR_NAMES = {
    2: "CUDA_ERROR_OUT_OF_MEMORY",
    3: "CUDA_ERROR_NOT_INITIALIZED",
    34: "CUDA_ERROR_STUB_LIBRARY",
    35: "CUDA_ERROR_INSUFFICIENT_DRIVER",
    46: "CUDA_ERROR_DEVICE_UNAVAILABLE",
    100: "CUDA_ERROR_NO_DEVICE",
    101: "CUDA_ERROR_INVALID_DEVICE",
    209: "CUDA_ERROR_NO_BINARY_FOR_GPU",
    214: "CUDA_ERROR_ECC_UNCORRECTABLE",
    218: "CUDA_ERROR_INVALID_PTX",
    222: "CUDA_ERROR_UNSUPPORTED_PTX_VERSION",
    304: "CUDA_ERROR_OPERATING_SYSTEM",
    700: "CUDA_ERROR_ILLEGAL_ADDRESS",
    719: "CUDA_ERROR_LAUNCH_FAILED",
    803: "CUDA_ERROR_SYSTEM_DRIVER_MISMATCH",
    804: "CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE",
    999: "CUDA_ERROR_UNKNOWN",
}


class CudaError(Exception):
    def __init__(self, stage, code, name):
        super().__init__(f"{stage}: {name} ({code})")
        self.stage, self.code, self.name = stage, code, name


class Driver:
    def __init__(self, lib):
        self.lib = lib

    def error_name(self, code):
        s = ctypes.c_char_p()
        try:
            if self.lib.cuGetErrorName(code, ctypes.byref(s)) == 0 and s.value:
                return s.value.decode()
        except AttributeError:
            pass
        return ERROR_NAMES.get(code, f"CUDA error {code}")

    def call(self, name, *args):
        code = getattr(self.lib, name)(*args)
        if code:
            raise CudaError(name, code, self.error_name(code))


def _device_info(drv, dev, index):
    name = ctypes.create_string_buffer(256)
    bus = ctypes.create_string_buffer(32)
    info = {"index": index, "name": None, "pci_bus_id": None}
    if drv.lib.cuDeviceGetName(name, 256, dev) == 0:
        info["name"] = name.value.decode(errors="replace")
    if drv.lib.cuDeviceGetPCIBusId(bus, 32, dev) == 0:
        info["pci_bus_id"] = bus.value.decode(errors="replace")
    return info


def _launch(drv):
    """Load the PTX, run it once over N elements, return the first wrong index or None."""
    mod, fn, dptr = ctypes.c_void_p(), ctypes.c_void_p(), ctypes.c_uint64()
    drv.call("cuModuleLoadData", ctypes.byref(mod), PTX)
    try:
        drv.call("cuModuleGetFunction", ctypes.byref(fn), mod, b"envdoctor_fill")
        drv.call("cuMemAlloc_v2", ctypes.byref(dptr), ctypes.c_size_t(N * 4))
        try:
            n, seed = ctypes.c_uint32(N), ctypes.c_uint32(SEED)
            params = (ctypes.c_void_p * 3)(*(ctypes.cast(ctypes.byref(v), ctypes.c_void_p) for v in (dptr, n, seed)))
            block = 256
            drv.call("cuLaunchKernel", fn, (N + block - 1) // block, 1, 1, block, 1, 1, 0, None, params, None)
            drv.call("cuCtxSynchronize")
            host = (ctypes.c_uint32 * N)()
            drv.call("cuMemcpyDtoH_v2", host, dptr, ctypes.c_size_t(N * 4))
        finally:
            drv.lib.cuMemFree_v2(dptr)
    finally:
        drv.lib.cuModuleUnload(mod)
    got, want = memoryview(host).cast("B").cast("I"), EXPECTED
    if got == want:
        return None
    return next(i for i in range(N) if got[i] != want[i])


def run_on(drv, index):
    dev, ctx = ctypes.c_int(), ctypes.c_void_p()
    info, start = {"index": index, "name": None, "pci_bus_id": None}, time.perf_counter()
    try:
        drv.call("cuDeviceGet", ctypes.byref(dev), index)
        info = _device_info(drv, dev, index)
        drv.call("cuDevicePrimaryCtxRetain", ctypes.byref(ctx), dev)
        try:
            drv.call("cuCtxSetCurrent", ctx)
            wrong = _launch(drv)
        finally:
            drv.lib.cuDevicePrimaryCtxRelease_v2(dev)
    except CudaError as e:
        return {**info, "ok": False, "stage": e.stage, "code": e.code, "error": e.name, "ms": _ms(start)}
    if wrong is not None:
        return {**info, "ok": False, "stage": "compare", "code": None, "error": f"element {wrong} is wrong", "ms": _ms(start)}
    return {**info, "ok": True, "error": None, "ms": _ms(start)}


def _ms(start):
    return round((time.perf_counter() - start) * 1000, 2)


def main():
    try:
        lib = ctypes.CDLL("libcuda.so.1")
    except OSError as e:
        return {"ok": False, "stage": "load", "code": None, "error": str(e), "library": None}
    drv = Driver(lib)
    library = lib_info(loaded_library("libcuda.so"))
    start = time.perf_counter()
    try:
        drv.call("cuInit", 0)
        version, count = ctypes.c_int(), ctypes.c_int()
        drv.call("cuDriverGetVersion", ctypes.byref(version))
        drv.call("cuDeviceGetCount", ctypes.byref(count))
    except CudaError as e:
        return {"ok": False, "stage": e.stage, "code": e.code, "error": e.name, "library": library}
    init_ms = _ms(start)
    # One thread per GPU: a context costs about 0.2-0.3 s on an H200 and ctypes calls release the
    # GIL, so eight GPUs take the time of one.
    with ThreadPoolExecutor(max_workers=max(1, count.value)) as pool:
        gpus = list(pool.map(lambda i: run_on(drv, i), range(count.value)))
    return {"ok": True, "driver": version.value, "library": library, "init_ms": init_ms, "gpus": gpus}


if __name__ == "__main__":
    print(json.dumps(main()), flush=True)
