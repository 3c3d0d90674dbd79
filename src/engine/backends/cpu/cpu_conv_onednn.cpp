// Conv through oneDNN's convolution_forward (direct algorithm, f32) for 1 to 3 spatial dims,
// groups, dilations, asymmetric and auto pads. X and Y stay in ONNX's plain layout (ncw,
// nchw, ncdhw): no reorders on the hot path. Constant weights are reordered once per context
// and shape into the layout the primitive prefers (format_tag::any); runtime weights are
// read in place in plain layout. Primitives are cached per context by (X dims, W dims).
#include <array>
#include <map>
#include <oneapi/dnnl/dnnl.hpp>
#include <unordered_map>

#include "engine/backends/cpu/cpu_conv.h"

namespace ts::engine::cpu {
namespace {

const dnnl::engine& conv_engine() {
  static const dnnl::engine eng(dnnl::engine::kind::cpu, 0);
  return eng;
}

// (X dims, W dims, rank and bias flag), zero-padded: a lookup key that needs no allocation.
using ConvKey = std::array<int64_t, 2 * (2 + kMaxConvSpatial) + 1>;

struct DnnlConvState final : KernelState {
  struct Entry {
    dnnl::convolution_forward prim;
    dnnl::memory src, wei, bias, dst;
    bool wei_packed = false;  // wei holds a reordered copy of constant weights
    std::unordered_map<int, dnnl::memory> args;
  };
  dnnl::stream stream{conv_engine()};
  std::map<ConvKey, Entry> by_shape;
};

class OnednnConvKernel final : public Kernel {
 public:
  OnednnConvKernel(ConvAttrs at, bool const_weights) : at_(std::move(at)), const_weights_(const_weights) {}

  std::unique_ptr<KernelState> make_state() const override {
    try {
      return std::make_unique<DnnlConvState>();
    } catch (const dnnl::error&) {
      return nullptr;  // run() reports it
    }
  }

  Status run(const KernelArgs& a) const override {
    const RtTensor* x = a.input(0);
    const RtTensor* w = a.input(1);
    const RtTensor* b = a.input(2);
    ConvGeom geo;
    TS_RETURN_IF_ERROR(conv_geometry(at_, x, w, b, &geo));
    RtTensor& o = *a.out[0];
    Dims od;
    od.push(geo.n);
    od.push(geo.m);
    for (int i = 0; i < geo.spatial; ++i) od.push(geo.out[size_t(i)]);
    o.ensure(DType::kF32, od.span());
    if (o.numel() == 0) return Status::ok();
    auto* st = static_cast<DnnlConvState*>(a.state);
    if (!st) return Status(StatusCode::kInternal, "oneDNN convolution: no kernel state (stream creation failed)");
    ConvKey key{};
    const size_t r = x->dims.size();  // 3..5, checked by conv_geometry
    for (size_t i = 0; i < r; ++i) {
      key[i] = x->dims[i];
      key[r + i] = w->dims[i];
    }
    key.back() = int64_t(r) * 2 + (b ? 1 : 0);
    try {
      auto it = st->by_shape.find(key);
      if (it == st->by_shape.end()) {
        auto e = make_entry(geo, *w, b != nullptr, st->stream);
        if (!e) return e.status();
        it = st->by_shape.emplace(std::move(key), std::move(e.value())).first;
      }
      auto& e = it->second;
      e.src.set_data_handle(x->data);
      e.dst.set_data_handle(o.data);
      if (!e.wei_packed) e.wei.set_data_handle(w->data);
      if (b) e.bias.set_data_handle(b->data);
      e.prim.execute(st->stream, e.args);
      st->stream.wait();
    } catch (const dnnl::error& err) {
      return Status(StatusCode::kInternal, std::string("oneDNN convolution_forward: ") + err.what() +
                                               " (dnnl_status " + std::to_string(int(err.status)) + ")");
    }
    return Status::ok();
  }

 private:
  // Throws dnnl::error (caught by run()).
  Result<DnnlConvState::Entry> make_entry(const ConvGeom& geo, const RtTensor& w, bool has_bias,
                                          dnnl::stream& stream) const {
    using tag = dnnl::memory::format_tag;
    using dt = dnnl::memory::data_type;
    const auto& eng = conv_engine();
    const int sp = geo.spatial;
    dnnl::memory::dims src_d = {geo.n, geo.c}, dst_d = {geo.n, geo.m}, wei_d;
    if (geo.group > 1) wei_d = {geo.group, geo.m / geo.group, geo.c / geo.group};
    else wei_d = {geo.m, geo.c};
    dnnl::memory::dims strides, dilates, pad_l, pad_r;
    for (int i = 0; i < sp; ++i) {
      const size_t u = size_t(i);
      src_d.push_back(geo.in[u]);
      dst_d.push_back(geo.out[u]);
      wei_d.push_back(geo.k[u]);
      strides.push_back(geo.stride[u]);
      dilates.push_back(geo.dilation[u] - 1);  // oneDNN counts the gaps: 0 = dense
      pad_l.push_back(geo.pad_begin[u]);
      pad_r.push_back(geo.pad_end[u]);
    }
    const tag x_tag = sp == 1 ? tag::ncw : sp == 2 ? tag::nchw : tag::ncdhw;
    const tag w_tag = geo.group > 1 ? (sp == 1 ? tag::goiw : sp == 2 ? tag::goihw : tag::goidhw)
                                    : (sp == 1 ? tag::oiw : sp == 2 ? tag::oihw : tag::oidhw);
    dnnl::memory::desc src_md(src_d, dt::f32, x_tag), dst_md(dst_d, dt::f32, x_tag),
        user_w_md(wei_d, dt::f32, w_tag), bias_md({geo.m}, dt::f32, tag::x);
    dnnl::memory::desc w_md = const_weights_ ? dnnl::memory::desc(wei_d, dt::f32, tag::any) : user_w_md;
    const auto prop = dnnl::prop_kind::forward_inference;
    const auto alg = dnnl::algorithm::convolution_direct;
    auto desc = has_bias ? dnnl::convolution_forward::desc(prop, alg, src_md, w_md, bias_md, dst_md, strides,
                                                           dilates, pad_l, pad_r)
                         : dnnl::convolution_forward::desc(prop, alg, src_md, w_md, dst_md, strides, dilates,
                                                           pad_l, pad_r);
    dnnl::convolution_forward::primitive_desc pd(desc, eng);
    DnnlConvState::Entry e;
    e.prim = dnnl::convolution_forward(pd);
    e.src = dnnl::memory(src_md, eng, DNNL_MEMORY_NONE);
    e.dst = dnnl::memory(dst_md, eng, DNNL_MEMORY_NONE);
    if (const_weights_ && pd.weights_desc() != user_w_md) {
      dnnl::memory user(user_w_md, eng, w.data);
      e.wei = dnnl::memory(pd.weights_desc(), eng);
      dnnl::reorder(user, e.wei).execute(stream, user, e.wei);
      stream.wait();
      e.wei_packed = true;
    } else {
      e.wei = dnnl::memory(pd.weights_desc(), eng, DNNL_MEMORY_NONE);
    }
    e.args = {{DNNL_ARG_SRC, e.src}, {DNNL_ARG_WEIGHTS, e.wei}, {DNNL_ARG_DST, e.dst}};
    if (has_bias) {
      e.bias = dnnl::memory(bias_md, eng, DNNL_MEMORY_NONE);
      e.args.emplace(DNNL_ARG_BIAS, e.bias);
    }
    return e;
  }

  ConvAttrs at_;
  bool const_weights_;
};

}  // namespace

Result<KernelPtr> make_conv_onednn(ConvAttrs at, bool const_weights) {
  return KernelPtr(new OnednnConvKernel(std::move(at), const_weights));
}

}  // namespace ts::engine::cpu
