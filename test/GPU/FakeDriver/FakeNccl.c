/*===- FakeNccl.c - an NCCL stand-in for tests ----------------------------===*
 *
 * libnccl.so.2 for machines without GPUs, beside FakeCudaDriver.c's
 * libcuda.so.1 (whose "device" memory is host memory): the entry points
 * libtfm_cuda_runtime.so resolves. A sum over the ranks is a copy of this
 * rank's buffer (no data moves between processes, and the fake driver runs
 * no kernels, so values are not checked here); what the tests check is the
 * plumbing: rank 0's communicator id reaching every rank (through MPI), each
 * rank joining as itself, the sums called with f32 and ncclSum. At exit each
 * rank prints one line: "fake-nccl: rank <r> of <n>, id <id>, <calls>
 * all-reduces of <floats> floats".
 *
 *===----------------------------------------------------------------------===*/
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef int ncclResult_t;
typedef struct {
  char internal[128];
} ncclUniqueId;

struct Comm {
  int rank, ranks;
  char id[128];
};

static struct Comm *joined;
static long calls, floats;

static void report(void) {
  if (joined)
    fprintf(stderr,
            "fake-nccl: rank %d of %d, id %s, %ld all-reduces of %ld "
            "floats\n",
            joined->rank, joined->ranks, joined->id, calls, floats);
}

const char *ncclGetErrorString(ncclResult_t result) {
  return result == 4 ? "invalid argument" : "unhandled error";
}

ncclResult_t ncclGetUniqueId(ncclUniqueId *id) {
  memset(id->internal, 0, sizeof id->internal);
  snprintf(id->internal, sizeof id->internal, "made-by-pid-%ld",
           (long)getpid());
  return 0;
}

ncclResult_t ncclCommInitRank(struct Comm **comm, int ranks, ncclUniqueId id,
                              int rank) {
  if (ranks < 1 || rank < 0 || rank >= ranks || !id.internal[0])
    return 4;
  *comm = calloc(1, sizeof **comm);
  (*comm)->rank = rank;
  (*comm)->ranks = ranks;
  memcpy((*comm)->id, id.internal, sizeof id.internal);
  (*comm)->id[sizeof id.internal - 1] = 0;
  joined = *comm;
  atexit(report);
  return 0;
}

/* ncclFloat32 is 7, ncclSum 0. */
ncclResult_t ncclAllReduce(const void *send, void *recv, size_t count, int type,
                           int op, struct Comm *comm, void *stream) {
  (void)stream;
  if (type != 7 || op != 0 || comm != joined)
    return 4;
  if (send != recv)
    memmove(recv, send, count * sizeof(float));
  ++calls;
  floats += (long)count;
  return 0;
}
