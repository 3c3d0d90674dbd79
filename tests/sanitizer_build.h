#pragma once
// How much slower this build runs than a released one, for the tests that assert a speed: under
// AddressSanitizer or ThreadSanitizer (the asan and tsan presets, bench/sanitize.sh) code runs
// several times slower, so those bounds are multiplied by kSanitizerSlowdown rather than skipped
// (RuleGateTest.QuietEventCost measured 1,633 ns per event under ASan+UBSan on the loaded 2-core
// machine against its 1,000 ns bound).
namespace ts::testing {

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)  // gcc
inline constexpr double kSanitizerSlowdown = 10.0;
#elif defined(__has_feature)  // clang
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
inline constexpr double kSanitizerSlowdown = 10.0;
#else
inline constexpr double kSanitizerSlowdown = 1.0;
#endif
#else
inline constexpr double kSanitizerSlowdown = 1.0;
#endif

}  // namespace ts::testing
