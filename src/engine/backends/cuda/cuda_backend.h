#pragma once
// The CUDA backend (engine/backend.h): cuBLASLt GEMMs with bias epilogues, persistent GRU/LSTM
// recurrence kernels with the recurrent weights in shared memory, elementwise/shape kernels;
// per-context device tensors, one stream, pinned staging and CUDA graphs per input shape.
// This header includes no CUDA header: the rest of the engine sees only the Backend.
#include "engine/backend.h"

namespace ts::engine {

// The process-wide CUDA backend (immutable, thread-safe). On a machine without a usable GPU,
// available() says why ("no CUDA device: ...") and build/load refuse with that message.
const Backend& cuda_backend();

}  // namespace ts::engine
