#pragma once
// How many execution contexts run on the device at once beside work the calling thread starts
// (a server's workers, one context and one thread each). Device kernels that claim the whole
// device for a small batch — the RNN recurrence with one batch row per SM ("regs_b1") — are
// fastest for a lone context but serialize several: with n contexts a kernel plans for
// SMs / n. The CUDA executor captures a shape's graph on the thread that runs it, so the
// setting holds for the graphs that thread captures. 1 (the default) = this context alone.
namespace ts::engine {

void set_device_contexts_for_this_thread(int n);
int device_contexts_for_this_thread();

}  // namespace ts::engine
