//===- CudaRuntime.h - the CUDA host runtime of GPU-compiled code -*- C -*-===//
//
// libtfm_cuda_runtime.so provides the `mgpu*` functions that the host side of
// code lowered by `--tfm-gpu-pipeline` (upstream gpu-to-llvm and the
// gpu.binary offloading translation) calls, over the CUDA driver API. It does
// not link against the driver: it loads `libcuda.so.1` with dlopen on first
// use, so tfm builds, links and runs its CPU path on machines without one.
//
// Errors. Generated host code has no error path, so the library keeps the
// FIRST driver error (sticky) and turns every later call into a no-op;
// callers check `tfmCudaGetLastError()` after running compiled code. Each
// error is also printed once to stderr as one line
// `tfm-cuda: error: <call>: <CUDA_ERROR_NAME> (<code>): <description>`.
//
// Resources. Streams are cached (mgpuStreamDestroy returns a stream to a
// pool), allocations made on a stream come from the device's memory pool
// (stream-ordered, kept for reuse across calls), kernels asking for more than 48 KiB of dynamic shared memory are
// opted in once per function, and live device allocations are counted so
// that a caller can check that compiled code freed what it allocated.
//
// This header declares the tfm-specific entry points only, in C, so that it
// can be used without MLIR or CUDA headers.
//
//===----------------------------------------------------------------------===//
#ifndef TFM_RUNTIME_CUDARUNTIME_H
#define TFM_RUNTIME_CUDARUNTIME_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/// Loads the driver, initialises it and makes device `ordinal`'s primary
/// context current. Returns 0 on success; otherwise a one-line message that
/// says why (no libcuda.so.1, the toolkit's stub library, no device, ...),
/// which stays valid for the life of the process. Later calls return the
/// first call's result.
const char *tfmCudaInitialize(int ordinal);

/// Compute capability and name of the initialised device; returns non-zero
/// (and leaves the outputs alone) before a successful tfmCudaInitialize.
int tfmCudaGetDeviceInfo(int *major, int *minor, char *name, size_t nameSize);

/// The first driver error since initialisation or the last
/// tfmCudaClearError, as the one line printed to stderr; NULL if none.
const char *tfmCudaGetLastError(void);
void tfmCudaClearError(void);

/// Waits for all work on the device; returns the sticky error or NULL.
const char *tfmCudaSynchronize(void);

/// Device allocations made through mgpuMemAlloc or tfmCudaAlloc and not yet
/// freed.
int64_t tfmCudaLiveAllocations(void);

/// Synchronous helpers for hosts that call compiled entries: a device buffer
/// (NULL on error, recorded), its release, and copies to and from it. The
/// copies wait for all work on the device first and return the sticky error
/// or NULL.
void *tfmCudaAlloc(size_t bytes);
void tfmCudaFree(void *device);
const char *tfmCudaCopyToDevice(void *device, const void *host, size_t bytes);
const char *tfmCudaCopyToHost(void *host, const void *device, size_t bytes);

/// A profile of compiled code on the device: tfmCudaProfileStart waits for
/// the device and starts recording (each kernel launch is bracketed by two
/// timing events on its stream; the host time spent in allocation, free and
/// stream synchronisation is summed); tfmCudaProfileReport waits again,
/// stops, and prints to stdout the kernel time per call of each kernel
/// (divided by `calls`, the entry calls made in between), largest first.
void tfmCudaProfileStart(void);
void tfmCudaProfileReport(int calls);

#ifdef __cplusplus
} // extern "C"
#endif

#endif // TFM_RUNTIME_CUDARUNTIME_H
