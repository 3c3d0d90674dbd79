#pragma once
// Message templates: text with {{variable}} placeholders, checked when the config is read (an
// unknown variable is an error naming it). Variables:
//   {{status}}    "firing" / "resolved"         {{receiver}}  receiver name
//   {{group}}     the group labels, "market=SH,type=rapid_rise"
//   {{count}}     number of alerts               {{symbols}}   distinct symbols, comma-separated
//   {{symbol}} {{market}} {{type}} {{severity}}  the label when every alert has the same value, else ""
//   {{summary}}   the first alert's one-line summary
//   {{alerts}}    one line per alert ("[resolved] " before ended ones), at most max_alerts lines
//                 then "... and N more"
//   {{title}}     the receiver's rendered title (text templates only)
//   {{to}} {{text}}  the recipient and the rendered text (SMS gateway body templates only)
#include <string>
#include <utility>
#include <vector>

#include "core/status.h"
#include "notify/notification.h"

namespace ts::notify {

enum class TemplateEscape : uint8_t { kNone = 0, kJson };  // kJson: values escaped for a JSON string

class Template {
 public:
  static Result<Template> parse(const std::string& text);
  // `extra`: values for {{title}} / {{to}} where the caller has them.
  std::string render(const Notification& n, int max_alerts, TemplateEscape esc = TemplateEscape::kNone,
                     const std::vector<std::pair<std::string, std::string>>& extra = {}) const;
  const std::string& text() const { return text_; }

 private:
  struct Piece {
    bool is_var = false;
    std::string s;  // literal text or variable name
  };
  std::string text_;
  std::vector<Piece> pieces_;
};

std::string json_escape(const std::string& s);  // without the surrounding quotes

}  // namespace ts::notify
