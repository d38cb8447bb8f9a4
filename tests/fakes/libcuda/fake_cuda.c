/* A fake libcuda.so.1 for the liveness tests: the driver-API calls bodies/cuda_kernel.py makes,
   with "device memory" in host memory and the kernel computed on the CPU from the launch's real
   parameters (so the child's argument marshalling is exercised). FAKE_CUDA selects a fault:
   ok (default), stub (cuInit -> CUDA_ERROR_STUB_LIBRARY, and cuGetErrorName answers nothing), nodevice (cuInit -> NO_DEVICE),
   wrong (the kernel writes one wrong element), hang (cuCtxSynchronize never returns),
   launchfail (cuLaunchKernel -> CUDA_ERROR_LAUNCH_FAILED on the second device). FAKE_CUDA_COUNT
   sets how many devices (default 2). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef int CUresult;
static const char *mode(void) { const char *m = getenv("FAKE_CUDA"); return m ? m : "ok"; }
static int is(const char *m) { return strcmp(mode(), m) == 0; }
static __thread int current = -1;  /* per thread, as a CUDA context is */

CUresult cuGetErrorName(CUresult e, const char **s) {
    if (is("stub")) return 34;  /* as CUDA 13.0's stubs/libcuda.so: no name for anything */
    switch (e) {
    case 34: *s = "CUDA_ERROR_STUB_LIBRARY"; return 0;
    case 100: *s = "CUDA_ERROR_NO_DEVICE"; return 0;
    case 719: *s = "CUDA_ERROR_LAUNCH_FAILED"; return 0;
    default: return 1;
    }
}
CUresult cuInit(unsigned f) { (void)f; return is("stub") ? 34 : is("nodevice") ? 100 : 0; }
CUresult cuDriverGetVersion(int *v) { *v = 13000; return 0; }
CUresult cuDeviceGetCount(int *n) { const char *c = getenv("FAKE_CUDA_COUNT"); *n = c ? atoi(c) : 2; return 0; }
CUresult cuDeviceGet(int *d, int i) { *d = i; return 0; }
CUresult cuDeviceGetName(char *s, int len, int d) { (void)d; strncpy(s, "Fake H200", len); return 0; }
CUresult cuDeviceGetPCIBusId(char *s, int len, int d) { strncpy(s, d ? "00000000:1B:00.0" : "00000000:19:00.0", len); return 0; }
CUresult cuDevicePrimaryCtxRetain(void **c, int d) { *c = (void *)(intptr_t)(d + 1); current = d; return 0; }
CUresult cuDevicePrimaryCtxRelease_v2(int d) { (void)d; return 0; }
CUresult cuCtxSetCurrent(void *c) { current = (int)(intptr_t)c - 1; return 0; }
CUresult cuModuleLoadData(void **m, const void *ptx) { *m = strstr(ptx, "envdoctor_fill") ? (void *)1 : 0; return *m ? 0 : 218; }
CUresult cuModuleUnload(void *m) { (void)m; return 0; }
CUresult cuModuleGetFunction(void **f, void *m, const char *name) { (void)m; *f = (void *)1; return strcmp(name, "envdoctor_fill") ? 500 : 0; }
CUresult cuMemAlloc_v2(uint64_t *p, size_t n) { *p = (uint64_t)(uintptr_t)malloc(n); return *p ? 0 : 2; }
CUresult cuMemFree_v2(uint64_t p) { free((void *)(uintptr_t)p); return 0; }
CUresult cuLaunchKernel(void *f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz,
                        unsigned shm, void *stream, void **params, void **extra) {
    (void)f; (void)gy; (void)gz; (void)by; (void)bz; (void)shm; (void)stream; (void)extra;
    if (is("launchfail") && current == 1) return 719;
    uint32_t *out = (uint32_t *)(uintptr_t)(*(uint64_t *)params[0]);
    uint32_t n = *(uint32_t *)params[1], seed = *(uint32_t *)params[2];
    for (uint64_t i = 0; i < (uint64_t)gx * bx && i < n; i++) out[i] = (uint32_t)(i * 3 + seed);
    if (is("wrong")) out[n / 2] ^= 1;
    return 0;
}
CUresult cuCtxSynchronize(void) { if (is("hang")) for (;;) pause(); return 0; }
CUresult cuMemcpyDtoH_v2(void *dst, uint64_t src, size_t n) { memcpy(dst, (void *)(uintptr_t)src, n); return 0; }
