#include "http/file_model.h"

#include <sys/stat.h>

namespace ts::http {

FileModel::FileModel(FileModelInfo info) : info_(std::move(info)) {
  struct stat st {};
  if (::stat(info_.path.c_str(), &st) == 0) created_ms_ = int64_t(st.st_mtim.tv_sec) * 1000 + st.st_mtim.tv_nsec / 1'000'000;
}

std::vector<ModelVersionInfo> FileModel::list() {
  ModelVersionInfo v;
  v.name = info_.name;
  v.version = info_.version;
  v.stage = "prod";
  v.created_ms = created_ms_;
  v.metrics = info_.metrics;
  v.source = info_.path;
  v.backend = info_.backend;
  return {v};
}

Status FileModel::refuse(const char* action) const {
  return Status(StatusCode::kUnsupported, std::string(action) + " " + info_.name + ": this process serves the file " +
                                              info_.path +
                                              " (--model / [model] path), not a registry; serve from [model] registry "
                                              "to promote, shadow and roll back (docs/models-registry.md)");
}

Status FileModel::promote(const std::string&, const std::string&) { return refuse("promote"); }
Status FileModel::rollback(const std::string&) { return refuse("rollback"); }
Status FileModel::shadow(const std::string&, const std::string&) { return refuse("shadow"); }

}  // namespace ts::http
