/* A stand-in for the CUDA driver (libcuda.so.1) of a machine with no GPU, so that the PyPI
 * build of Legate, which needs libcuda.so.1 even to run on CPUs, starts on the CPU machine and
 * in CI. Put the folder holding it on LD_LIBRARY_PATH; it is a test tool, never installed.
 *
 * What Legate 26.6 asks of it (measured; see issue 15):
 *  - its shared libraries import cuGetErrorName, cuGetErrorString, cuMemFreeHost and
 *    cuMemFree_v2 directly (lazy binding, so only the first two are ever called);
 *  - Realm dlopens the library and resolves about 100 names through cuGetProcAddress (the
 *    5-argument form, CUDA 13000). Every lookup must succeed: Realm asserts on a null pointer;
 *  - cuInit must fail with CUDA_ERROR_NO_DEVICE. Succeeding with no device makes Realm crash
 *    while computing the smallest GPU's memory;
 *  - cuDriverGetVersion gives 13000, cuDeviceGetCount 0, and the error functions real strings.
 * Every other entry point fails with CUDA_ERROR_NOT_INITIALIZED, as a real driver's do before
 * a successful cuInit. H5TILE_NO_GPU_LIBCUDA_TRACE=1 prints each name looked up to stderr. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define EXPORT __attribute__((visibility("default")))

typedef int CUresult;
typedef unsigned long long cuuint64_t;
typedef int CUdevice;
typedef unsigned long long CUdeviceptr;

enum {
  kSuccess = 0,
  kInvalidValue = 1,
  kNotInitialized = 3,
  kNoDevice = 100,
  kDriverVersion = 13000,
};

struct ErrorText {
  CUresult code;
  const char* name;
  const char* text;
};

/* The codes a program may see from this driver, and a few it may ask about. */
static const struct ErrorText kErrors[] = {
    {0, "CUDA_SUCCESS", "no error"},
    {1, "CUDA_ERROR_INVALID_VALUE", "invalid argument"},
    {2, "CUDA_ERROR_OUT_OF_MEMORY", "out of memory"},
    {3, "CUDA_ERROR_NOT_INITIALIZED", "initialization error"},
    {4, "CUDA_ERROR_DEINITIALIZED", "driver shutting down"},
    {34, "CUDA_ERROR_STUB_LIBRARY", "CUDA driver is a stub library"},
    {35, "CUDA_ERROR_INSUFFICIENT_DRIVER", "CUDA driver version is insufficient for CUDA runtime version"},
    {100, "CUDA_ERROR_NO_DEVICE", "no CUDA-capable device is detected"},
    {101, "CUDA_ERROR_INVALID_DEVICE", "invalid device ordinal"},
    {201, "CUDA_ERROR_INVALID_CONTEXT", "invalid device context"},
    {400, "CUDA_ERROR_INVALID_HANDLE", "invalid resource handle"},
    {500, "CUDA_ERROR_NOT_FOUND", "named symbol not found"},
    {801, "CUDA_ERROR_NOT_SUPPORTED", "operation not supported"},
    {999, "CUDA_ERROR_UNKNOWN", "unknown error"},
};

static const struct ErrorText* find_error(CUresult code) {
  for (size_t i = 0; i < sizeof kErrors / sizeof kErrors[0]; ++i) {
    if (kErrors[i].code == code) return &kErrors[i];
  }
  return NULL;
}

EXPORT CUresult cuInit(unsigned int flags) {
  (void)flags;
  return kNoDevice;
}

EXPORT CUresult cuDriverGetVersion(int* version) {
  if (version == NULL) return kInvalidValue;
  *version = kDriverVersion;
  return kSuccess;
}

EXPORT CUresult cuDeviceGetCount(int* count) {
  if (count == NULL) return kInvalidValue;
  *count = 0;
  return kSuccess;
}

EXPORT CUresult cuGetErrorName(CUresult error, const char** name) {
  if (name == NULL) return kInvalidValue;
  const struct ErrorText* e = find_error(error);
  *name = e != NULL ? e->name : NULL;
  return e != NULL ? kSuccess : kInvalidValue;
}

EXPORT CUresult cuGetErrorString(CUresult error, const char** text) {
  if (text == NULL) return kInvalidValue;
  const struct ErrorText* e = find_error(error);
  *text = e != NULL ? e->text : NULL;
  return e != NULL ? kSuccess : kInvalidValue;
}

/* Every entry point without a meaning here. Callers pass it their own arguments, which the
 * x86-64 and AArch64 calling conventions let a function that takes none ignore. */
typedef void (*AnyFunction)(void); /* any function, as C's cast rules carry one */
static CUresult not_initialized(void) { return kNotInitialized; }

EXPORT CUresult cuMemFreeHost(void* p) {
  (void)p;
  return kNotInitialized;
}

EXPORT CUresult cuMemFree_v2(CUdeviceptr p) {
  (void)p;
  return kNotInitialized;
}

EXPORT CUresult cuGetProcAddress_v2(const char* symbol, void** pfn, int cuda_version, cuuint64_t flags,
                                    int* symbol_status);

struct Entry {
  const char* name;
  AnyFunction function;
};

static AnyFunction lookup(const char* symbol) {
  const struct Entry entries[] = {
      {"cuInit", (AnyFunction)cuInit},
      {"cuDriverGetVersion", (AnyFunction)cuDriverGetVersion},
      {"cuDeviceGetCount", (AnyFunction)cuDeviceGetCount},
      {"cuGetErrorName", (AnyFunction)cuGetErrorName},
      {"cuGetErrorString", (AnyFunction)cuGetErrorString},
      {"cuGetProcAddress", (AnyFunction)cuGetProcAddress_v2},
      {"cuMemFreeHost", (AnyFunction)cuMemFreeHost},
      {"cuMemFree", (AnyFunction)cuMemFree_v2},
  };
  for (size_t i = 0; i < sizeof entries / sizeof entries[0]; ++i) {
    if (strcmp(entries[i].name, symbol) == 0) return entries[i].function;
  }
  return (AnyFunction)not_initialized;
}

/* The CUDA 12+ lookup: (symbol, function out, CUDA version, flags, status out). Every name
 * resolves, the unknown ones to not_initialized. */
EXPORT CUresult cuGetProcAddress_v2(const char* symbol, void** pfn, int cuda_version, cuuint64_t flags,
                                    int* symbol_status) {
  (void)cuda_version;
  (void)flags;
  if (symbol == NULL || pfn == NULL) return kInvalidValue;
  const char* trace = getenv("H5TILE_NO_GPU_LIBCUDA_TRACE");
  if (trace != NULL && strcmp(trace, "1") == 0) fprintf(stderr, "no_gpu_libcuda: cuGetProcAddress(%s)\n", symbol);
  /* POSIX lets a function pointer travel through a void* (dlsym does the same). */
  const AnyFunction function = lookup(symbol);
  memcpy(pfn, &function, sizeof function);
  if (symbol_status != NULL) *symbol_status = 0; /* CU_GET_PROC_ADDRESS_SUCCESS */
  return kSuccess;
}

/* CUDA 13's headers name the 5-argument form cuGetProcAddress. */
EXPORT CUresult cuGetProcAddress(const char* symbol, void** pfn, int cuda_version, cuuint64_t flags,
                                 int* symbol_status) {
  return cuGetProcAddress_v2(symbol, pfn, cuda_version, flags, symbol_status);
}
