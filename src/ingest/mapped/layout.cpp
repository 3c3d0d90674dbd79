#include "ingest/mapped/layout.h"

#include <toml++/toml.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include "core/event.h"

namespace ts::mapped {

const std::array<std::string_view, kFieldCount> kFieldNames = {
    "seq", "order_id", "price", "size", "buy_order_id", "sell_order_id", "prev_close", "last", "cum_volume", "cum_turnover", "upper_limit", "lower_limit"};
const std::array<std::string_view, kLevelFieldCount> kLevelFieldNames = {"bid_price", "bid_size",  "ask_price",
                                                                         "ask_size",  "bid_count", "ask_count"};

const char* file_role_name(FileRole r) {
  switch (r) {
    case FileRole::kSnapshot: return "snapshot";
    case FileRole::kOrder: return "order";
    case FileRole::kTrade: return "trade";
    case FileRole::kCombined: return "combined";
  }
  return "?";
}

namespace {

// Thrown inside the parser only; parse_layout() turns it into a Status.
struct LayoutError {
  std::string message;
};

const char* type_name(const toml::node& n) {
  switch (n.type()) {
    case toml::node_type::string: return "a string";
    case toml::node_type::integer: return "an integer";
    case toml::node_type::floating_point: return "a float";
    case toml::node_type::boolean: return "a boolean";
    case toml::node_type::table: return "a table";
    case toml::node_type::array: return "an array";
    default: return "a date/time";
  }
}

// One TOML table read key by key; unknown keys are refused by finish().
class Reader {
 public:
  Reader(const toml::table& t, std::string path) : t_(t), path_(std::move(path)) {}

  std::string key(std::string_view k) const { return path_.empty() ? std::string(k) : path_ + "." + std::string(k); }
  [[noreturn]] void fail(std::string_view k, const std::string& what) const { throw LayoutError{key(k) + ": " + what}; }
  const toml::node* get(std::string_view k) {
    seen_.insert(std::string(k));
    return t_.get(k);
  }
  bool has(std::string_view k) const { return t_.contains(k); }

  std::string str(std::string_view k, const std::string& def = {}) {
    const toml::node* n = get(k);
    if (!n) return def;
    if (!n->is_string()) fail(k, std::string("expected a string, got ") + type_name(*n));
    std::string s = n->as_string()->get();
    if (s.empty()) fail(k, "empty string");
    return s;
  }
  int64_t integer(std::string_view k, int64_t def, int64_t lo, int64_t hi) {
    const toml::node* n = get(k);
    if (!n) return def;
    if (!n->is_integer()) fail(k, std::string("expected an integer, got ") + type_name(*n));
    const int64_t v = n->as_integer()->get();
    if (v < lo || v > hi) fail(k, std::to_string(v) + " is outside " + std::to_string(lo) + ".." + std::to_string(hi));
    return v;
  }
  double number(std::string_view k, double def, double lo, double hi) {
    const toml::node* n = get(k);
    if (!n) return def;
    double v = 0;
    if (n->is_integer()) {
      v = static_cast<double>(n->as_integer()->get());
    } else if (n->is_floating_point()) {
      v = n->as_floating_point()->get();
    } else {
      fail(k, std::string("expected a number, got ") + type_name(*n));
    }
    if (!(v >= lo && v <= hi)) {
      std::ostringstream os;
      os << v << " is outside " << lo << ".." << hi;
      fail(k, os.str());
    }
    return v;
  }
  bool boolean(std::string_view k, bool def) {
    const toml::node* n = get(k);
    if (!n) return def;
    if (!n->is_boolean()) fail(k, std::string("expected true or false, got ") + type_name(*n));
    return n->as_boolean()->get();
  }
  const toml::table* table(std::string_view k) {
    const toml::node* n = get(k);
    if (!n) return nullptr;
    if (!n->is_table()) fail(k, std::string("expected a table, got ") + type_name(*n));
    return n->as_table();
  }
  void finish() const {
    for (const auto& [k, v] : t_) {
      if (!seen_.count(std::string(k.str()))) throw LayoutError{key(k.str()) + ": unknown key"};
    }
  }
  // Keys present but not read so far (for "not used by this role" messages).
  std::vector<std::string> unread() const {
    std::vector<std::string> out;
    for (const auto& [k, v] : t_) {
      if (!seen_.count(std::string(k.str()))) out.emplace_back(k.str());
    }
    return out;
  }

 private:
  const toml::table& t_;
  std::string path_;
  std::set<std::string> seen_;
};

bool parse_time_format(std::string_view s, TimeFormat& f) {
  static const std::pair<std::string_view, TimeFormat> kFormats[] = {
      {"hh:mm:ss.fff", TimeFormat::kHms},      {"hhmmssfff", TimeFormat::kHhmmssfff},
      {"seconds", TimeFormat::kSecondsOfDay},  {"epoch_s", TimeFormat::kEpochS},
      {"epoch_ms", TimeFormat::kEpochMs},      {"epoch_us", TimeFormat::kEpochUs},
      {"epoch_ns", TimeFormat::kEpochNs}};
  for (const auto& [name, v] : kFormats) {
    if (s == name) {
      f = v;
      return true;
    }
  }
  return false;
}

// A code table: { column = "...", codes = { CODE = "value", ... } }; `value_of` maps a value's
// name to its number (false: not a value this table knows; `allowed` says which are).
template <typename ValueOf>
CodeTable read_codes(Reader& parent, std::string_view k, ValueOf value_of, const char* allowed) {
  CodeTable out;
  const toml::table* t = parent.table(k);
  if (!t) return out;
  Reader r(*t, parent.key(k));
  out.column = r.str("column");
  if (out.column.empty()) r.fail("column", "missing (the column holding the codes)");
  const toml::table* codes = r.table("codes");
  if (!codes || codes->empty()) r.fail("codes", "missing or empty (a table CODE = \"value\")");
  for (const auto& [code, v] : *codes) {
    const std::string ck = r.key("codes") + "." + std::string(code.str());
    if (!v.is_string()) throw LayoutError{ck + ": expected a string, got " + type_name(v)};
    uint8_t value = 0;
    if (!value_of(v.as_string()->get(), value)) {
      throw LayoutError{ck + ": \"" + v.as_string()->get() + "\" is not one of " + allowed};
    }
    out.codes.emplace_back(std::string(code.str()), value);
  }
  r.finish();
  return out;
}

bool kind_value(std::string_view s, uint8_t& v) {
  static const std::pair<std::string_view, RowKind> kKinds[] = {
      {"snapshot", RowKind::kSnapshot}, {"add", RowKind::kOrderAdd}, {"cancel", RowKind::kOrderCancel},
      {"execute", RowKind::kOrderExecute}, {"trade", RowKind::kTrade}, {"skip", RowKind::kSkip}};
  for (const auto& [name, k] : kKinds) {
    if (s == name) {
      v = static_cast<uint8_t>(k);
      return true;
    }
  }
  return false;
}

bool side_value(std::string_view s, uint8_t& v) {
  if (s == "buy") v = static_cast<uint8_t>(Side::kBuy);
  else if (s == "sell") v = static_cast<uint8_t>(Side::kSell);
  else if (s == "none") v = static_cast<uint8_t>(Side::kNone);
  else return false;
  return true;
}

bool phase_value(std::string_view s, uint8_t& v) {
  for (int p = 0; p <= static_cast<int>(Phase::kHalted); ++p) {
    if (s == phase_name(static_cast<Phase>(p))) {
      v = static_cast<uint8_t>(p);
      return true;
    }
  }
  return false;
}

bool kind_in(const CodeTable& t, RowKind k) {
  for (const auto& [code, v] : t.codes) {
    if (v == static_cast<uint8_t>(k)) return true;
  }
  return false;
}

void read_symbol(Reader& r, FileLayout& f) {
  const toml::node* n = r.get("symbol");
  if (!n) r.fail("symbol", "missing (the column holding the security code)");
  if (n->is_string()) {
    f.symbol.column = n->as_string()->get();
    return;
  }
  if (!n->is_table()) r.fail("symbol", std::string("expected a column name or a table, got ") + type_name(*n));
  Reader s(*n->as_table(), r.key("symbol"));
  f.symbol.column = s.str("column");
  if (f.symbol.column.empty()) s.fail("column", "missing");
  f.symbol.digits = static_cast<int>(s.integer("digits", 0, 0, 24));
  f.symbol.prefix = s.str("prefix");
  f.symbol.suffix = s.str("suffix");
  if (f.symbol.prefix.size() + f.symbol.suffix.size() > 16) s.fail("suffix", "prefix + suffix longer than 16 bytes");
  s.finish();
}

FileLayout read_file(const toml::table& t, size_t index) {
  FileLayout f;
  f.key = "file[" + std::to_string(index) + "]";
  Reader r(t, f.key);
  const std::string role = r.str("role");
  if (role == "snapshot") f.role = FileRole::kSnapshot;
  else if (role == "order") f.role = FileRole::kOrder;
  else if (role == "trade") f.role = FileRole::kTrade;
  else if (role == "combined") f.role = FileRole::kCombined;
  else r.fail("role", role.empty() ? "missing (snapshot, order, trade or combined)"
                                   : "\"" + role + "\" is not snapshot, order, trade or combined");
  f.name = r.str("name");
  if (f.name.empty()) r.fail("name", "missing (the file's stem: \"snapshot\" for snapshot.csv.gz)");
  f.required = r.boolean("required", true);
  const std::string order = r.str("sorted_by", "time");
  if (order == "symbol") f.grouped_by_symbol = true;
  else if (order != "time") r.fail("sorted_by", "\"" + order + "\" is not time or symbol");
  f.price_scale = r.number("price_scale", 1.0, 1e-9, 1e9);
  f.size_scale = r.integer("size_scale", 1, 1, 1'000'000);
  if (const toml::table* tt = r.table("time")) {
    Reader tr(*tt, r.key("time"));
    f.time_column = tr.str("column");
    const std::string fmt = tr.str("format", "hh:mm:ss.fff");
    if (!parse_time_format(fmt, f.time_format)) {
      tr.fail("format", "\"" + fmt + "\" is not hh:mm:ss.fff, hhmmssfff, seconds, epoch_s, epoch_ms, epoch_us or epoch_ns");
    }
    if (f.time_column.empty()) tr.fail("column", "missing");
    tr.finish();
  } else {
    r.fail("time", "missing (a table { column = \"...\", format = \"...\" })");
  }
  f.date_column = r.str("date");
  read_symbol(r, f);
  f.fields[static_cast<int>(Field::kSeq)] = r.str("seq");

  const bool snap = f.role == FileRole::kSnapshot || f.role == FileRole::kCombined;
  const bool order_role = f.role == FileRole::kOrder || f.role == FileRole::kCombined;
  const bool trade = f.role == FileRole::kTrade || f.role == FileRole::kCombined;
  auto field = [&](Field fl) { f.fields[static_cast<int>(fl)] = r.str(kFieldNames[static_cast<int>(fl)]); };
  if (order_role || trade) {
    field(Field::kPrice);
    field(Field::kSize);
  }
  if (order_role) {
    field(Field::kOrderId);
    f.kind = read_codes(r, "kind", kind_value, "snapshot, add, cancel, execute, trade, skip");
    f.side = read_codes(r, "side", side_value, "buy, sell");
  }
  if (trade) {
    field(Field::kBuyOrderId);
    field(Field::kSellOrderId);
    f.aggressor = read_codes(r, "aggressor", side_value, "buy, sell, none");
  }
  if (snap) {
    for (Field fl : {Field::kPrevClose, Field::kLast, Field::kCumVolume, Field::kCumTurnover, Field::kUpperLimit,
                     Field::kLowerLimit}) {
      field(fl);
    }
    f.phase = read_codes(r, "phase", phase_value, "unknown, pre_open, opening_auction, continuous, break, closing_auction, closed, halted");
    f.levels = static_cast<int>(r.integer("levels", 0, 0, kBookLevels));
    for (int i = 0; i < kLevelFieldCount; ++i) {
      f.level_patterns[i] = r.str(kLevelFieldNames[i]);
      if (!f.level_patterns[i].empty() && f.level_patterns[i].find("{n}") == std::string::npos) {
        r.fail(kLevelFieldNames[i], "\"" + f.level_patterns[i] + "\" has no {n} for the level number");
      }
    }
  }
  // A key another role uses is "not used by" this one; anything else is unknown.
  static const std::set<std::string> kAnyRoleKeys = {
      "price", "size", "order_id", "kind", "side", "buy_order_id", "sell_order_id", "aggressor", "prev_close", "last",
      "cum_volume", "cum_turnover", "upper_limit", "lower_limit", "phase", "levels", "bid_price", "bid_size", "ask_price", "ask_size", "bid_count",
      "ask_count"};
  for (const auto& k : r.unread()) {
    if (kAnyRoleKeys.count(k)) r.fail(k, std::string("not used by a ") + file_role_name(f.role) + " file");
  }
  r.finish();

  // Required per role (and, for combined files, per kind the codes produce).
  auto require = [&](Field fl, const char* why) {
    if (!f.has(fl)) r.fail(kFieldNames[static_cast<int>(fl)], std::string("missing (") + why + ")");
  };
  const bool any_order = f.role == FileRole::kOrder || kind_in(f.kind, RowKind::kOrderAdd) ||
                         kind_in(f.kind, RowKind::kOrderCancel) || kind_in(f.kind, RowKind::kOrderExecute);
  const bool any_trade = f.role == FileRole::kTrade || kind_in(f.kind, RowKind::kTrade);
  const bool any_snap = f.role == FileRole::kSnapshot || kind_in(f.kind, RowKind::kSnapshot);
  if (order_role && f.kind.column.empty()) r.fail("kind", "missing (the column that says add/cancel/...)");
  if (f.role == FileRole::kOrder && (kind_in(f.kind, RowKind::kSnapshot) || kind_in(f.kind, RowKind::kTrade))) {
    r.fail("kind", "an order file's codes are add, cancel, execute or skip (use role = \"combined\")");
  }
  if (any_order) {
    require(Field::kOrderId, "orders are named by number");
    require(Field::kPrice, "an order's price");
    require(Field::kSize, "an order's size");
    if (f.side.column.empty()) r.fail("side", "missing (the order's buy/sell column)");
  }
  if (any_trade) {
    require(Field::kPrice, "a trade's price");
    require(Field::kSize, "a trade's size");
  }
  if (any_snap && f.levels > 0) {
    for (int i = 0; i < 4; ++i) {
      if (f.level_patterns[i].empty()) {
        r.fail(kLevelFieldNames[i], "missing (levels = " + std::to_string(f.levels) + " needs all four of bid/ask price/size)");
      }
    }
  }
  return f;
}

Layout read_layout(const toml::table& root, const std::string& origin) {
  Layout l;
  l.origin = origin;
  Reader top(root, "");
  if (const toml::table* lt = top.table("layout")) {
    Reader r(*lt, "layout");
    l.name = r.str("name");
    l.time_zone = r.str("time_zone", "UTC");
    const std::string merge = r.str("merge", "time_then_seq");
    if (merge == "time_then_seq") l.merge = MergeOrder::kTimeThenSeq;
    else if (merge == "time_then_file") l.merge = MergeOrder::kTimeThenInput;
    else r.fail("merge", "\"" + merge + "\" is not time_then_seq or time_then_file");
    (void)r.str("description");
    r.finish();
  }
  const toml::node* files = top.get("file");
  if (!files) throw LayoutError{"file: missing (one [[file]] table per file of the layout)"};
  if (!files->is_array_of_tables()) throw LayoutError{std::string("file: expected [[file]] tables, got ") + type_name(*files)};
  const toml::array& arr = *files->as_array();
  for (size_t i = 0; i < arr.size(); ++i) l.files.push_back(read_file(*arr[i].as_table(), i));
  std::set<std::string> names;
  for (const auto& f : l.files) {
    if (!names.insert(f.name).second) throw LayoutError{f.key + ".name: \"" + f.name + "\" is named twice"};
  }
  top.finish();
  return l;
}

}  // namespace

Result<Layout> parse_layout(std::string_view text, const std::string& origin) {
  toml::table root;
  try {
    root = toml::parse(text, origin);
  } catch (const toml::parse_error& e) {
    std::ostringstream os;
    os << "layout " << origin << ": line " << e.source().begin.line << ": " << e.description();
    return Status(StatusCode::kInvalidArgument, os.str());
  }
  try {
    return read_layout(root, origin);
  } catch (const LayoutError& e) {
    return Status(StatusCode::kInvalidArgument, "layout " + origin + ": " + e.message);
  }
}

Result<Layout> load_layout(const std::string& name_or_path) {
  namespace fs = std::filesystem;
  std::error_code ec;
  auto read_file_text = [](const fs::path& p) {
    std::ifstream in(p, std::ios::binary);
    std::ostringstream os;
    os << in.rdbuf();
    return os.str();
  };
  if (fs::is_regular_file(name_or_path, ec)) return parse_layout(read_file_text(name_or_path), name_or_path);
  const bool plain_name = name_or_path.find('/') == std::string::npos && !name_or_path.empty();
  if (plain_name) {
    const fs::path local = fs::path("config") / "layouts" / (name_or_path + ".toml");
    if (fs::is_regular_file(local, ec)) return parse_layout(read_file_text(local), local.string());
    for (const auto& b : builtin_layouts()) {
      if (b.name == name_or_path) return parse_layout(b.text, "builtin:" + name_or_path);
    }
  }
  std::string known;
  for (const auto& b : builtin_layouts()) known += (known.empty() ? "" : ", ") + std::string(b.name);
  return Status(StatusCode::kNotFound,
                "no layout \"" + name_or_path + "\": not a file, and not a shipped layout (" + known + ")");
}

}  // namespace ts::mapped
