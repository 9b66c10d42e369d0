//===- Passes.td - tfm conversion passes -------------------*- tablegen -*-===//
#ifndef TFM_CONVERSION_PASSES_TD
#define TFM_CONVERSION_PASSES_TD

include "mlir/Pass/PassBase.td"

def ConvertTfmToLinalg : Pass<"tfm-to-linalg", "ModuleOp"> {
  let summary = "Lowers every tfm op to linalg, tensor, arith and math on tensors";
  let description = [{
    Named linalg ops where they fit (matmul, batch_matmul), `linalg.generic`
    elsewhere. Softmax subtracts the row maximum; norms and softmax
    accumulate in f32 for f16/bf16 inputs. No tfm op survives but the
    collectives of a tensor-parallel model: `tfm.all_reduce` is left as an
    f32 sum without bias (a bf16/f16 one widened around it, a bias added
    after it), which bufferizes to `tfm.buffer_all_reduce`
    (`tfm-collectives-to-mpi` lowers that).
  }];
  let dependentDialects = [
    "mlir::arith::ArithDialect", "mlir::linalg::LinalgDialect",
    "mlir::math::MathDialect", "mlir::tensor::TensorDialect",
    "mlir::scf::SCFDialect"
  ];
}

def TfmCollectivesToMPI : Pass<"tfm-collectives-to-mpi", "ModuleOp"> {
  let summary = "Lowers bufferized tfm collectives to upstream MLIR's mpi dialect";
  let description = [{
    `tfm.buffer_all_reduce %src, %dst` becomes `mpi.allreduce(%src, %dst,
    MPI_SUM, mpi.comm_world)`; `tfm.buffer_all_gather %slice, %dst` (the
    mpi dialect has no all-gather) the same sum of a buffer of zeros with
    this rank's slice copied in at `mpi.comm_rank * n`. The module gets the DLTI entry
    `"MPI:Implementation" = "OpenMPI"` (the MPI tfm loads at run time,
    tfm/Runtime/Mpi.h) without which `convert-to-llvm` leaves mpi ops
    unconverted. Runs after the buffer deallocation pipeline: the mpi ops
    declare no memory effects, which deallocation cannot place frees around.
    A module without collectives is left as it is.
  }];
  let dependentDialects = ["mlir::mpi::MPIDialect", "mlir::DLTIDialect",
                           "mlir::memref::MemRefDialect",
                           "mlir::arith::ArithDialect",
                           "mlir::linalg::LinalgDialect"];
}

def TfmCollectivesToNCCL : Pass<"tfm-collectives-to-nccl", "ModuleOp"> {
  let summary = "Lowers bufferized tfm collectives to NCCL calls (GPU)";
  let description = [{
    On the GPU pipeline's bufferized host code, before its buffers move to
    the device (`tfm-gpu-device-buffers`): `tfm.buffer_all_reduce %src,
    %dst` becomes a call of the runtime's `tfm_nccl_all_reduce_f32` on the
    two buffers as `memref<?xf32>` (tfm/Runtime/Nccl.h: `ncclAllReduce`,
    sum, f32, on the communicator the runner set up, once the device has
    finished the work before it); `tfm.buffer_all_gather %slice, %dst` the
    same sum of a buffer of zeros with this rank's slice copied in at
    `rank * n` (NCCL's all-gather concatenates whole buffers, not slices of
    the last dimension); `tfm.rank` a call of `tfm_nccl_rank`. The buffer
    of zeros, its fill and its copy become device memory and kernels like
    any other. A module without collectives is left as it is.
  }];
  let dependentDialects = ["mlir::func::FuncDialect",
                           "mlir::memref::MemRefDialect",
                           "mlir::arith::ArithDialect",
                           "mlir::linalg::LinalgDialect",
                           "mlir::LLVM::LLVMDialect"];
}

#endif // TFM_CONVERSION_PASSES_TD
