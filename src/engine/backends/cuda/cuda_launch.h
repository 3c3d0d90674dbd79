#pragma once
// Programmatic dependent launch (PDL, sm_90) and the executor's view of the copy kernel in a
// captured graph. Implemented in cuda_elementwise.cu (the copy kernels).
//
// PDL: a kernel launched with cudaLaunchAttributeProgrammaticStreamSerialization may start while
// the kernel before it in the stream still runs, once every CTA of that kernel has executed
// griddepcontrol.launch_dependents (or exited); the dependent must execute griddepcontrol.wait,
// which returns when that kernel has completed and its writes are visible, before it reads
// anything that kernel (or any earlier work) wrote and before its first global write. Users: the
// copy kernel triggers at its start and waits before its first read; the GRU wavefront
// (cuda_rnn_wave.cu) is a dependent that loads its weights before the wait and triggers after
// its time loop; the executor's zero-copy copy-out is a dependent of the last kernel.
#include "engine/backends/cuda/cuda_common.h"

namespace ts::engine::cuda {

// Whether a kernel queued now on `stream` may be a programmatic dependent launch: on sm_90 and
// later unless the environment sets TS_CUDA_PDL=0 (read once); under stream capture only when the
// work before it is exactly one kernel node (a programmatic graph edge joins two kernel nodes).
// Eagerly the overlap is opportunistic: after a copy, or a kernel that does not trigger, the
// launch waits as usual.
bool programmatic_launch_ok(cudaStream_t stream);

// launch_strided_copy as a programmatic dependent launch where programmatic_launch_ok(stream):
// it may start under the tail of the kernel before it and waits for it before its first read.
Status launch_strided_copy_dependent(const void* in, void* out, const StridedDims& d, int elem_bytes,
                                     cudaStream_t stream);

// The element size (1, 2, 4, 8 or 16) when `func` (a captured kernel node's function) is the copy
// kernel launch_strided_copy queues for fewer than 2^31 elements, whose arguments are
// (const T* in, T* out, StridedDims d, int32_t n); else 0.
int strided_copy_kernel_elem_bytes(const void* func);

}  // namespace ts::engine::cuda
