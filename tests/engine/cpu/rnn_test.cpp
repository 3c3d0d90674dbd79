// GRU and LSTM against straightforward implementations of the ONNX formulas; the
// GRU-2x128 (F=32, T=60) batch-1 latency on this machine.
#include <algorithm>
#include <chrono>
#include <cmath>

#include "engine/backends/cpu/cpu_math.h"
#include "engine/backends/cpu/cpu_rnn.h"
#include "engine/backends/cpu/cpu_rnn_pack.h"
#include "graph_builder.h"
#include "sanitizer_build.h"

namespace ts::engine::testing {
namespace {

double sig(double x) { return 1.0 / (1.0 + std::exp(-x)); }

// ONNX GRU, forward, layout 0. Returns Y [T,1,B,H] then Y_h.
std::vector<float> ref_gru(const HostTensor& x, const std::vector<float>& w, const std::vector<float>& r,
                           const std::vector<float>& bias, const std::vector<float>& h0, int64_t hs, bool lbr,
                           std::vector<float>* yh) {
  int64_t t_len = x.dims[0], b = x.dims[1], in = x.dims[2];
  std::vector<double> h(h0.begin(), h0.end());
  std::vector<float> y;
  for (int64_t t = 0; t < t_len; ++t) {
    std::vector<double> nh(size_t(b * hs));
    for (int64_t bi = 0; bi < b; ++bi) {
      const float* xt = x.f() + (t * b + bi) * in;
      const double* hp = h.data() + bi * hs;
      std::vector<double> hv(hp, hp + hs), rh(static_cast<size_t>(hs));
      if (!lbr) {  // r ⊙ h_prev, needed whole by every unit's candidate
        for (int64_t k = 0; k < hs; ++k) {
          double sk = bias[size_t(hs + k)] + bias[size_t(4 * hs + k)];
          for (int64_t q = 0; q < in; ++q) sk += xt[q] * w[size_t((hs + k) * in + q)];
          for (int64_t q = 0; q < hs; ++q) sk += hp[q] * r[size_t((hs + k) * hs + q)];
          rh[size_t(k)] = sig(sk) * hp[k];
        }
      }
      for (int64_t j = 0; j < hs; ++j) {
        auto xw = [&](int gate) { double s = bias[size_t(gate * hs + j)]; for (int64_t k = 0; k < in; ++k) s += xt[k] * w[size_t((gate * hs + j) * in + k)]; return s; };
        auto hr = [&](int gate, const std::vector<double>& hvec) { double s = bias[size_t(3 * hs + gate * hs + j)]; for (int64_t k = 0; k < hs; ++k) s += hvec[size_t(k)] * r[size_t((gate * hs + j) * hs + k)]; return s; };
        double z = sig(xw(0) + hr(0, hv));
        double n;
        if (lbr) {
          double rr = sig(xw(1) + hr(1, hv));
          n = std::tanh(xw(2) + rr * hr(2, hv));
        } else {
          n = std::tanh(xw(2) + hr(2, rh));
        }
        nh[size_t(bi * hs + j)] = (1 - z) * n + z * hp[j];
      }
    }
    h = nh;
    for (double v : h) y.push_back(float(v));
  }
  yh->assign(h.begin(), h.end());
  return y;
}

// ONNX LSTM, forward, gates i,o,f,c, no peepholes.
std::vector<float> ref_lstm(const HostTensor& x, const std::vector<float>& w, const std::vector<float>& r,
                            const std::vector<float>& bias, int64_t hs, std::vector<float>* yh, std::vector<float>* yc) {
  int64_t t_len = x.dims[0], b = x.dims[1], in = x.dims[2];
  std::vector<double> h(size_t(b * hs), 0.0), c(size_t(b * hs), 0.0);
  std::vector<float> y;
  for (int64_t t = 0; t < t_len; ++t) {
    std::vector<double> nh = h, nc = c;
    for (int64_t bi = 0; bi < b; ++bi) {
      const float* xt = x.f() + (t * b + bi) * in;
      for (int64_t j = 0; j < hs; ++j) {
        auto g = [&](int gate) {
          double s = bias[size_t(gate * hs + j)] + bias[size_t(4 * hs + gate * hs + j)];
          for (int64_t k = 0; k < in; ++k) s += xt[k] * w[size_t((gate * hs + j) * in + k)];
          for (int64_t k = 0; k < hs; ++k) s += h[size_t(bi * hs + k)] * r[size_t((gate * hs + j) * hs + k)];
          return s;
        };
        double i = sig(g(0)), o = sig(g(1)), f = sig(g(2)), cc = std::tanh(g(3));
        double cn = f * c[size_t(bi * hs + j)] + i * cc;
        nc[size_t(bi * hs + j)] = cn;
        nh[size_t(bi * hs + j)] = o * std::tanh(cn);
      }
    }
    h = nh;
    c = nc;
    for (double v : h) y.push_back(float(v));
  }
  yh->assign(h.begin(), h.end());
  yc->assign(c.begin(), c.end());
  return y;
}

struct RnnCase { int64_t t, b, in, hs; };

// Every recurrence tactic of the cpu backend: gate-interleaved unit blocks (default), the
// 8-column GEMM panels, and oneDNN's RNN primitives.
const std::vector<std::string> kTactics = {"avx2_blocked", "avx2_packed", "onednn"};
// oneDNN's RNN primitives have no per-row sequence lengths: own tactics only.
const std::vector<std::string> kLensTactics = {"avx2_blocked", "avx2_packed"};

// A one-node GRU (lbr 0/1) with random weights and h0; outputs Y, Y_h. Fills the weights used.
struct GruModel {
  Graph g;
  std::vector<float> w, r, bias, h0;
};
// batch_major: ONNX layout=1 (X [batch, seq, input], Y [batch, seq, 1, hidden]).
GruModel gru_model(const RnnCase& c, int lbr, bool with_lens = false, bool batch_major = false) {
  GruModel m;
  GraphBuilder b;
  auto x = b.input("x", batch_major ? known({c.b, c.t, c.in}) : known({c.t, c.b, c.in}));
  float sc = 1.0f / std::sqrt(float(c.hs));
  m.w = random_vec(size_t(3 * c.hs * c.in), 81, sc);
  m.r = random_vec(size_t(3 * c.hs * c.hs), 82, sc);
  m.bias = random_vec(size_t(6 * c.hs), 83, sc);
  m.h0 = random_vec(size_t(c.b * c.hs), 84, 0.5f);
  auto w = b.constant("W", {1, 3 * c.hs, c.in}, m.w), r = b.constant("R", {1, 3 * c.hs, c.hs}, m.r);
  auto bias = b.constant("B", {1, 6 * c.hs}, m.bias);
  auto h0 = batch_major ? b.constant("h0", {c.b, 1, c.hs}, m.h0) : b.constant("h0", {1, c.b, c.hs}, m.h0);
  ValueId lens = kNoValue;
  if (with_lens) lens = b.input("lens", known({c.b}), DType::kI32);
  auto y = b.value("Y"), yh = b.value("Y_h");
  auto& n = b.node("GRU", {x, w, r, bias, lens, h0}, {y, yh});
  n.attrs["hidden_size"] = c.hs;
  n.attrs["linear_before_reset"] = int64_t(lbr);
  if (batch_major) n.attrs["layout"] = int64_t(1);
  b.output(y);
  b.output(yh);
  m.g = b.g;
  return m;
}

TEST(CpuRnn, GruMatchesOnnxFormulasBothLinearBeforeReset) {
  for (const RnnCase& c : {RnnCase{4, 3, 5, 8}, RnnCase{10, 1, 32, 128}, RnnCase{6, 2, 7, 13}, RnnCase{3, 5, 16, 64}}) {
    for (int lbr : {0, 1}) for (const std::string& tactic : kTactics) {
      GraphBuilder b;
      auto x = b.input("x", known({c.t, c.b, c.in}));
      float sc = 1.0f / std::sqrt(float(c.hs));
      auto wv = random_vec(size_t(3 * c.hs * c.in), 81, sc), rv = random_vec(size_t(3 * c.hs * c.hs), 82, sc);
      auto bv = random_vec(size_t(6 * c.hs), 83, sc), hv = random_vec(size_t(c.b * c.hs), 84, 0.5f);
      auto w = b.constant("W", {1, 3 * c.hs, c.in}, wv), r = b.constant("R", {1, 3 * c.hs, c.hs}, rv);
      auto bias = b.constant("B", {1, 6 * c.hs}, bv), h0 = b.constant("h0", {1, c.b, c.hs}, hv);
      auto y = b.value("Y"), yh = b.value("Y_h");
      auto& n = b.node("GRU", {x, w, r, bias, kNoValue, h0}, {y, yh});
      n.attrs["hidden_size"] = c.hs;
      n.attrs["linear_before_reset"] = int64_t(lbr);
      b.output(y);
      b.output(yh);
      std::vector<HostTensor> in = {random_tensor({c.t, c.b, c.in}, 85)};
      auto out = run_graph(b.g, in, tactic);
      ASSERT_TRUE(out) << out.status().to_string();
      std::vector<float> want_h;
      auto want = ref_gru(in[0], wv, rv, bv, hv, c.hs, lbr != 0, &want_h);
      ASSERT_EQ(out.value()[0].dims, (std::vector<int64_t>{c.t, 1, c.b, c.hs}));
      ASSERT_EQ(out.value()[1].dims, (std::vector<int64_t>{1, c.b, c.hs}));
      std::string what = tactic + " GRU lbr=" + std::to_string(lbr) + " H=" + std::to_string(c.hs);
      expect_close(out.value()[0].f(), want.data(), int64_t(want.size()), 1e-5f, 1e-6f, what);
      expect_close(out.value()[1].f(), want_h.data(), int64_t(want_h.size()), 1e-5f, 1e-6f, what + " Y_h");
    }
  }
}

TEST(CpuRnn, LstmMatchesOnnxFormulas) {
  for (const RnnCase& c : {RnnCase{4, 3, 5, 8}, RnnCase{12, 1, 32, 128}, RnnCase{5, 2, 9, 21}})
  for (const std::string& tactic : kTactics) {
    GraphBuilder b;
    auto x = b.input("x", known({c.t, c.b, c.in}));
    float sc = 1.0f / std::sqrt(float(c.hs));
    auto wv = random_vec(size_t(4 * c.hs * c.in), 91, sc), rv = random_vec(size_t(4 * c.hs * c.hs), 92, sc);
    auto bv = random_vec(size_t(8 * c.hs), 93, sc);
    auto w = b.constant("W", {1, 4 * c.hs, c.in}, wv), r = b.constant("R", {1, 4 * c.hs, c.hs}, rv);
    auto bias = b.constant("B", {1, 8 * c.hs}, bv);
    auto y = b.value("Y"), yh = b.value("Y_h"), yc = b.value("Y_c");
    b.node("LSTM", {x, w, r, bias}, {y, yh, yc}).attrs["hidden_size"] = c.hs;
    b.output(y);
    b.output(yh);
    b.output(yc);
    std::vector<HostTensor> in = {random_tensor({c.t, c.b, c.in}, 95)};
    auto out = run_graph(b.g, in, tactic);
    ASSERT_TRUE(out) << out.status().to_string();
    std::vector<float> want_h, want_c;
    auto want = ref_lstm(in[0], wv, rv, bv, c.hs, &want_h, &want_c);
    std::string what = tactic + " LSTM H=" + std::to_string(c.hs);
    expect_close(out.value()[0].f(), want.data(), int64_t(want.size()), 1e-5f, 1e-6f, what + " Y");
    expect_close(out.value()[1].f(), want_h.data(), int64_t(want_h.size()), 1e-5f, 1e-6f, what + " Y_h");
    expect_close(out.value()[2].f(), want_c.data(), int64_t(want_c.size()), 1e-5f, 1e-6f, what + " Y_c");
  }
}

// The blocked layout's unit blocks (GRU 32 units, LSTM 24) at sizes below, at and above one
// block (with a partial block at 13 and, for LSTM, 32/128/256), at batch 1 (GEMV, serpentine
// order: T=4 runs both directions) and batch 3 and 16 (4x3 register blocks plus row tails).
TEST(CpuRnn, BlockedLayoutMatchesOnnxAcrossHiddenAndBatch) {
  for (int64_t hs : {13, 32, 128, 256}) {
    for (int64_t bt : {1, 3, 16}) {
      const RnnCase c{4, bt, 7, hs};
      std::vector<HostTensor> in = {random_tensor({c.t, c.b, c.in}, 86)};
      for (int lbr : {0, 1}) {
        GruModel m = gru_model(c, lbr);
        std::vector<float> want_h;
        auto want = ref_gru(in[0], m.w, m.r, m.bias, m.h0, hs, lbr != 0, &want_h);
        for (const std::string& tactic : kTactics) {
          auto out = run_graph(m.g, in, tactic);
          ASSERT_TRUE(out) << out.status().to_string();
          std::string what = tactic + " GRU lbr=" + std::to_string(lbr) + " H=" + std::to_string(hs) +
                             " B=" + std::to_string(bt);
          expect_close(out.value()[0].f(), want.data(), int64_t(want.size()), 1e-5f, 1e-6f, what);
          expect_close(out.value()[1].f(), want_h.data(), int64_t(want_h.size()), 1e-5f, 1e-6f, what + " Y_h");
        }
      }
      GraphBuilder b;
      auto x = b.input("x", known({c.t, c.b, c.in}));
      float sc = 1.0f / std::sqrt(float(hs));
      auto wv = random_vec(size_t(4 * hs * c.in), 91, sc), rv = random_vec(size_t(4 * hs * hs), 92, sc);
      auto bv = random_vec(size_t(8 * hs), 93, sc);
      auto w = b.constant("W", {1, 4 * hs, c.in}, wv), r = b.constant("R", {1, 4 * hs, hs}, rv);
      auto bias = b.constant("B", {1, 8 * hs}, bv);
      auto y = b.value("Y"), yh = b.value("Y_h"), yc = b.value("Y_c");
      b.node("LSTM", {x, w, r, bias}, {y, yh, yc}).attrs["hidden_size"] = hs;
      b.output(y);
      b.output(yh);
      b.output(yc);
      std::vector<float> want_h, want_c;
      auto want = ref_lstm(in[0], wv, rv, bv, hs, &want_h, &want_c);
      for (const std::string& tactic : kTactics) {
        auto out = run_graph(b.g, in, tactic);
        ASSERT_TRUE(out) << out.status().to_string();
        std::string what = tactic + " LSTM H=" + std::to_string(hs) + " B=" + std::to_string(bt);
        expect_close(out.value()[0].f(), want.data(), int64_t(want.size()), 1e-5f, 1e-6f, what + " Y");
        expect_close(out.value()[1].f(), want_h.data(), int64_t(want_h.size()), 1e-5f, 1e-6f, what + " Y_h");
        expect_close(out.value()[2].f(), want_c.data(), int64_t(want_c.size()), 1e-5f, 1e-6f, what + " Y_c");
      }
    }
  }
}

// The packed block GEMM alone against Σ_k h[k]·R[row][k] from the unpacked ONNX weights, for
// every gate count the kernels use (1: lbr=0 candidate, 2: lbr=0 z/r, 3: GRU, 4: LSTM), both k
// orders, and row counts hitting the 1xV, 4x3 and tail kernels.
TEST(CpuRnn, BlockGemmMatchesUnpackedWeights) {
  using namespace ts::engine::cpu;
  if (!cpu_has_avx2_fma()) GTEST_SKIP() << "no AVX2/FMA";
  for (int64_t gates : {1, 2, 3, 4}) {
    for (int64_t hs : {13, 32, 128, 256}) {
      auto rv = random_vec(size_t(gates * hs * hs), 7, 1.0f);
      PackedRnnR p = pack_rnn_r(rv.data(), gates, hs);
      for (int64_t rows : {1, 3, 16}) {
        auto hv = random_vec(size_t(rows * hs), 8, 1.0f);
        std::vector<float> out(size_t(rows * p.max_cols), -1.0f);
        for (bool rev : {false, true}) {
          int64_t covered = 0;
          for (const RnnBlock& blk : p.blocks) {
            rnn_block_gemm(hv.data(), hs, rows, p, blk, rev, out.data(), p.max_cols);
            for (int64_t i = 0; i < rows; ++i) {
              for (int64_t g = 0; g < gates; ++g) {
                for (int64_t u = 0; u < blk.units; ++u) {
                  double want = 0;
                  for (int64_t k = 0; k < hs; ++k) {
                    want += double(hv[size_t(i * hs + k)]) * rv[size_t((g * hs + blk.u0 + u) * hs + k)];
                  }
                  float got = out[size_t(i * p.max_cols + g * blk.u_pad + u)];
                  ASSERT_NEAR(got, want, 1e-4 * (1.0 + std::fabs(want)))
                      << "gates=" << gates << " H=" << hs << " rows=" << rows << " rev=" << rev << " row " << i
                      << " gate " << g << " unit " << blk.u0 + u;
                }
              }
            }
            covered += blk.units;
          }
          EXPECT_EQ(covered, hs);
        }
      }
    }
  }
}

// The batch-1 GEMV of BF16 plans against Σ_k h[k]·R[row][k] with the weights rounded to bf16 —
// and, on a CPU with AVX512_BF16 (the dot-product path, PackedRnnR::data16dp), h rounded too —
// for every gate count, odd and even k (the dot products take k in pairs), widths 1–6 groups of
// 16 columns and both k orders; the epilogue runs exactly four times.
TEST(CpuRnn, Bf16GemvMatchesRoundedFormula) {
  using namespace ts::engine::cpu;
  if (!cpu_has_avx2_fma()) GTEST_SKIP() << "no AVX2/FMA";
  const bool dp = cpu_has_avx512_bf16();
  for (int64_t gates : {1, 2, 3, 4}) {
    for (int64_t hs : {13, 21, 32, 128, 200}) {
      auto rv = random_vec(size_t(gates * hs * hs), 17, 1.0f);
      PackedRnnR p = pack_rnn_r(rv.data(), gates, hs, -1, true);
      EXPECT_EQ(!p.data16dp.empty(), dp) << "the dot-product copy exists exactly where the CPU runs it";
      auto hv = random_vec(size_t(hs), 18, 1.0f);
      std::vector<float> out(size_t(p.max_cols), -1.0f);
      for (bool rev : {false, true}) {
        for (const RnnBlock& blk : p.blocks) {
          int epis = 0;
          rnn_block_gemv_pipelined(hv.data(), p, blk, rev, out.data(), [&](int) { ++epis; });
          EXPECT_EQ(epis, 4);
          for (int64_t g = 0; g < gates; ++g) {
            for (int64_t u = 0; u < blk.units; ++u) {
              double want = 0, scale = 0;
              for (int64_t k = 0; k < hs; ++k) {
                const float hk = dp ? ts::engine::cpu::bf16_to_f32(ts::engine::cpu::f32_to_bf16(hv[size_t(k)])) : hv[size_t(k)];
                const float rk = ts::engine::cpu::bf16_to_f32(ts::engine::cpu::f32_to_bf16(rv[size_t((g * hs + blk.u0 + u) * hs + k)]));
                want += double(hk) * rk;
                scale += std::fabs(double(hk) * rk);
              }
              const float got = out[size_t(g * blk.u_pad + u)];
              ASSERT_NEAR(got, want, 1e-5 * (1.0 + scale))
                  << "gates=" << gates << " H=" << hs << " rev=" << rev << " gate " << g << " unit " << blk.u0 + u
                  << (dp ? " (AVX512_BF16 dot products)" : " (AVX2)");
            }
          }
        }
      }
    }
  }
}

// sequence_lens: rows stop at their length (Y zero after it, Y_h = the last valid h; length 0
// keeps initial_h), equal to running each row alone on its truncated sequence.
TEST(CpuRnn, GruSequenceLensStopEachRowAtItsLength) {
  struct LensCase { RnnCase c; std::vector<int32_t> lens; };
  for (const LensCase& lc : {LensCase{{5, 3, 6, 40}, {5, 2, 0}}, LensCase{{5, 1, 6, 64}, {3}}})
  for (int lbr : {0, 1}) {
    const RnnCase& c = lc.c;
    const int32_t* lens = lc.lens.data();
    GruModel m = gru_model(c, lbr, true);
    // oneDNN has no per-row lengths, so the builder is not offered its tactic for this node.
    EXPECT_EQ(cpu_backend().tactics(m.g, m.g.nodes[0]), kLensTactics);
    HostTensor xl = random_tensor({c.t, c.b, c.in}, 87);
    HostTensor ln;
    ln.dtype = DType::kI32;
    ln.dims = {c.b};
    ln.bytes.resize(lc.lens.size() * sizeof(int32_t));
    std::memcpy(ln.bytes.data(), lens, ln.bytes.size());
    for (const std::string& tactic : kLensTactics) {
      std::vector<HostTensor> in = {xl, ln};
      auto out = run_graph(m.g, in, tactic);
      ASSERT_TRUE(out) << out.status().to_string();
      for (int64_t bi = 0; bi < c.b; ++bi) {
        HostTensor xr;
        xr.dims = {lens[bi], 1, c.in};
        xr.bytes.resize(size_t(lens[bi] * c.in) * 4);
        for (int64_t t = 0; t < lens[bi]; ++t) {
          std::memcpy(xr.f() + t * c.in, xl.f() + (t * c.b + bi) * c.in, size_t(c.in) * 4);
        }
        std::vector<float> h0(m.h0.begin() + bi * c.hs, m.h0.begin() + (bi + 1) * c.hs), want_h;
        auto want = ref_gru(xr, m.w, m.r, m.bias, h0, c.hs, lbr != 0, &want_h);
        std::string what = tactic + " lbr=" + std::to_string(lbr) + " row " + std::to_string(bi);
        for (int64_t t = 0; t < c.t; ++t) {
          const float* got = out.value()[0].f() + (t * c.b + bi) * c.hs;
          if (t < lens[bi]) {
            expect_close(got, want.data() + t * c.hs, c.hs, 1e-5f, 1e-6f, what + " t=" + std::to_string(t));
          } else {
            std::vector<float> zeros(size_t(c.hs), 0.0f);
            expect_close(got, zeros.data(), c.hs, 0.0f, 0.0f, what + " padding t=" + std::to_string(t));
          }
        }
        const std::vector<float>& last = lens[bi] > 0 ? want_h : h0;
        expect_close(out.value()[1].f() + bi * c.hs, last.data(), c.hs, 1e-5f, 1e-6f, what + " Y_h");
      }
    }
  }
}

// Runs a one-node GRU/LSTM graph with the kernel's recurrent weights stored as BF16.
Result<std::vector<HostTensor>> run_rnn_bf16(const Graph& g, std::vector<HostTensor>& inputs) {
  auto prog = std::make_shared<Program>();
  prog->graph = g;
  auto k = cpu::make_rnn_kernel(g, g.nodes.at(0), "avx2_blocked", true);
  if (!k) return k.status();
  EXPECT_TRUE(cpu::rnn_kernel_is_bf16(*k.value()));
  prog->kernels.push_back(std::move(k.value()));
  Executor ex(prog);
  std::vector<TensorView> views;
  for (auto& t : inputs) views.push_back(t.view());
  TS_RETURN_IF_ERROR(ex.run(views));
  std::vector<HostTensor> outs(g.outputs.size());
  std::vector<TensorView> ov(outs.size());
  std::vector<std::vector<uint8_t>> big(outs.size(), std::vector<uint8_t>(1 << 22));
  for (size_t i = 0; i < outs.size(); ++i) ov[i].data = big[i].data();
  for (size_t i = 0; i < outs.size(); ++i) ov[i].capacity_bytes = big[i].size();
  TS_RETURN_IF_ERROR(ex.copy_outputs(ov));
  for (size_t i = 0; i < outs.size(); ++i) {
    outs[i].dims = ov[i].dims;
    outs[i].bytes.assign(big[i].begin(), big[i].begin() + std::ptrdiff_t(ov[i].bytes()));
  }
  return outs;
}

std::vector<float> bf16_rounded(const std::vector<float>& v) {
  std::vector<float> o(v.size());
  for (size_t i = 0; i < v.size(); ++i) o[i] = cpu::bf16_to_f32(cpu::f32_to_bf16(v[i]));
  return o;
}

// BF16 recurrent weights: exactly the ONNX formulas with R rounded to BF16 (to FP32 accuracy),
// at batch 1 (pipelined GEMV) and batch > 1 (small GEMM), GRU both resets and LSTM; and within
// a stated bound of the FP32 result (what a bf16 plan costs in accuracy).
TEST(CpuRnn, Bf16WeightsMatchFormulasWithRoundedWeights) {
  for (const RnnCase& c : {RnnCase{10, 1, 32, 128}, RnnCase{6, 3, 7, 40}, RnnCase{5, 5, 9, 21}}) {
    float sc = 1.0f / std::sqrt(float(c.hs));
    for (int kind : {0, 1, 2}) {  // GRU lbr=0, GRU lbr=1, LSTM
      const bool lstm = kind == 2;
      const int64_t ng = lstm ? 4 : 3;
      GraphBuilder b;
      auto x = b.input("x", known({c.t, c.b, c.in}));
      auto wv = random_vec(size_t(ng * c.hs * c.in), 91, sc), rv = random_vec(size_t(ng * c.hs * c.hs), 92, sc);
      auto bv = random_vec(size_t(2 * ng * c.hs), 93, sc);
      auto w = b.constant("W", {1, ng * c.hs, c.in}, wv), r = b.constant("R", {1, ng * c.hs, c.hs}, rv);
      auto bias = b.constant("B", {1, 2 * ng * c.hs}, bv);
      auto y = b.value("Y"), yh = b.value("Y_h");
      auto& n = b.node(lstm ? "LSTM" : "GRU", {x, w, r, bias}, {y, yh});
      n.attrs["hidden_size"] = c.hs;
      if (!lstm) n.attrs["linear_before_reset"] = int64_t(kind);
      b.output(y);
      b.output(yh);
      std::vector<HostTensor> in = {random_tensor({c.t, c.b, c.in}, 94)};
      auto out = run_rnn_bf16(b.g, in);
      ASSERT_TRUE(out) << out.status().to_string();
      std::vector<float> want_h, want_h32, yc;
      std::vector<float> h0(size_t(c.b * c.hs), 0.0f);
      auto rq = bf16_rounded(rv);
      auto want = lstm ? ref_lstm(in[0], wv, rq, bv, c.hs, &want_h, &yc) : ref_gru(in[0], wv, rq, bv, h0, c.hs, kind == 1, &want_h);
      auto want32 = lstm ? ref_lstm(in[0], wv, rv, bv, c.hs, &want_h32, &yc) : ref_gru(in[0], wv, rv, bv, h0, c.hs, kind == 1, &want_h32);
      std::string what = std::string(lstm ? "LSTM" : kind ? "GRU lbr=1" : "GRU lbr=0") + " H=" + std::to_string(c.hs) +
                         " B=" + std::to_string(c.b);
      ASSERT_EQ(out.value()[0].numel(), int64_t(want.size())) << what;
      // On a CPU with AVX512_BF16 the batch-1 recurrence also rounds h to bf16 for its dot
      // products (Bf16GemvMatchesRoundedFormula holds that GEMV exactly): the rounded-R formula
      // then holds to h's rounding, ~2e-4 here.
      const bool h_rounded = c.b == 1 && ts::engine::cpu::cpu_has_avx512_bf16();
      expect_close(out.value()[0].f(), want.data(), int64_t(want.size()), h_rounded ? 2e-3f : 1e-5f,
                   h_rounded ? 2e-3f : 1e-6f, what + " vs bf16-rounded R");
      double max_err = 0;
      for (size_t i = 0; i < want32.size(); ++i) max_err = std::max(max_err, double(std::fabs(out.value()[0].f()[i] - want32[i])));
      std::printf("%s: bf16 R vs fp32 R, max |Y diff| %.2e\n", what.c_str(), max_err);
      EXPECT_GT(max_err, 0.0) << what << ": bf16 weights should not reproduce fp32 exactly";
      EXPECT_LT(max_err, 1e-2) << what;
    }
  }
}

// layout=1 (what torch's batch_first GRU would export) computes the same as layout 0 on the
// transposed data, with per-row sequence lengths, at batch 1 (pipelined path) and batch > 1.
TEST(CpuRnn, GruBatchMajorLayoutMatchesSequenceMajor) {
  for (const RnnCase& c : {RnnCase{7, 1, 6, 40}, RnnCase{6, 4, 5, 48}})
  for (int lbr : {0, 1}) {
    GruModel seq = gru_model(c, lbr, true), bat = gru_model(c, lbr, true, true);
    HostTensor xs = random_tensor({c.t, c.b, c.in}, 91), xb = xs;
    xb.dims = {c.b, c.t, c.in};
    for (int64_t t = 0; t < c.t; ++t) {
      for (int64_t bi = 0; bi < c.b; ++bi) {
        std::memcpy(xb.f() + (bi * c.t + t) * c.in, xs.f() + (t * c.b + bi) * c.in, size_t(c.in) * 4);
      }
    }
    HostTensor ln;
    ln.dtype = DType::kI32;
    ln.dims = {c.b};
    std::vector<int32_t> lens(size_t(c.b));
    for (int64_t bi = 0; bi < c.b; ++bi) lens[size_t(bi)] = int32_t(c.t - bi);
    ln.bytes.resize(lens.size() * sizeof(int32_t));
    std::memcpy(ln.bytes.data(), lens.data(), ln.bytes.size());
    for (const std::string& tactic : kLensTactics) {
      std::vector<HostTensor> in_s = {xs, ln}, in_b = {xb, ln};
      auto os = run_graph(seq.g, in_s, tactic), ob = run_graph(bat.g, in_b, tactic);
      ASSERT_TRUE(os) << os.status().to_string();
      ASSERT_TRUE(ob) << ob.status().to_string();
      const std::string what = tactic + " lbr=" + std::to_string(lbr) + " b=" + std::to_string(c.b);
      EXPECT_EQ(ob.value()[0].dims, (std::vector<int64_t>{c.b, c.t, 1, c.hs})) << what;
      EXPECT_EQ(ob.value()[1].dims, (std::vector<int64_t>{c.b, 1, c.hs})) << what;
      for (int64_t t = 0; t < c.t; ++t) {
        for (int64_t bi = 0; bi < c.b; ++bi) {
          expect_close(ob.value()[0].f() + (bi * c.t + t) * c.hs, os.value()[0].f() + (t * c.b + bi) * c.hs, c.hs,
                       1e-6f, 1e-7f, what + " Y t=" + std::to_string(t));
        }
      }
      expect_close(ob.value()[1].f(), os.value()[1].f(), c.b * c.hs, 1e-6f, 1e-7f, what + " Y_h");
    }
  }
}

TEST(CpuRnn, BidirectionalIsRefusedNamingNodeAndAttribute) {
  GraphBuilder b;
  auto x = b.input("x", known({4, 1, 5}));
  auto w = b.constant("W", {1, 24, 5}, random_vec(120, 1)), r = b.constant("R", {1, 24, 8}, random_vec(192, 2));
  auto y = b.value("Y");
  auto& n = b.node("GRU", {x, w, r}, {y});
  n.name = "/rnn/GRU";
  n.attrs["hidden_size"] = int64_t(8);
  n.attrs["direction"] = std::string("bidirectional");
  b.output(y);
  std::vector<HostTensor> in = {random_tensor({4, 1, 5}, 3)};
  auto out = run_graph(b.g, in);
  ASSERT_FALSE(out);
  EXPECT_EQ(out.status().message(), "node /rnn/GRU: op GRU direction=bidirectional is not supported by the cpu backend (forward only)");
}

// GRU-2x128 as the exporter lays it out: X [T,B,F] → GRU → Squeeze(axis 1) → GRU → Y_h.
Graph gru_2x128(int64_t f = 32, int64_t hs = 128) {
  GraphBuilder b;
  auto x = b.input("x", Shape{Dim::sym("seq"), Dim::sym("batch"), Dim::known(f)});
  float sc = 1.0f / std::sqrt(float(hs));
  auto w1 = b.constant("W1", {1, 3 * hs, f}, random_vec(size_t(3 * hs * f), 1, sc));
  auto r1 = b.constant("R1", {1, 3 * hs, hs}, random_vec(size_t(3 * hs * hs), 2, sc));
  auto b1 = b.constant("B1", {1, 6 * hs}, random_vec(size_t(6 * hs), 3, sc));
  auto w2 = b.constant("W2", {1, 3 * hs, hs}, random_vec(size_t(3 * hs * hs), 4, sc));
  auto r2 = b.constant("R2", {1, 3 * hs, hs}, random_vec(size_t(3 * hs * hs), 5, sc));
  auto b2 = b.constant("B2", {1, 6 * hs}, random_vec(size_t(6 * hs), 6, sc));
  auto y1 = b.value("y1"), s1 = b.value("s1"), y2 = b.value("y2"), h2 = b.value("h2");
  auto& g1 = b.node("GRU", {x, w1, r1, b1}, {y1});
  g1.attrs["hidden_size"] = hs;
  g1.attrs["linear_before_reset"] = int64_t(1);
  b.node("Squeeze", {y1, b.constant_i64("ax", {1})}, {s1});
  auto& g2 = b.node("GRU", {s1, w2, r2, b2}, {y2, h2});
  g2.attrs["hidden_size"] = hs;
  g2.attrs["linear_before_reset"] = int64_t(1);
  b.output(h2);
  return b.g;
}

TEST(CpuRnn, Gru2x128Batch1Latency) {
  const Backend& be = cpu_backend();
  Graph g = gru_2x128();
  for (Node& n : g.nodes) n.tactic = be.tactics(g, n).front();
  auto program = be.prepare(g);
  ASSERT_TRUE(program);
  Executor ex(program.value());
  HostTensor x = random_tensor({60, 1, 32}, 9);
  std::vector<TensorView> in = {x.view()};
  for (int i = 0; i < 50; ++i) ASSERT_TRUE(ex.run(in));
  std::vector<double> us;
  for (int i = 0; i < 1000; ++i) {
    auto t0 = std::chrono::steady_clock::now();
    Status s = ex.run(in);
    auto t1 = std::chrono::steady_clock::now();
    ASSERT_TRUE(s);
    us.push_back(std::chrono::duration<double, std::micro>(t1 - t0).count());
  }
  std::sort(us.begin(), us.end());
  std::printf("GRU-2x128 (F=32, T=60) batch 1, one thread: median %.1f us, p99 %.1f us, min %.1f us over 1000 runs\n",
              us[500], us[990], us[0]);
  // Loose bound (the machine is shared); the issue's target is 250 us. Under ASan+UBSan the
  // median was 11,841 us (sanitizer_build.h).
  EXPECT_LT(us[500], 2000.0 * ts::testing::kSanitizerSlowdown);
}

}  // namespace
}  // namespace ts::engine::testing
