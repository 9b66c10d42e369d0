/*===- FakeCudaDriver.c - a CUDA driver stand-in for tests ----------------===*
 *
 * libcuda.so.1 for machines without a GPU: the driver entry points that
 * libtfm_cuda_runtime.so resolves, over host memory. Modules must be cubins
 * (ELF) or PTX text, kernels must exist by name in them, and launches are
 * counted but do nothing, so results are not computed: the tests that load
 * this library check the plumbing (initialisation, module loading, kernel
 * lookup, launches, copies, allocation balance), not numerics. It has one
 * device, or $FAKE_CUDA_DEVICES. At exit it
 * prints one line: "fake-cuda: <modules> modules, <launches> launches,
 * <live> allocations live".
 *
 *===----------------------------------------------------------------------===*/
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef int CUresult;
typedef unsigned long long CUdeviceptr;

static long modules, launches, live;
static int registered;

static void report(void) {
  fprintf(stderr, "fake-cuda: %ld modules, %ld launches, %ld allocations live\n",
          modules, launches, live);
}

CUresult cuInit(unsigned flags) {
  (void)flags;
  if (!registered) {
    registered = 1;
    atexit(report);
  }
  return 0;
}
CUresult cuGetErrorName(CUresult e, const char **s) {
  *s = e == 200 ? "CUDA_ERROR_INVALID_IMAGE"
       : e == 500 ? "CUDA_ERROR_NOT_FOUND" : "CUDA_ERROR_UNKNOWN";
  return 0;
}
CUresult cuGetErrorString(CUresult e, const char **s) {
  *s = e == 200 ? "device kernel image is invalid"
       : e == 500 ? "named symbol not found" : "unknown error";
  return 0;
}
/* One device, or $FAKE_CUDA_DEVICES (a tensor-parallel run's ranks each
 * take their own). */
CUresult cuDeviceGetCount(int *n) {
  const char *devices = getenv("FAKE_CUDA_DEVICES");
  *n = devices ? atoi(devices) : 1;
  return 0;
}
CUresult cuDeviceGet(int *d, int ordinal) { *d = ordinal; return 0; }
CUresult cuDeviceGetAttribute(int *v, int attr, int dev) {
  (void)dev;
  /* Compute capability 9.0; memory pools (115) supported. */
  *v = attr == 75 ? 9 : attr == 76 ? 0 : attr == 115 ? 1 : 0;
  return 0;
}
CUresult cuDeviceGetName(char *name, int len, int dev) {
  (void)dev;
  snprintf(name, len, "tfm fake GPU");
  return 0;
}
static int context;
CUresult cuDevicePrimaryCtxRetain(void **ctx, int dev) {
  (void)dev;
  *ctx = &context;
  return 0;
}
CUresult cuCtxSetCurrent(void *ctx) { return ctx == &context ? 0 : 201; }
CUresult cuCtxSynchronize(void) { return 0; }

/* A module keeps its image to look kernels up by name. */
struct Module {
  char *image;
  size_t size;
};

static CUresult load(struct Module **out, const void *data, size_t size) {
  struct Module *m = malloc(sizeof *m);
  m->image = malloc(size);
  memcpy(m->image, data, size);
  m->size = size;
  *out = m;
  ++modules;
  return 0;
}

CUresult cuModuleLoadData(struct Module **out, const void *data) {
  const unsigned char *bytes = data;
  if (bytes[0] != 0x7f || bytes[1] != 'E' || bytes[2] != 'L' || bytes[3] != 'F')
    return 200;
  /* The size is not passed: an ELF64 image ends with its section headers. */
  uint64_t shoff;
  uint16_t shentsize, shnum;
  memcpy(&shoff, bytes + 0x28, 8);
  memcpy(&shentsize, bytes + 0x3a, 2);
  memcpy(&shnum, bytes + 0x3c, 2);
  return load(out, data, shoff + (uint64_t)shentsize * shnum);
}
CUresult cuModuleLoadDataEx(struct Module **out, const void *data,
                            unsigned n, int *options, void **values) {
  (void)n; (void)options; (void)values;
  if (!strstr((const char *)data, ".version"))
    return 200;
  return load(out, data, strlen((const char *)data) + 1);
}
CUresult cuModuleUnload(struct Module *m) {
  free(m->image);
  free(m);
  return 0;
}
CUresult cuModuleGetFunction(void **f, struct Module *m, const char *name) {
  size_t len = strlen(name);
  for (size_t i = 0; i + len <= m->size; ++i)
    if (memcmp(m->image + i, name, len) == 0) {
      *f = m->image + i;
      return 0;
    }
  return 500;
}
CUresult cuFuncSetAttribute(void *f, int attr, int value) {
  (void)f; (void)attr;
  return value > 227 * 1024 ? 1 : 0;
}
CUresult cuLaunchKernel(void *f, unsigned gx, unsigned gy, unsigned gz,
                        unsigned bx, unsigned by, unsigned bz, unsigned smem,
                        void *stream, void **params, void **extra) {
  (void)f; (void)stream; (void)params; (void)extra; (void)smem;
  if (!gx || !gy || !gz || !bx || !by || !bz || bx * by * bz > 1024)
    return 1; /* CUDA_ERROR_INVALID_VALUE */
  ++launches;
  return 0;
}
CUresult cuLaunchKernelEx(const void *config, void *f, void **p, void **e) {
  (void)config; (void)f; (void)p; (void)e;
  ++launches;
  return 0;
}
static int streamObject, eventObject;
CUresult cuStreamCreate(void **s, unsigned flags) { (void)flags; *s = &streamObject; return 0; }
CUresult cuStreamDestroy_v2(void *s) { (void)s; return 0; }
CUresult cuStreamSynchronize(void *s) { (void)s; return 0; }
CUresult cuStreamWaitEvent(void *s, void *e, unsigned f) { (void)s; (void)e; (void)f; return 0; }
CUresult cuEventCreate(void **e, unsigned f) { (void)f; *e = &eventObject; return 0; }
CUresult cuEventDestroy_v2(void *e) { (void)e; return 0; }
CUresult cuEventRecord(void *e, void *s) { (void)e; (void)s; return 0; }
CUresult cuEventSynchronize(void *e) { (void)e; return 0; }
CUresult cuEventElapsedTime(float *ms, void *start, void *end) {
  (void)start;
  (void)end;
  *ms = 0;
  return 0;
}
CUresult cuMemAlloc_v2(CUdeviceptr *p, size_t n) {
  *p = (CUdeviceptr)(uintptr_t)calloc(1, n ? n : 1);
  ++live;
  return 0;
}
CUresult cuMemAllocManaged(CUdeviceptr *p, size_t n, unsigned f) {
  (void)f;
  return cuMemAlloc_v2(p, n);
}
CUresult cuMemFree_v2(CUdeviceptr p) {
  free((void *)(uintptr_t)p);
  --live;
  return 0;
}
/* The stream-ordered allocator: immediate here (nothing runs on a stream). */
static int defaultPool;
CUresult cuDeviceGetDefaultMemPool(void **pool, int dev) {
  (void)dev;
  *pool = &defaultPool;
  return 0;
}
CUresult cuMemPoolSetAttribute(void *pool, int attr, void *value) {
  (void)attr;
  (void)value;
  return pool == &defaultPool ? 0 : 1;
}
CUresult cuMemAllocAsync(CUdeviceptr *p, size_t n, void *st) {
  (void)st;
  return cuMemAlloc_v2(p, n);
}
CUresult cuMemFreeAsync(CUdeviceptr p, void *st) {
  (void)st;
  return cuMemFree_v2(p);
}
CUresult cuMemcpyAsync(CUdeviceptr d, CUdeviceptr s, size_t n, void *st) {
  (void)st;
  memmove((void *)(uintptr_t)d, (const void *)(uintptr_t)s, n);
  return 0;
}
CUresult cuMemcpyHtoD_v2(CUdeviceptr d, const void *s, size_t n) {
  memcpy((void *)(uintptr_t)d, s, n);
  return 0;
}
CUresult cuMemcpyDtoH_v2(void *d, CUdeviceptr s, size_t n) {
  memcpy(d, (const void *)(uintptr_t)s, n);
  return 0;
}
CUresult cuMemsetD32Async(CUdeviceptr d, unsigned v, size_t n, void *s) {
  (void)s;
  for (size_t i = 0; i < n; ++i)
    ((unsigned *)(uintptr_t)d)[i] = v;
  return 0;
}
CUresult cuMemsetD16Async(CUdeviceptr d, unsigned short v, size_t n, void *s) {
  (void)s;
  for (size_t i = 0; i < n; ++i)
    ((unsigned short *)(uintptr_t)d)[i] = v;
  return 0;
}
CUresult cuMemHostRegister_v2(void *p, size_t n, unsigned f) { (void)p; (void)n; (void)f; return 0; }
CUresult cuMemHostUnregister(void *p) { (void)p; return 0; }
CUresult cuTensorMapEncodeTiled(void *map, int type, unsigned rank, void *addr,
                                const unsigned long long *dims,
                                const unsigned long long *strides,
                                const unsigned *box, const unsigned *estrides,
                                int a, int b, int c, int d) {
  (void)type; (void)addr; (void)dims; (void)strides; (void)box;
  (void)estrides; (void)a; (void)b; (void)c; (void)d;
  memset(map, 0, 128);
  return rank >= 1 && rank <= 5 ? 0 : 1;
}
