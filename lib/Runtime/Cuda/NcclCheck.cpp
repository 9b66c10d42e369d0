//===- NcclCheck.cpp - NcclApi.h against the toolkit's nccl.h -------------===//
//
// Compiled only where nccl.h is found: the constants, the id's size and the
// function types declared in NcclApi.h must be NCCL's.
//
//===----------------------------------------------------------------------===//
#include "NcclApi.h"

#include <nccl.h>

#include <type_traits>

static_assert(nccl::kSuccess == ncclSuccess);
static_assert(nccl::kFloat32 == ncclFloat32);
static_assert(nccl::kSum == ncclSum);
static_assert(nccl::kUniqueIdBytes == NCCL_UNIQUE_ID_BYTES);
static_assert(sizeof(nccl::UniqueId) == sizeof(ncclUniqueId));
static_assert(sizeof(nccl::Comm) == sizeof(ncclComm_t));
static_assert(sizeof(nccl::Result) == sizeof(ncclResult_t));
// The argument lists, up to the enum and opaque pointer types NcclApi.h
// spells as int and void *.
static_assert(std::is_same_v<decltype(&ncclGetUniqueId),
                             ncclResult_t (*)(ncclUniqueId *)>);
static_assert(
    std::is_same_v<decltype(&ncclCommInitRank),
                   ncclResult_t (*)(ncclComm_t *, int, ncclUniqueId, int)>);
static_assert(std::is_same_v<decltype(&ncclAllReduce),
                             ncclResult_t (*)(const void *, void *, size_t,
                                              ncclDataType_t, ncclRedOp_t,
                                              ncclComm_t, cudaStream_t)>);
static_assert(std::is_same_v<decltype(&ncclGetErrorString),
                             const char *(*)(ncclResult_t)>);
