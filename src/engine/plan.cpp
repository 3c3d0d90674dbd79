#include "engine/plan.h"

#include <array>
#include <cmath>
#include <cstring>
#include <fstream>
#include <iterator>

namespace ts::engine {

uint32_t crc32(std::span<const uint8_t> bytes) {
  static const std::array<uint32_t, 256> table = [] {
    std::array<uint32_t, 256> t{};
    for (uint32_t i = 0; i < 256; ++i) {
      uint32_t c = i;
      for (int k = 0; k < 8; ++k) c = (c & 1) ? 0xEDB88320u ^ (c >> 1) : c >> 1;
      t[i] = c;
    }
    return t;
  }();
  uint32_t c = 0xFFFFFFFFu;
  for (uint8_t b : bytes) c = table[(c ^ b) & 0xFF] ^ (c >> 8);
  return c ^ 0xFFFFFFFFu;
}

namespace {

class Writer {
 public:
  void raw(const void* p, size_t n) {
    auto* b = static_cast<const uint8_t*>(p);
    out.insert(out.end(), b, b + n);
  }
  void u8(uint8_t v) { out.push_back(v); }
  void u32(uint32_t v) { for (int i = 0; i < 4; ++i) out.push_back(uint8_t(v >> (8 * i))); }
  void u64(uint64_t v) { for (int i = 0; i < 8; ++i) out.push_back(uint8_t(v >> (8 * i))); }
  void i64(int64_t v) { u64(uint64_t(v)); }
  void f32(float v) { uint32_t u; std::memcpy(&u, &v, 4); u32(u); }
  void f64(double v) { uint64_t u; std::memcpy(&u, &v, 8); u64(u); }
  void str(const std::string& s) { u32(uint32_t(s.size())); raw(s.data(), s.size()); }
  void i64s(const std::vector<int64_t>& v) { u32(uint32_t(v.size())); for (auto x : v) i64(x); }
  std::vector<uint8_t> out;
};

// Bounds-checked reader: the first failure sticks and names what was being read.
class Reader {
 public:
  explicit Reader(std::span<const uint8_t> b) : b_(b) {}
  bool ok() const { return err_.empty(); }
  const std::string& error() const { return err_; }
  size_t remaining() const { return b_.size() - pos_; }
  void fail(const std::string& what) { if (err_.empty()) err_ = what; }

  bool take(void* dst, size_t n, const char* what) {
    if (!ok()) return false;
    if (n > remaining()) { fail(std::string("truncated plan (reading ") + what + ")"); return false; }
    if (n) std::memcpy(dst, b_.data() + pos_, n);
    pos_ += n;
    return true;
  }
  uint8_t u8(const char* what) { uint8_t v = 0; take(&v, 1, what); return v; }
  uint32_t u32(const char* what) {
    uint8_t b[4] = {};
    take(b, 4, what);
    return uint32_t(b[0]) | uint32_t(b[1]) << 8 | uint32_t(b[2]) << 16 | uint32_t(b[3]) << 24;
  }
  uint64_t u64(const char* what) {
    uint64_t lo = u32(what), hi = u32(what);
    return lo | hi << 32;
  }
  int64_t i64(const char* what) { return int64_t(u64(what)); }
  float f32(const char* what) { uint32_t u = u32(what); float f; std::memcpy(&f, &u, 4); return f; }
  double f64(const char* what) { uint64_t u = u64(what); double f; std::memcpy(&f, &u, 8); return f; }
  // A count of elements each at least `min_bytes` long: never more than the bytes left.
  size_t count(size_t min_bytes, const char* what) {
    uint32_t n = u32(what);
    if (!ok()) return 0;
    if (min_bytes && size_t(n) > remaining() / min_bytes) {
      fail(std::string("corrupt plan: ") + what + " count " + std::to_string(n) + " exceeds the remaining bytes");
      return 0;
    }
    return n;
  }
  std::string str(const char* what) {
    size_t n = count(1, what);
    std::string s(n, '\0');
    take(s.data(), n, what);
    return s;
  }
  std::vector<int64_t> i64s(const char* what) {
    size_t n = count(8, what);
    std::vector<int64_t> v(n);
    for (auto& x : v) x = i64(what);
    return v;
  }

 private:
  std::span<const uint8_t> b_;
  size_t pos_ = 0;
  std::string err_;
};

enum AttrTag : uint8_t { kTagInt = 0, kTagFloat, kTagString, kTagInts, kTagFloats };

void write_graph(Writer& w, const Graph& g) {
  w.i64(g.opset);
  w.str(g.producer);
  w.u32(uint32_t(g.values.size()));
  for (const Value& v : g.values) {
    w.str(v.name);
    w.u8(uint8_t(v.dtype));
    w.u8(v.rank_known);
    w.u8(v.is_constant);
    w.u32(uint32_t(v.shape.size()));
    for (const Dim& d : v.shape) { w.i64(d.value); w.str(d.symbol); }
    w.u64(v.data.size());
    w.raw(v.data.data(), v.data.size());
  }
  w.u32(uint32_t(g.nodes.size()));
  for (const Node& n : g.nodes) {
    w.str(n.name);
    w.str(n.op);
    w.u32(uint32_t(n.inputs.size()));
    for (auto id : n.inputs) w.u32(uint32_t(id));
    w.u32(uint32_t(n.outputs.size()));
    for (auto id : n.outputs) w.u32(uint32_t(id));
    w.u32(uint32_t(n.attrs.size()));
    for (const auto& [k, a] : n.attrs) {
      w.str(k);
      if (auto* i = std::get_if<int64_t>(&a)) { w.u8(kTagInt); w.i64(*i); }
      else if (auto* f = std::get_if<float>(&a)) { w.u8(kTagFloat); w.f32(*f); }
      else if (auto* s = std::get_if<std::string>(&a)) { w.u8(kTagString); w.str(*s); }
      else if (auto* is = std::get_if<std::vector<int64_t>>(&a)) { w.u8(kTagInts); w.i64s(*is); }
      else if (auto* fs = std::get_if<std::vector<float>>(&a)) {
        w.u8(kTagFloats);
        w.u32(uint32_t(fs->size()));
        for (float x : *fs) w.f32(x);
      }
    }
    w.u32(uint32_t(n.fused_from.size()));
    for (const auto& s : n.fused_from) w.str(s);
    w.str(n.tactic);
  }
  w.u32(uint32_t(g.inputs.size()));
  for (auto id : g.inputs) w.u32(uint32_t(id));
  w.u32(uint32_t(g.outputs.size()));
  for (auto id : g.outputs) w.u32(uint32_t(id));
}

bool read_ids(Reader& r, std::vector<ValueId>& out, size_t nvalues, bool allow_none, const char* what) {
  size_t n = r.count(4, what);
  out.resize(n);
  for (auto& id : out) {
    id = ValueId(int32_t(r.u32(what)));
    if (!r.ok()) return false;
    if (id == kNoValue && allow_none) continue;
    if (id < 0 || size_t(id) >= nvalues) {
      r.fail(std::string("corrupt plan: ") + what + " refers to value " + std::to_string(id) + " of " + std::to_string(nvalues));
      return false;
    }
  }
  return r.ok();
}

void read_graph(Reader& r, Graph& g) {
  g.opset = r.i64("opset");
  g.producer = r.str("producer");
  size_t nv = r.count(4 + 3 + 4 + 8, "values");
  g.values.resize(nv);
  for (Value& v : g.values) {
    if (!r.ok()) return;
    v.name = r.str("value name");
    uint8_t dt = r.u8("dtype");
    if (dt > uint8_t(DType::kF64)) { r.fail("corrupt plan: value " + v.name + " has dtype " + std::to_string(dt)); return; }
    v.dtype = DType(dt);
    v.rank_known = r.u8("rank_known") != 0;
    v.is_constant = r.u8("is_constant") != 0;
    size_t rank = r.count(12, "shape");
    v.shape.resize(rank);
    for (Dim& d : v.shape) { d.value = r.i64("dim"); d.symbol = r.str("dim symbol"); }
    uint64_t nbytes = r.u64("value data size");
    if (!r.ok()) return;
    if (nbytes > r.remaining()) { r.fail("truncated plan (value " + v.name + " data)"); return; }
    v.data.resize(size_t(nbytes));
    r.take(v.data.data(), size_t(nbytes), "value data");
    if (v.is_constant) {
      int64_t numel = 1;
      for (const Dim& d : v.shape) {
        if (d.value < 0 || (d.value > 0 && numel > INT64_MAX / d.value)) { numel = -1; break; }
        numel *= d.value;
      }
      if (numel < 0 || uint64_t(numel) * dtype_size(v.dtype) != nbytes) {
        r.fail("corrupt plan: constant " + v.name + " has " + std::to_string(nbytes) + " bytes for shape " + shape_to_string(v.shape));
        return;
      }
    }
  }
  size_t nn = r.count(4 * 7, "nodes");
  g.nodes.resize(nn);
  for (Node& n : g.nodes) {
    if (!r.ok()) return;
    n.name = r.str("node name");
    n.op = r.str("node op");
    if (!read_ids(r, n.inputs, nv, true, "node inputs")) return;
    if (!read_ids(r, n.outputs, nv, true, "node outputs")) return;
    size_t na = r.count(5, "attributes");
    for (size_t i = 0; i < na && r.ok(); ++i) {
      std::string k = r.str("attribute name");
      uint8_t tag = r.u8("attribute type");
      switch (tag) {
        case kTagInt: n.attrs[k] = r.i64("attribute"); break;
        case kTagFloat: n.attrs[k] = r.f32("attribute"); break;
        case kTagString: n.attrs[k] = r.str("attribute"); break;
        case kTagInts: n.attrs[k] = r.i64s("attribute"); break;
        case kTagFloats: {
          size_t c = r.count(4, "attribute");
          std::vector<float> f(c);
          for (auto& x : f) x = r.f32("attribute");
          n.attrs[k] = std::move(f);
          break;
        }
        default: r.fail("corrupt plan: attribute " + k + " has type tag " + std::to_string(tag)); return;
      }
    }
    size_t nf = r.count(4, "fused_from");
    n.fused_from.resize(nf);
    for (auto& s : n.fused_from) s = r.str("fused_from");
    n.tactic = r.str("tactic");
  }
  read_ids(r, g.inputs, nv, false, "graph inputs");
  read_ids(r, g.outputs, nv, false, "graph outputs");
}

void write_manifest(Writer& w, const std::optional<ModelManifest>& m) {
  if (!m) {
    w.u32(0);
    return;
  }
  w.u32(kManifestVersion);
  w.str(m->input_name);
  w.i64(m->window_rows);
  w.i64(m->features);
  w.u32(uint32_t(m->feature_names.size()));
  for (const auto& n : m->feature_names) w.str(n);
  w.str(m->output_name);
  w.i64(m->output_columns);
  w.i64(m->probability_column);
  w.f64(m->threshold);
  w.str(m->model_name);
  w.str(m->model_version);
}

void read_manifest(Reader& r, std::optional<ModelManifest>& out) {
  const uint32_t v = r.u32("manifest version");
  if (!r.ok() || v == 0) return;
  if (v != kManifestVersion) {
    r.fail("plan manifest version " + std::to_string(v) + " is not supported (this build reads version " +
           std::to_string(kManifestVersion) + ")");
    return;
  }
  ModelManifest m;
  m.input_name = r.str("manifest input name");
  m.window_rows = r.i64("manifest window rows");
  m.features = r.i64("manifest features");
  const size_t n = r.count(4, "manifest feature names");
  for (size_t i = 0; i < n && r.ok(); ++i) m.feature_names.push_back(r.str("manifest feature name"));
  m.output_name = r.str("manifest output name");
  m.output_columns = r.i64("manifest output columns");
  m.probability_column = r.i64("manifest probability column");
  m.threshold = r.f64("manifest threshold");
  m.model_name = r.str("manifest model name");
  m.model_version = r.str("manifest model version");
  if (!r.ok()) return;
  if (std::string why = manifest_problem(m); !why.empty()) {
    r.fail("corrupt plan: manifest: " + why);
    return;
  }
  out = std::move(m);
}

}  // namespace

std::vector<uint8_t> serialize_plan(const Plan& p) {
  Writer w;
  w.raw(kPlanMagic, 8);
  w.u32(kPlanFormatVersion);
  w.u32(p.tf32 ? kPlanFlagTf32 : 0u);
  w.str(p.backend);
  w.str(p.target_arch);
  w.u8(uint8_t(p.precision));
  w.i64(p.workspace_bytes);
  w.i64(p.device_memory_bytes);
  w.u32(uint32_t(p.profiles.size()));
  for (const auto& prof : p.profiles) {
    w.u32(uint32_t(prof.inputs.size()));
    for (const auto& [name, range] : prof.inputs) {
      w.str(name);
      w.i64s(range.min);
      w.i64s(range.opt);
      w.i64s(range.max);
    }
  }
  write_graph(w, p.graph);
  w.u32(uint32_t(p.pass_log.size()));
  for (const auto& s : p.pass_log) w.str(s);
  w.u32(uint32_t(p.activation_scales.size()));
  for (const auto& [name, scale] : p.activation_scales) {
    w.str(name);
    w.f32(scale);
  }
  write_manifest(w, p.manifest);
  w.u32(uint32_t(p.bucket_memory.size()));
  for (const BucketMemory& m : p.bucket_memory) {
    w.i64(m.batch);
    w.i64(m.bytes);
  }
  w.u32(crc32(w.out));
  return std::move(w.out);
}

Result<Plan> deserialize_plan(std::span<const uint8_t> bytes, bool verify_checksum) {
  auto err = [](const std::string& m) { return Status(StatusCode::kParseError, m); };
  if (bytes.empty()) return err("empty plan");
  if (bytes.size() < 8 || std::memcmp(bytes.data(), kPlanMagic, 8) != 0) {
    return err("not a ticksentry plan (wrong magic)");
  }
  if (bytes.size() < 8 + 4 + 4 + 4) return err("truncated plan (" + std::to_string(bytes.size()) + " bytes)");
  Reader head(bytes.subspan(8, 8));
  uint32_t version = head.u32("version");
  if (version < kPlanFormatVersionMin || version > kPlanFormatVersion) {
    return err("plan format version " + std::to_string(version) + " is not supported (this build reads versions " +
               std::to_string(kPlanFormatVersionMin) + " to " + std::to_string(kPlanFormatVersion) +
               (version > kPlanFormatVersion ? "; the plan was made by a newer build)" : ")"));
  }
  auto body = bytes.first(bytes.size() - 4);
  if (verify_checksum) {
    Reader tail(bytes.last(4));
    uint32_t stored = tail.u32("checksum");
    if (stored != crc32(body)) return err("plan checksum mismatch (corrupt or truncated plan)");
  }
  uint32_t flags = head.u32("flags");
  if (flags & ~kPlanFlagTf32) return err("plan uses flags this build does not know (" + std::to_string(flags) + ")");
  Reader r(body.subspan(16));
  Plan p;
  p.tf32 = (flags & kPlanFlagTf32) != 0;
  p.backend = r.str("backend");
  p.target_arch = r.str("target arch");
  uint8_t prec = r.u8("precision");
  if (r.ok() && prec > uint8_t(Precision::kINT8)) return err("corrupt plan: precision " + std::to_string(prec));
  p.precision = Precision(prec);
  p.workspace_bytes = r.i64("workspace");
  p.device_memory_bytes = r.i64("device memory");
  size_t np = r.count(4, "profiles");
  p.profiles.resize(np);
  for (auto& prof : p.profiles) {
    size_t ni = r.count(16, "profile inputs");
    for (size_t i = 0; i < ni && r.ok(); ++i) {
      std::string name = r.str("profile input");
      ShapeRange sr;
      sr.min = r.i64s("profile min");
      sr.opt = r.i64s("profile opt");
      sr.max = r.i64s("profile max");
      prof.inputs[name] = std::move(sr);
    }
  }
  read_graph(r, p.graph);
  size_t nl = r.count(4, "pass log");
  for (size_t i = 0; i < nl && r.ok(); ++i) p.pass_log.push_back(r.str("pass log"));
  if (version >= 2) {
    size_t ns = r.count(8, "calibration table");
    for (size_t i = 0; i < ns && r.ok(); ++i) {
      std::string name = r.str("calibration tensor");
      float scale = r.f32("calibration scale");
      if (r.ok() && !(std::isfinite(scale) && scale > 0)) r.fail("corrupt plan: calibration scale of " + name);
      p.activation_scales[name] = scale;
    }
  }
  if (version >= 3) read_manifest(r, p.manifest);
  if (version >= 4) {
    size_t nb = r.count(16, "bucket memory");
    for (size_t i = 0; i < nb && r.ok(); ++i) {
      BucketMemory m;
      m.batch = r.i64("bucket batch");
      m.bytes = r.i64("bucket memory");
      p.bucket_memory.push_back(m);
    }
  }
  if (!r.ok()) return err(r.error());
  if (r.remaining() != 0) return err("corrupt plan: " + std::to_string(r.remaining()) + " trailing bytes");
  return p;
}

Result<std::optional<ModelManifest>> read_plan_manifest(std::span<const uint8_t> plan) {
  auto p = deserialize_plan(plan);
  if (!p) return p.status();
  return std::move(p.value().manifest);
}

Result<std::optional<ModelManifest>> read_plan_manifest_file(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) return Status(StatusCode::kIoError, "reading plan " + path + ": cannot open");
  std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  auto m = read_plan_manifest(bytes);
  if (!m) return Status(m.status().code(), path + ": " + m.status().message());
  return m;
}

Result<std::vector<uint8_t>> with_plan_manifest(std::span<const uint8_t> plan, const std::optional<ModelManifest>& manifest) {
  if (manifest) {
    if (std::string why = manifest_problem(*manifest); !why.empty()) {
      return Status(StatusCode::kInvalidArgument, "model manifest: " + why);
    }
  }
  auto p = deserialize_plan(plan);
  if (!p) return p.status();
  p.value().manifest = manifest;
  return serialize_plan(p.value());
}

}  // namespace ts::engine
