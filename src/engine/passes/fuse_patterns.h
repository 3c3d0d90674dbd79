#pragma once
// The fusion patterns run by fuse() (fuse.cpp), one file each. Each returns the number of
// fusions made and writes one PassLog line per fusion; a fused node takes the head node's
// place and name and lists every node it replaced in Node::fused_from.
#include "engine/passes/passes.h"

namespace ts::engine::passes {

// MatMul/Gemm (+ constant bias Add) (+ Relu/Sigmoid/Tanh/Gelu/Erf-form GELU) → FusedGemm.
int fuse_gemm(Graph& g, PassLog& log);
// ReduceMean/Sub/Pow/ReduceMean/Add/Sqrt/Div(/Mul/Add) → LayerNormalization.
int fuse_layernorm(Graph& g, PassLog& log);
// MatMul(Q,Kᵀ) (/scale) → Softmax → MatMul(V) → FusedAttention.
int fuse_attention(Graph& g, PassLog& log);
// GRU/LSTM: drop an all-zero initial state computed by ConstantOfShape glue.
int simplify_rnn(Graph& g, PassLog& log);

// Removes the nodes whose op was cleared to "" (the absorbed ones).
void erase_absorbed(Graph& g);
// "FusedGemm /fc/Gemm ← [/fc/Gemm, /act/Relu]"
std::string fusion_line(const Node& fused);

}  // namespace ts::engine::passes
