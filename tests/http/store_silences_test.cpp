// The dashboard's silences on src/notify's SilenceStore (what `ticksentry run` serves): made
// over HTTP, they persist in SQLite, are listed with their matchers, mark exactly the alerts
// the notification router would mute (notify::alert_labels), and expire.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "core/clock.h"
#include "http/store_silences.h"
#include "http_test_util.h"

namespace ts::testing {
namespace {

using nlohmann::json;

TEST(StoreSilences, MadeOverHttpPersistMatchAndExpire) {
  const auto db = (scratch_dir("http_store_silences") / "silences.db").string();
  std::string id;
  {
    TestServer s("http_store_silences_srv");
    auto store = std::move(notify::SilenceStore::open(db)).value();
    http::StoreSilences silences(*store);
    s.server->set_silences(&silences);  // replaces the in-memory one; before any request
    auto c = s.client();
    auto r = c.Post("/api/silences", R"({"symbol":"GOOG","type":"large_order","duration_s":600})", "application/json");
    EXPECT_EQ(r->status, 400) << "the store wants a reason: " << r->body;
    EXPECT_NE(json::parse(r->body)["message"].get<std::string>().find("comment"), std::string::npos);
    r = c.Post("/api/silences", R"({"symbol":"GOOG","type":"large_order","duration_s":600,"comment":"known wall"})",
               "application/json");
    ASSERT_EQ(r->status, 201) << r->body;
    json made = json::parse(r->body);
    id = made["id"];
    EXPECT_EQ(made["created_by"], "dashboard");
    EXPECT_EQ(made["matchers"].size(), 2u);

    const SymbolId goog = s.symbols.intern("GOOG"), aapl = s.symbols.intern("AAPL");
    const int64_t now_ms = wall_ns() / 1'000'000;
    EXPECT_EQ(silences.match(http_alert(goog, AlertType::kLargeOrder, 1), s.symbols, now_ms), id);
    EXPECT_FALSE(silences.match(http_alert(goog, AlertType::kVolumeBurst, 1), s.symbols, now_ms));
    EXPECT_FALSE(silences.match(http_alert(aapl, AlertType::kLargeOrder, 1), s.symbols, now_ms));
    json list = json::parse(c.Get("/api/silences")->body)["silences"];
    ASSERT_EQ(list.size(), 1u);
    EXPECT_EQ(list[0]["muted"], 1);
    EXPECT_EQ(list[0]["symbol"], "GOOG");
    EXPECT_TRUE(list[0]["active"].get<bool>());
  }
  // A restart finds it, and expiring it ends the muting.
  auto store = std::move(notify::SilenceStore::open(db)).value();
  http::StoreSilences silences(*store);
  auto list = silences.list();
  ASSERT_EQ(list.size(), 1u);
  EXPECT_EQ(list[0].id, id);
  EXPECT_TRUE(list[0].active);
  ASSERT_TRUE(silences.expire(id).is_ok());
  EXPECT_FALSE(silences.list()[0].active);
  SymbolTable symbols;
  const SymbolId goog = symbols.intern("GOOG");
  EXPECT_FALSE(silences.match(http_alert(goog, AlertType::kLargeOrder, 1), symbols, wall_ns() / 1'000'000));
  EXPECT_EQ(silences.expire("nope").code(), StatusCode::kNotFound);
}

}  // namespace
}  // namespace ts::testing
