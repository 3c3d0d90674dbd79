// GRU and LSTM against straightforward implementations of the ONNX formulas; the
// GRU-2x128 (F=32, T=60) batch-1 latency on this machine.
#include <algorithm>
#include <chrono>
#include <cmath>

#include "graph_builder.h"

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
      for (int64_t j = 0; j < hs; ++j) {
        auto xw = [&](int gate) { double s = bias[size_t(gate * hs + j)]; for (int64_t k = 0; k < in; ++k) s += xt[k] * w[size_t((gate * hs + j) * in + k)]; return s; };
        auto hr = [&](int gate, const std::vector<double>& hv) { double s = bias[size_t(3 * hs + gate * hs + j)]; for (int64_t k = 0; k < hs; ++k) s += hv[size_t(k)] * r[size_t((gate * hs + j) * hs + k)]; return s; };
        std::vector<double> hv(hp, hp + hs);
        double z = sig(xw(0) + hr(0, hv));
        double n;
        if (lbr) {
          double rr = sig(xw(1) + hr(1, hv));
          n = std::tanh(xw(2) + rr * hr(2, hv));
        } else {
          std::vector<double> rh(static_cast<size_t>(hs));
          for (int64_t k = 0; k < hs; ++k) {
            double sk = bias[size_t(hs + k)] + bias[size_t(4 * hs + k)];
            for (int64_t q = 0; q < in; ++q) sk += xt[q] * w[size_t((hs + k) * in + q)];
            for (int64_t q = 0; q < hs; ++q) sk += hp[q] * r[size_t((hs + k) * hs + q)];
            rh[size_t(k)] = sig(sk) * hp[k];
          }
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

TEST(CpuRnn, GruMatchesOnnxFormulasBothLinearBeforeReset) {
  for (const RnnCase& c : {RnnCase{4, 3, 5, 8}, RnnCase{10, 1, 32, 128}, RnnCase{6, 2, 7, 13}, RnnCase{3, 5, 16, 64}}) {
    for (int lbr : {0, 1}) {
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
      auto out = run_graph(b.g, in);
      ASSERT_TRUE(out) << out.status().to_string();
      std::vector<float> want_h;
      auto want = ref_gru(in[0], wv, rv, bv, hv, c.hs, lbr != 0, &want_h);
      ASSERT_EQ(out.value()[0].dims, (std::vector<int64_t>{c.t, 1, c.b, c.hs}));
      ASSERT_EQ(out.value()[1].dims, (std::vector<int64_t>{1, c.b, c.hs}));
      std::string what = "GRU lbr=" + std::to_string(lbr) + " H=" + std::to_string(c.hs);
      expect_close(out.value()[0].f(), want.data(), int64_t(want.size()), 1e-5f, 1e-6f, what);
      expect_close(out.value()[1].f(), want_h.data(), int64_t(want_h.size()), 1e-5f, 1e-6f, what + " Y_h");
    }
  }
}

TEST(CpuRnn, LstmMatchesOnnxFormulas) {
  for (const RnnCase& c : {RnnCase{4, 3, 5, 8}, RnnCase{12, 1, 32, 128}, RnnCase{5, 2, 9, 21}}) {
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
    auto out = run_graph(b.g, in);
    ASSERT_TRUE(out) << out.status().to_string();
    std::vector<float> want_h, want_c;
    auto want = ref_lstm(in[0], wv, rv, bv, c.hs, &want_h, &want_c);
    expect_close(out.value()[0].f(), want.data(), int64_t(want.size()), 1e-5f, 1e-6f, "LSTM Y");
    expect_close(out.value()[1].f(), want_h.data(), int64_t(want_h.size()), 1e-5f, 1e-6f, "LSTM Y_h");
    expect_close(out.value()[2].f(), want_c.data(), int64_t(want_c.size()), 1e-5f, 1e-6f, "LSTM Y_c");
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
  std::printf("GRU-2x128 (F=32, T=60) batch 1, one thread: median %.1f us, p99 %.1f us over 1000 runs\n",
              us[500], us[990]);
  // Loose bound (the machine is shared); the issue's target is 250 us.
  EXPECT_LT(us[500], 2000.0);
}

}  // namespace
}  // namespace ts::engine::testing
