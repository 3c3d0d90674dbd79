// kill -9 in the middle of a replay, then the same replay again (docs/formats.md, "Crash
// safety"): without --append the previous run's files are refused and left as they are; with
// --append the JSONL file ends with every alert of the day once, each line whole, the same ids as
// an uninterrupted run, and the same ids as the audit store's rows.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <set>
#include <thread>

#include "audit/audit_store.h"
#include "features/feature_set.h"
#include "run_bin.h"
#include "test_data.h"

namespace ts::testing {
namespace {

std::string slurp(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

// Every line must parse: a torn line fails the test.
std::multiset<uint64_t> jsonl_ids(const std::filesystem::path& p) {
  std::multiset<uint64_t> ids;
  std::ifstream in(p);
  for (std::string line; std::getline(in, line);) ids.insert(nlohmann::json::parse(line).at("id").get<uint64_t>());
  return ids;
}

size_t complete_lines(const std::filesystem::path& p) {
  const std::string s = slurp(p);
  return size_t(std::count(s.begin(), s.end(), '\n'));
}

TEST(ResumeCli, KillNineMidReplayThenAppendLeavesEveryAlertOnce) {
  const auto goog = lobster_file("GOOG", "message", 10);
  TS_REQUIRE_DATA(goog);
  const auto ref_dir = scratch_dir("resume_ref");
  const auto dir = scratch_dir("resume_kill");
  // The absolute thresholds: GOOG's 77 alerts, a steady stream to interrupt (at the relative
  // defaults this day raises 6).
  for (const auto& d : {ref_dir, dir}) std::ofstream(d / "abs.toml") << "[rules]\nrelative = false\n";
  const std::vector<std::string> replay = {"replay", "--format", "lobster", goog.string(), "--no-stdout", "--http",
                                           "off", "--jsonl", "alerts.jsonl", "--audit-db", "audit.db",
                                           "--config", "abs.toml"};
  const auto ref = run_bin(replay, ref_dir);
  ASSERT_EQ(ref.exit_code, 0) << ref.err;
  const auto want = jsonl_ids(ref_dir / "alerts.jsonl");
  ASSERT_GE(want.size(), 20u);

  // Paced so that the kill lands mid-day: after the first alerts are in the file.
  std::vector<std::string> paced = replay;
  paced.insert(paced.end(), {"--rate", "15000"});
  const pid_t pid = fork();
  if (pid == 0) {
    if (!freopen((dir / "first.err").c_str(), "w", stderr) || chdir(dir.c_str()) != 0) _exit(99);
    std::vector<char*> argv{const_cast<char*>(TICKSENTRY_BIN)};
    for (auto& a : paced) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    execv(TICKSENTRY_BIN, argv.data());
    _exit(97);
  }
  const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (complete_lines(dir / "alerts.jsonl") < 3 && std::chrono::steady_clock::now() < give_up) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  kill(pid, SIGKILL);
  int status = 0;
  waitpid(pid, &status, 0);
  ASSERT_TRUE(WIFSIGNALED(status)) << "the replay ended before the kill: " << slurp(dir / "first.err");
  const size_t at_kill = complete_lines(dir / "alerts.jsonl");
  ASSERT_GE(at_kill, 3u);
  ASSERT_LT(at_kill, want.size()) << "the kill came after the whole day: the test proves nothing";
  // Whatever the kill left, make the last line torn as a kill inside write() leaves it.
  { std::ofstream(dir / "alerts.jsonl", std::ios::app) << R"({"event_seq":12,"exch_ts_ns":"13402)"; }
  const std::string left = slurp(dir / "alerts.jsonl");

  // The same command again: refused (exit 2), naming the file and --append; nothing touched.
  const auto refused = run_bin(replay, dir);
  EXPECT_EQ(refused.exit_code, 2) << refused.err;
  EXPECT_NE(refused.err.find("alerts.jsonl already holds"), std::string::npos) << refused.err;
  EXPECT_NE(refused.err.find("--append"), std::string::npos) << refused.err;
  EXPECT_EQ(slurp(dir / "alerts.jsonl"), left);

  std::vector<std::string> resume = replay;
  resume.insert(resume.end(), {"--append", "--summary-json", "s.json"});
  const auto again = run_bin(resume, dir);
  ASSERT_EQ(again.exit_code, 0) << again.err;
  EXPECT_EQ(jsonl_ids(dir / "alerts.jsonl"), want) << "each alert of the day once, every line whole";
  EXPECT_NE(again.err.find("alerts went to: "), std::string::npos) << again.err;
  EXPECT_NE(again.err.find("alerts.jsonl (" + std::to_string(want.size() - at_kill) + " written, " +
                           std::to_string(at_kill) + " already there)"),
            std::string::npos)
      << again.err;
  const auto summary = nlohmann::json::parse(slurp(dir / "s.json"));
  EXPECT_EQ(summary["outputs"]["jsonl_written"].get<uint64_t>(), want.size() - at_kill);
  EXPECT_GT(summary["outputs"]["jsonl_repaired_bytes"].get<uint64_t>(), 0u);

  // The audit store holds the same alerts, each once.
  auto store = AuditStore::open((dir / "audit.db").string());
  ASSERT_TRUE(store.is_ok());
  auto rows = store.value()->query(AlertQuery{.limit = 100000});
  ASSERT_TRUE(rows.is_ok());
  std::multiset<uint64_t> stored;
  for (const auto& r : rows.value()) stored.insert(r.alert_id);
  EXPECT_EQ(stored, want);
}

TEST(ResumeCli, OutDirKeepsOneRunsFilesTogether) {
  const auto goog = lobster_file("GOOG", "message", 10);
  TS_REQUIRE_DATA(goog);
  const auto dir = scratch_dir("resume_out_dir");
  const auto o = run_bin({"replay", "--format", "lobster", goog.string(), "--no-stdout", "--http", "off", "--out-dir",
                          "day1"},
                         dir);
  ASSERT_EQ(o.exit_code, 0) << o.err;
  EXPECT_TRUE(std::filesystem::exists(dir / "day1" / "ticksentry-alerts.jsonl"));
  EXPECT_TRUE(std::filesystem::exists(dir / "day1" / "ticksentry-audit.db"));
  EXPECT_TRUE(std::filesystem::exists(dir / "day1" / "summary.json"));
  EXPECT_FALSE(std::filesystem::exists(dir / "ticksentry-alerts.jsonl")) << "nothing outside --out-dir";
  EXPECT_NE(o.err.find("day1/ticksentry-alerts.jsonl"), std::string::npos) << o.err;
  const auto summary = nlohmann::json::parse(slurp(dir / "day1" / "summary.json"));
  EXPECT_EQ(summary["outputs"]["jsonl_written"].get<int64_t>(), summary["alerts_total"].get<int64_t>());
}

}  // namespace
}  // namespace ts::testing

namespace ts::testing {
namespace {

// The whole configuration is checked before anything slow starts: with a model that would fail
// to open (or take seconds to build), a typo in [notify] or an unknown key elsewhere is what the
// user hears about, and the model is never touched.
TEST(ConfigCli, WholeConfigIsCheckedBeforeTheModelIsBuilt) {
  const auto goog = lobster_file("GOOG", "message", 10);
  TS_REQUIRE_DATA(goog);
  const auto dir = scratch_dir("config_before_model");
  {
    std::ofstream(dir / "notify.toml") << "[model]\npath = \"missing.onnx\"\n"
                                          "[notify]\n[[notify.receivers]]\nname = \"desk\"\ntype = \"webhook\"\n"
                                          "url = \"http://127.0.0.1:9/x\"\n[notify.route]\nreceiver = \"desk\"\n"
                                          "group_wiat_ms = 0\n";
    std::ofstream(dir / "sinks.toml") << "[model]\npath = \"missing.onnx\"\n[sinks]\njsnol = \"a.jsonl\"\n";
  }
  for (const char* cfg : {"notify.toml", "sinks.toml"}) {
    const auto o = run_bin({"replay", "--format", "lobster", goog.string(), "--config", cfg, "--no-stdout", "--http",
                            "off", "--jsonl", "", "--audit-db", ""},
                           dir);
    EXPECT_EQ(o.exit_code, 2) << cfg;
    EXPECT_EQ(o.err.find("missing.onnx"), std::string::npos) << cfg << ": the model was opened first:\n" << o.err;
    EXPECT_NE(o.err.find(std::string(cfg) == "sinks.toml" ? "sinks.jsnol" : "group_wiat_ms"), std::string::npos)
        << cfg << ":\n" << o.err;
  }
}

}  // namespace
}  // namespace ts::testing

namespace ts::testing {
namespace {

std::map<uint64_t, std::string> ids_and_symbols(const std::filesystem::path& p) {
  std::map<uint64_t, std::string> out;
  std::ifstream in(p);
  for (std::string line; std::getline(in, line);) {
    const auto j = nlohmann::json::parse(line);
    out[j.at("id").get<uint64_t>()] = j.at("symbol").get<std::string>();
  }
  return out;
}

// --symbol on replay: one stock of a two-stock day raises exactly the alerts it raises in the
// full replay (symbols are independent in every stage); on record: only its events are written.
TEST(SymbolCli, ReplayAndRecordKeepOnlyTheSymbolsAsked) {
  const auto goog = lobster_file("GOOG", "message", 10), aapl = lobster_file("AAPL", "message", 1);
  TS_REQUIRE_DATA(goog);
  TS_REQUIRE_DATA(aapl);
  const auto dir = scratch_dir("symbol_cli");
  const std::vector<std::string> base = {"replay", "--format", "lobster", goog.string(), aapl.string(),
                                         "--no-stdout", "--http", "off", "--audit-db", ""};
  auto with = [&](std::vector<std::string> extra) {
    std::vector<std::string> args = base;
    args.insert(args.end(), extra.begin(), extra.end());
    return run_bin(args, dir);
  };
  auto o = with({"--jsonl", "all.jsonl"});
  ASSERT_EQ(o.exit_code, 0) << o.err;
  std::map<uint64_t, std::string> want;
  std::set<std::string> seen;
  for (const auto& [id, sym] : ids_and_symbols(dir / "all.jsonl")) {
    seen.insert(sym);
    if (sym == "GOOG") want[id] = sym;
  }
  ASSERT_EQ(seen.size(), 2u) << "both stocks alert in the full replay: the test needs that";
  ASSERT_FALSE(want.empty());
  o = with({"--jsonl", "goog.jsonl", "--symbol", "GO*"});
  ASSERT_EQ(o.exit_code, 0) << o.err;
  EXPECT_EQ(ids_and_symbols(dir / "goog.jsonl"), want);
  EXPECT_NE(o.err.find("--symbol: 1 symbols kept"), std::string::npos) << o.err;
  o = with({"--jsonl", "none.jsonl", "--symbol", "MSFT"});
  ASSERT_EQ(o.exit_code, 0) << o.err;
  EXPECT_NE(o.err.find("--symbol matched no symbol"), std::string::npos) << o.err;

  o = run_bin({"record", "--format", "lobster", goog.string(), aapl.string(), "--symbol", "AAPL", "--out", "aapl.csv"},
              dir);
  ASSERT_EQ(o.exit_code, 0) << o.err;
  std::ifstream csv(dir / "aapl.csv");
  std::string line;
  size_t rows = 0, goog_rows = 0;
  std::getline(csv, line);  // header
  while (std::getline(csv, line)) {
    ++rows;
    goog_rows += line.find(",GOOG,") != std::string::npos;
  }
  EXPECT_GT(rows, 1000u);
  EXPECT_EQ(goog_rows, 0u);
}

}  // namespace
}  // namespace ts::testing

namespace ts::testing {
namespace {

// The exchange times of a normalized CSV (column 3), header skipped.
std::vector<int64_t> csv_times(const std::filesystem::path& p) {
  std::vector<int64_t> out;
  std::ifstream in(p);
  std::string line;
  std::getline(in, line);
  while (std::getline(in, line)) {
    const size_t a = line.find(',', line.find(',') + 1);
    out.push_back(std::stoll(line.substr(a + 1, line.find(',', a + 1) - a - 1)));
  }
  return out;
}

// --from / --to on replay and record: an analyst replays 10:00-12:00 of one day in New York time
// without naming the date or the zone; only alerts and events of the window come out, the same
// as with the absolute times; a paced replay of three seconds at 11:00 takes seconds, not the
// morning.
TEST(TimeRangeCli, ReplayAndRecordKeepOnlyTheWindow) {
  const auto goog = lobster_file("GOOG", "message", 10);
  TS_REQUIRE_DATA(goog);
  const auto dir = scratch_dir("time_range_cli");
  std::ofstream(dir / "abs.toml") << "[rules]\nrelative = false\n";
  const int64_t s = 1'000'000'000, ten = 1340287200LL * s, noon = 1340294400LL * s;  // 10:00, 12:00 EDT
  auto o = run_bin({"replay", "--format", "lobster", goog.string(), "--config", "abs.toml", "--no-stdout", "--http",
                    "off", "--audit-db", "", "--jsonl", "w.jsonl", "--from", "10:00", "--to", "12:00"},
                   dir);
  ASSERT_EQ(o.exit_code, 0) << o.err;
  EXPECT_NE(o.err.find("--from/--to: GOOG 2012-06-21T10:00:00-04:00 .. 2012-06-21T12:00:00-04:00"), std::string::npos)
      << o.err;
  size_t alerts = 0;
  std::ifstream in(dir / "w.jsonl");
  for (std::string line; std::getline(in, line); ++alerts) {
    const int64_t t = std::stoll(nlohmann::json::parse(line).at("exch_ts_ns").get<std::string>());
    EXPECT_GE(t, ten);
    EXPECT_LT(t, noon);
  }
  EXPECT_GT(alerts, 0u) << "GOOG alerts between 10:00 and 12:00 at the absolute thresholds";

  o = run_bin({"record", "--format", "lobster", goog.string(), "--out", "tod.csv", "--from", "10:50", "--to", "11:00"},
              dir);
  ASSERT_EQ(o.exit_code, 0) << o.err;
  o = run_bin({"record", "--format", "lobster", goog.string(), "--out", "abs.csv", "--from", "2012-06-21T14:50:00Z",
               "--to", "2012-06-21T11:00:00-04:00"},
              dir);
  ASSERT_EQ(o.exit_code, 0) << o.err;
  o = run_bin({"record", "--format", "lobster", goog.string(), "--out", "all.csv"}, dir);
  ASSERT_EQ(o.exit_code, 0) << o.err;
  const auto tod = csv_times(dir / "tod.csv"), all = csv_times(dir / "all.csv");
  EXPECT_EQ(tod, csv_times(dir / "abs.csv"));
  const int64_t from = 1340290200LL * s, to = 1340290800LL * s;  // 10:50, 11:00 EDT
  size_t want = 0;
  for (int64_t t : all) want += t >= from && t < to;
  EXPECT_GT(want, 1000u);
  EXPECT_EQ(tod.size(), want);
  for (int64_t t : tod) ASSERT_TRUE(t >= from && t < to) << t;

  // Paced at real time: three seconds of exchange time at 11:00, after reading the morning unpaced.
  const auto t0 = std::chrono::steady_clock::now();
  o = run_bin({"replay", "--format", "lobster", goog.string(), "--speed", "1", "--no-stdout", "--http", "off",
               "--audit-db", "", "--jsonl", "", "--from", "11:00", "--to", "11:00:03"},
              dir);
  ASSERT_EQ(o.exit_code, 0) << o.err;
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(30));

  // Mistakes are usage errors naming the flag.
  o = run_bin({"record", "--format", "lobster", goog.string(), "--out", "x.csv", "--from", "11:00", "--to", "10:50"}, dir);
  EXPECT_EQ(o.exit_code, 2);
  EXPECT_NE(o.err.find("--from 11:00 is not before --to 10:50"), std::string::npos) << o.err;
  o = run_bin({"replay", "--format", "lobster", goog.string(), "--http", "off", "--from", "10:5"}, dir);
  EXPECT_EQ(o.exit_code, 2);
  EXPECT_NE(o.err.find("--from: time '10:5'"), std::string::npos) << o.err;
  o = run_bin({"record", "--format", "lobster", goog.string(), "--out", "x.csv", "--from", "20:00"}, dir);
  EXPECT_EQ(o.exit_code, 0) << o.err;
  EXPECT_NE(o.err.find("--from/--to kept no event"), std::string::npos) << o.err;
}

}  // namespace
}  // namespace ts::testing

namespace ts::testing {
namespace {

// A model made for another contract is refused at load with the expected and the actual values
// (docs/bring-your-own-model.md), before anything is built: exit 2, the model's real inputs listed.
TEST(ModelContractCli, AModelForAnotherContractIsRefusedWithWhatItHas) {
  const auto goog = lobster_file("GOOG", "message", 10);
  TS_REQUIRE_DATA(goog);
  const auto dir = scratch_dir("model_contract_cli");
  const std::string make = "/usr/bin/python3 " + std::string(TICKSENTRY_SOURCE_DIR) +
                           "/tests/e2e/make_contract_models.py " + dir.string();
  ASSERT_EQ(std::system(make.c_str()), 0) << make;
  auto replay = [&](const std::string& model) {
    return run_bin({"replay", "--format", "lobster", goog.string(), "--model", model, "--no-stdout", "--http", "off",
                    "--jsonl", "", "--audit-db", "", "--to", "09:31"},
                   dir);
  };
  auto o = replay("wrong_name.onnx");
  EXPECT_EQ(o.exit_code, 2) << o.err;
  EXPECT_NE(o.err.find("its input is named 'input_ids', not 'x'"), std::string::npos) << o.err;
  EXPECT_NE(o.err.find("the model's inputs: input_ids f32 [batch,seq,20]"), std::string::npos) << o.err;
  o = replay("wide.onnx");
  EXPECT_EQ(o.exit_code, 2) << o.err;
  EXPECT_NE(o.err.find("it takes F = 32 features, the pipeline has 20"), std::string::npos) << o.err;
  o = replay("two_columns.onnx");
  EXPECT_EQ(o.exit_code, 2) << o.err;
  EXPECT_NE(o.err.find("its output prob is [batch,2]"), std::string::npos) << o.err;
  o = replay("good.onnx");
  EXPECT_EQ(o.exit_code, 0) << o.err;
}

// A PyTorch model exported as a user would: `build` writes the model manifest into the plan,
// `inspect` prints it, the server checks it against the pipeline at load (expected vs actual),
// and a model that outputs logits is refused at warm-up.
TEST(ModelContractCli, TheManifestTravelsInThePlanAndLogitsAreRefused) {
  const auto goog = lobster_file("GOOG", "message", 10);
  TS_REQUIRE_DATA(goog);
  const auto dir = scratch_dir("model_manifest_cli");
  const std::string make = "/usr/bin/python3 " + std::string(TICKSENTRY_SOURCE_DIR) +
                           "/tests/e2e/export_torch_models.py " + dir.string();
  ASSERT_EQ(std::system(make.c_str()), 0) << make;
  auto build = [&](const std::string& onnx, const std::string& plan, std::vector<std::string> extra = {}) {
    std::vector<std::string> args = {"build", "--onnx", onnx, "--saveEngine", plan, "--minShapes", "x:1x60x20",
                                     "--optShapes", "x:8x60x20", "--maxShapes", "x:64x60x20"};
    args.insert(args.end(), extra.begin(), extra.end());
    return run_bin(args, dir);
  };
  auto replay = [&](const std::string& model) {
    return run_bin({"replay", "--format", "lobster", goog.string(), "--model", model, "--no-stdout", "--http", "off",
                    "--jsonl", "", "--audit-db", "", "--to", "09:31"},
                   dir);
  };
  auto o = build("torch_prob.onnx", "prob.plan", {"--threshold", "0.42"});
  ASSERT_EQ(o.exit_code, 0) << o.err;
  // T is the one the plan accepts (its profiles fix 60), not the ONNX's symbolic "seq".
  const std::string line = "manifest: input x [batch, 60, 20]; output prob [batch, 1], probability in column 0; "
                           "evaluated at threshold 0.42";
  EXPECT_NE(o.out.find(line), std::string::npos) << o.out;
  o = run_bin({"inspect", "prob.plan"}, dir);
  ASSERT_EQ(o.exit_code, 0) << o.err;
  EXPECT_NE(o.out.find(line), std::string::npos) << o.out;
  EXPECT_NE(o.out.find("manifest features: ret_1s_bps, ret_10s_bps, ret_60s_bps"), std::string::npos) << o.out;
  o = replay("prob.plan");
  EXPECT_EQ(o.exit_code, 0) << o.err;

  // A manifest whose feature order is not the pipeline's: built as asked, refused at load.
  {
    nlohmann::json names = nlohmann::json::array();
    for (int i = 0; i < kFeatureCount; ++i) names.push_back(feature_name(i));
    std::swap(names[0], names[1]);
    std::ofstream(dir / "shuffled.json") << nlohmann::json{{"features", names}, {"name", "torch_prob"}}.dump();
  }
  o = build("torch_prob.onnx", "shuffled.plan", {"--manifest", "shuffled.json"});
  ASSERT_EQ(o.exit_code, 0) << o.err;
  o = replay("shuffled.plan");
  EXPECT_EQ(o.exit_code, 2) << o.err;
  EXPECT_NE(o.err.find("model shuffled.plan: its manifest does not match the pipeline: expected feature 0 to be "
                       "ret_1s_bps (features/feature_set.h order), the manifest has ret_10s_bps"),
            std::string::npos)
      << o.err;

  // Manifest files with a mistake are refused by build, naming it.
  std::ofstream(dir / "typo.json") << R"({"treshold": 0.4})";
  o = build("torch_prob.onnx", "typo.plan", {"--manifest", "typo.json"});
  EXPECT_EQ(o.exit_code, 2);
  EXPECT_NE(o.err.find("manifest typo.json: unknown key 'treshold' (valid: input, window_rows, features"),
            std::string::npos)
      << o.err;
  std::ofstream(dir / "input.json") << R"({"input": "input_ids"})";
  o = build("torch_prob.onnx", "input.plan", {"--manifest", "input.json"});
  EXPECT_EQ(o.exit_code, 2);
  EXPECT_NE(o.err.find("manifest input.json: names input 'input_ids'; the model's inputs: x"), std::string::npos) << o.err;
  // <model>.manifest.json beside the ONNX is read without a flag.
  std::ofstream(dir / "torch_prob.manifest.json") << R"({"threshold": 0.37, "name": "desk-gru", "version": "7"})";
  o = build("torch_prob.onnx", "beside.plan");
  ASSERT_EQ(o.exit_code, 0) << o.err;
  EXPECT_NE(o.out.find("evaluated at threshold 0.37; model desk-gru 7"), std::string::npos) << o.out;
  o = build("torch_prob.onnx", "none.plan", {"--noManifest"});
  ASSERT_EQ(o.exit_code, 0) << o.err;
  EXPECT_NE(o.out.find("no model manifest (--noManifest)"), std::string::npos) << o.out;
  o = run_bin({"inspect", "none.plan"}, dir);
  EXPECT_NE(o.out.find("manifest: none"), std::string::npos) << o.out;
  EXPECT_EQ(replay("none.plan").exit_code, 0) << "a plan without a manifest loads as before";

  // Logits: every shape fits, the values are not probabilities.
  o = replay("torch_logits.onnx");
  EXPECT_EQ(o.exit_code, 2) << o.err;
  EXPECT_NE(o.err.find("warm-up: output prob is not a probability on the warm-up batch: "), std::string::npos) << o.err;
  EXPECT_NE(o.err.find(" values outside [0, 1] (min -"), std::string::npos) << o.err;

  // A plan built for windows of 30 rows says so in its manifest and is refused by a pipeline of
  // 60 ([model] window_rows), with both values; a manifest T the plan cannot run is a build error.
  o = run_bin({"build", "--onnx", "torch_prob.onnx", "--saveEngine", "t30.plan", "--minShapes", "x:1x30x20", "--optShapes",
               "x:8x30x20", "--maxShapes", "x:64x30x20"},
              dir);
  ASSERT_EQ(o.exit_code, 0) << o.err;
  EXPECT_NE(o.out.find("manifest: input x [batch, 30, 20]"), std::string::npos) << o.out;
  o = replay("t30.plan");
  EXPECT_EQ(o.exit_code, 2) << o.err;
  EXPECT_NE(o.err.find("model t30.plan: its manifest does not match the pipeline: expected windows of T = 60 rows "
                       "([model] window_rows), the manifest has T = 30"),
            std::string::npos)
      << o.err;
  std::ofstream(dir / "t45.json") << R"({"window_rows": 45})";
  o = build("torch_prob.onnx", "t45.plan", {"--manifest", "t45.json"});
  EXPECT_EQ(o.exit_code, 2) << o.out;
  EXPECT_NE(o.err.find("manifest: window_rows (T) is 45, the plan accepts T = 60"), std::string::npos) << o.err;
  EXPECT_FALSE(std::filesystem::exists(dir / "t45.plan"));
}

// The model alerts of a replay: (exchange time ns, probability), in file order.
std::vector<std::pair<std::string, double>> model_alerts(const std::filesystem::path& jsonl) {
  std::vector<std::pair<std::string, double>> out;
  std::ifstream in(jsonl);
  for (std::string line; std::getline(in, line);) {
    const auto j = nlohmann::json::parse(line);
    if (j.at("type") == "model") out.emplace_back(j.at("exch_ts_ns").get<std::string>(), j.at("model").at("probability").get<double>());
  }
  return out;
}

// A softmax head whose event probability is column 1 of 2, served from a plan built with
// --probabilityColumn 1 and from the ONNX with its manifest beside it: the same model alerts,
// at the same times and probabilities, as the same weights exported as that column alone.
TEST(ModelContractCli, TheDecisionReadsTheManifestsProbabilityColumn) {
  const auto goog = lobster_file("GOOG", "message", 10);
  TS_REQUIRE_DATA(goog);
  const auto dir = scratch_dir("model_column_cli");
  const std::string make = "/usr/bin/python3 " + std::string(TICKSENTRY_SOURCE_DIR) +
                           "/tests/e2e/export_torch_models.py " + dir.string();
  ASSERT_EQ(std::system(make.c_str()), 0) << make;
  auto replay = [&](const std::string& model, const std::string& jsonl) {
    return run_bin({"replay", "--format", "lobster", goog.string(), "--model", model, "--no-stdout", "--http", "off",
                    "--jsonl", jsonl, "--audit-db", "", "--to", "09:45"},
                   dir);
  };
  auto o = replay("torch_class1.onnx", "class1.jsonl");
  ASSERT_EQ(o.exit_code, 0) << o.err;
  const auto want = model_alerts(dir / "class1.jsonl");
  ASSERT_GE(want.size(), 3u) << "the reference model must alert for the comparison to mean something";

  o = run_bin({"build", "--onnx", "torch_two_class.onnx", "--saveEngine", "two.plan", "--minShapes", "x:1x60x20",
               "--optShapes", "x:8x60x20", "--maxShapes", "x:64x60x20", "--probabilityColumn", "1"},
              dir);
  ASSERT_EQ(o.exit_code, 0) << o.err;
  EXPECT_NE(o.out.find("output prob [batch, 2], probability in column 1"), std::string::npos) << o.out;
  auto same = [&](const std::string& jsonl) {
    const auto got = model_alerts(dir / jsonl);
    ASSERT_EQ(got.size(), want.size()) << jsonl;
    for (size_t i = 0; i < got.size(); ++i) {
      EXPECT_EQ(got[i].first, want[i].first) << jsonl << " alert " << i;
      EXPECT_NEAR(got[i].second, want[i].second, 1e-5) << jsonl << " alert " << i;
    }
  };
  o = replay("two.plan", "plan.jsonl");
  ASSERT_EQ(o.exit_code, 0) << o.err;
  same("plan.jsonl");

  // The ONNX alone does not say which column is the probability: refused, naming the fix.
  o = replay("torch_two_class.onnx", "none.jsonl");
  EXPECT_EQ(o.exit_code, 2) << o.err;
  EXPECT_NE(o.err.find("its output prob is [batch,2] and nothing says which column is the probability"),
            std::string::npos)
      << o.err;
  // With the manifest beside it, it serves column 1.
  std::ofstream(dir / "torch_two_class.manifest.json") << R"({"probability_column": 1})";
  o = replay("torch_two_class.onnx", "onnx.jsonl");
  ASSERT_EQ(o.exit_code, 0) << o.err;
  same("onnx.jsonl");
  // Column 0 (the complement) is a different model: not the same alerts.
  o = run_bin({"build", "--onnx", "torch_two_class.onnx", "--saveEngine", "col0.plan", "--minShapes", "x:1x60x20",
               "--maxShapes", "x:64x60x20", "--probabilityColumn", "0"},
              dir);
  ASSERT_EQ(o.exit_code, 0) << o.err;
  o = replay("col0.plan", "col0.jsonl");
  ASSERT_EQ(o.exit_code, 0) << o.err;
  EXPECT_NE(model_alerts(dir / "col0.jsonl"), want);
  // A column the output does not have is refused by build.
  o = run_bin({"build", "--onnx", "torch_two_class.onnx", "--saveEngine", "col2.plan", "--probabilityColumn", "2"}, dir);
  EXPECT_EQ(o.exit_code, 2);
  EXPECT_NE(o.err.find("probability_column 2 is outside the output's 2 columns"), std::string::npos) << o.err;
}

}  // namespace
}  // namespace ts::testing
