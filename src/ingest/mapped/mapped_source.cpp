#include "ingest/mapped/mapped_source.h"

#include <filesystem>

#include "core/log.h"
#include "core/time_zone.h"
#include "ingest/day_folder.h"
#include "ingest/mapped/mapped_file.h"
#include "ingest/merge_source.h"

namespace ts {

Result<std::unique_ptr<Source>> make_mapped_source(const mapped::Layout& layout, const std::string& path,
                                                   SymbolTable& symbols, InputErrors& errors) {
  namespace fs = std::filesystem;
  const std::string ctx = "opening " + path + " with layout " + layout.origin;
  auto zone = TimeZone::load(layout.time_zone);
  if (!zone) return Status(StatusCode::kInvalidArgument, "layout.time_zone: " + zone.status().message()).with_context(ctx);
  std::error_code ec;
  const bool folder = fs::is_directory(path, ec);
  if (!folder && !fs::exists(path, ec)) return Status(StatusCode::kNotFound, "no such file or folder").with_context(ctx);
  if (!folder && layout.files.size() != 1) {
    return Status(StatusCode::kInvalidArgument, "the layout has " + std::to_string(layout.files.size()) +
                                                    " files: give the day's folder, not one file")
        .with_context(ctx);
  }
  const fs::path dir = folder ? fs::path(path) : fs::path(path).parent_path();
  const int date = ingest::date_from_dir_name(dir.string());
  const int64_t folder_midnight = date != 0 ? mapped::local_midnight_ns(*zone.value(), date) : INT64_MIN;

  std::vector<std::unique_ptr<Source>> files;
  std::string found, missing;
  for (const auto& f : layout.files) {
    const std::string file = folder ? ingest::find_day_file(dir, f.name) : path;
    if (file.empty()) {
      if (f.required) {
        return Status(StatusCode::kNotFound, "missing " + f.name + ".csv(.gz) in " + dir.string() + " (" + f.key + ")")
            .with_context(ctx);
      }
      missing += (missing.empty() ? "" : ", ") + f.name;
      continue;
    }
    auto opened = mapped::open_mapped_file(layout, f, file, zone.value(), folder_midnight, symbols, errors);
    if (!opened) return opened.status().with_context(ctx);
    files.push_back(std::move(opened).value());
    found += (found.empty() ? "" : ", ") + f.name;
  }
  if (!missing.empty()) spdlog::info("mapped {}: found {}; absent (optional) {}", path, found, missing);
  const std::string desc = "mapped " + layout.name + " " + path;
  if (files.size() == 1) return std::move(files.front());
  return std::unique_ptr<Source>(std::make_unique<MergeSource>(std::move(files), layout.merge, desc));
}

}  // namespace ts
