#include "ingest/day_folder.h"

#include "ingest/field_parse.h"

namespace ts::ingest {

std::string find_day_file(const std::filesystem::path& dir, const std::string& stem) {
  std::error_code ec;
  for (const char* ext : {".csv.gz", ".csv"}) {
    const auto p = dir / (stem + ext);
    if (std::filesystem::exists(p, ec)) return p.string();
  }
  return {};
}

int date_from_dir_name(std::string path) {
  while (path.size() > 1 && path.back() == '/') path.pop_back();
  const std::string_view name = base_name(path);
  if (name.size() < 8) return 0;
  const std::string_view digits = name.substr(name.size() - 8);
  if (name.size() > 8 && name[name.size() - 9] != '-' && name[name.size() - 9] != '_') return 0;
  int64_t v = 0;
  if (parse_i64(digits, v) != FieldError::kOk || v < 19000101) return 0;
  return static_cast<int>(v);
}

}  // namespace ts::ingest
