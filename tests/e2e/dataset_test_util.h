#pragma once
// Helpers of the dataset export and eval CLI tests: run the binary (TICKSENTRY_BIN), read JSON
// and .npy files.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "engine/npy.h"

namespace ts::testing {

struct Outcome {
  int exit_code = -1;
  std::string out, err;
};

inline Outcome run_bin(const std::vector<std::string>& args, const std::filesystem::path& dir) {
  const std::filesystem::path out_file = dir / "stdout.txt", err_file = dir / "stderr.txt";
  pid_t pid = fork();
  if (pid == 0) {
    if (!freopen(out_file.c_str(), "w", stdout) || !freopen(err_file.c_str(), "w", stderr)) _exit(99);
    if (chdir(dir.c_str()) != 0) _exit(98);
    std::vector<char*> argv;
    argv.push_back(const_cast<char*>(TICKSENTRY_BIN));
    for (auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    execv(TICKSENTRY_BIN, argv.data());
    _exit(97);
  }
  int status = 0;
  waitpid(pid, &status, 0);
  Outcome o;
  o.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  std::ifstream fo(out_file), fe(err_file);
  o.out.assign(std::istreambuf_iterator<char>(fo), {});
  o.err.assign(std::istreambuf_iterator<char>(fe), {});
  return o;
}

inline nlohmann::json read_json(const std::filesystem::path& p) {
  std::ifstream f(p);
  return nlohmann::json::parse(f);
}

inline engine::HostTensor npy(const std::filesystem::path& p) {
  auto t = engine::npy_read(p.string());
  EXPECT_TRUE(t.is_ok()) << t.status().to_string();
  return t.is_ok() ? std::move(t).value() : engine::HostTensor{};
}

}  // namespace ts::testing
