#include "notify/template.h"

#include <algorithm>
#include <cstdio>
#include <set>

namespace ts::notify {

namespace {
const std::set<std::string>& known_vars() {
  static const std::set<std::string> k{"status", "receiver", "group", "count", "symbols", "symbol", "market",
                                       "type", "severity", "summary", "alerts", "title", "text", "to"};
  return k;
}

std::string alerts_text(const Notification& n, int max_alerts) {
  std::string s;
  int shown = 0;
  for (const auto& a : n.alerts) {
    if (shown == max_alerts) break;
    if (!s.empty()) s += '\n';
    if (a.resolved) s += "[resolved] ";
    s += a.summary;
    ++shown;
  }
  if (int(n.alerts.size()) > shown) s += "\n... and " + std::to_string(n.alerts.size() - size_t(shown)) + " more";
  return s;
}

std::string symbols_text(const Notification& n) {
  std::vector<std::string> syms;
  for (const auto& a : n.alerts) {
    const std::string& s = a.labels.get("symbol");
    if (std::find(syms.begin(), syms.end(), s) == syms.end()) syms.push_back(s);
  }
  std::string out;
  for (size_t i = 0; i < syms.size() && i < 10; ++i) out += (i ? "," : "") + syms[i];
  if (syms.size() > 10) out += ",...";
  return out;
}
}  // namespace

std::string json_escape(const std::string& s) {
  std::string out;
  out.reserve(s.size() + 8);
  for (char c : s) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          char buf[8];
          std::snprintf(buf, sizeof buf, "\\u%04x", c);
          out += buf;
        } else {
          out += c;
        }
    }
  }
  return out;
}

Result<Template> Template::parse(const std::string& text) {
  Template t;
  t.text_ = text;
  size_t pos = 0;
  while (pos < text.size()) {
    const size_t open = text.find("{{", pos);
    if (open == std::string::npos) {
      t.pieces_.push_back({false, text.substr(pos)});
      break;
    }
    if (open > pos) t.pieces_.push_back({false, text.substr(pos, open - pos)});
    const size_t close = text.find("}}", open + 2);
    if (close == std::string::npos) {
      return Status(StatusCode::kInvalidArgument, "template '" + text + "': '{{' without '}}'");
    }
    std::string name = text.substr(open + 2, close - open - 2);
    name.erase(0, name.find_first_not_of(' '));
    name.erase(name.find_last_not_of(' ') + 1);
    if (!known_vars().count(name)) {
      return Status(StatusCode::kInvalidArgument, "template '" + text + "': unknown variable {{" + name +
                                                      "}} (known: status receiver group count symbols symbol "
                                                      "market type severity summary alerts title text to)");
    }
    t.pieces_.push_back({true, name});
    pos = close + 2;
  }
  return t;
}

std::string Template::render(const Notification& n, int max_alerts, TemplateEscape esc,
                             const std::vector<std::pair<std::string, std::string>>& extra) const {
  const Labels common = n.common_labels();
  std::string out;
  for (const Piece& p : pieces_) {
    if (!p.is_var) {
      out += p.s;
      continue;
    }
    std::string v;
    if (p.s == "status") v = n.status();
    else if (p.s == "receiver") v = n.receiver;
    else if (p.s == "group") v = n.group_labels.to_string();
    else if (p.s == "count") v = std::to_string(n.alerts.size());
    else if (p.s == "symbols") v = symbols_text(n);
    else if (p.s == "summary") v = n.alerts.empty() ? "" : n.alerts.front().summary;
    else if (p.s == "alerts") v = alerts_text(n, max_alerts);
    else if (p.s == "symbol" || p.s == "market" || p.s == "type" || p.s == "severity") v = common.get(p.s);
    for (const auto& [k, val] : extra) {
      if (k == p.s) v = val;
    }
    out += esc == TemplateEscape::kJson ? json_escape(v) : v;
  }
  return out;
}

}  // namespace ts::notify
