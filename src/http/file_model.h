#pragma once
// FileModel: the admin API's view of a model served from a file (`--model FILE` or [model]
// path), with no registry behind it. /api/models lists it as the one prod version (so the models
// page and scripts see what serves, instead of 503 "no model registry"); promote, shadow and
// rollback are refused (409) with what to do instead. Threading: immutable; any thread.
#include <string>

#include "http/admin_api.h"

namespace ts::http {

struct FileModelInfo {
  std::string name;      // [model] name ("default")
  std::string path;      // the file served
  std::string version;   // the registry version when known, else "file"
  std::string backend;   // "cpu", "cuda"
  std::map<std::string, double> metrics;  // threshold, window_rows, features, max_batch
};

class FileModel : public ModelAdmin {
 public:
  explicit FileModel(FileModelInfo info);
  std::vector<ModelVersionInfo> list() override;
  Status promote(const std::string& name, const std::string& version) override;
  Status rollback(const std::string& name) override;
  Status shadow(const std::string& name, const std::string& version) override;

 private:
  Status refuse(const char* action) const;
  FileModelInfo info_;
  int64_t created_ms_ = 0;  // the file's modification time
};

}  // namespace ts::http
