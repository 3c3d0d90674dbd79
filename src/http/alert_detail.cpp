// GET /api/alerts/{id}: one alert with its book and model window (contract in alert_history.h).
#include <charconv>

#include "audit/alert_json.h"
#include "http/alert_history.h"
#include "http/http_json.h"

namespace ts::http {

bool AlertHistory::handle_alert(const std::string& id_text, httplib::Response& res) {
  uint64_t id = 0;
  const char* end = id_text.data() + id_text.size();
  auto [p, ec] = std::from_chars(id_text.data(), end, id);
  if (id_text.empty() || ec != std::errc() || p != end) {
    reply_error(res, 400, "bad_parameter", "alert id must be a decimal integer, got '" + id_text + "'");
    return false;
  }
  AlertQuery q;
  q.alert_id = id;
  q.limit = 1;
  std::optional<ModelInputRecord> input;
  Result<std::vector<AlertRecord>> rows = [&]() -> Result<std::vector<AlertRecord>> {
    std::lock_guard<std::mutex> lock(mu_);
    auto r = query_(q);
    if (r.is_ok() && !r.value().empty() && input_) {
      auto in = input_(id);
      if (!in.is_ok()) return in.status();
      input = std::move(in).value();
    }
    return r;
  }();
  if (!rows.is_ok()) {
    reply_error(res, 500, "audit_store", rows.status().message());
    return true;
  }
  if (rows.value().empty()) {
    reply_error(res, 404, "not_found", "no alert " + std::to_string(id) + " in the audit store");
    return false;
  }
  const AlertRecord& r = rows.value().front();
  nlohmann::json j = alert_record_json(r);
  j["book"] = book_record_json(r.book);
  if (input) {
    j["model"] = {{"name", input->model},         {"version", input->version}, {"probability", input->probability},
                  {"threshold", input->threshold}, {"shadow", input->shadow},   {"rows", input->rows},
                  {"cols", input->cols},           {"window", input->window}};
  } else if (!r.model.present) {
    j["model"] = nullptr;  // a rule alert, or a model alert stored before model_json was kept
  }  // else the score the alerts row keeps (PostgreSQL keeps no windows): alert_record_json's
  reply_json(res, j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
  return true;
}

}  // namespace ts::http
