#include "core/input_errors.h"

#include "core/log.h"

namespace ts {

const char* input_error_name(InputError kind) {
  switch (kind) {
    case InputError::kMalformedLine: return "malformed_line";
    case InputError::kWrongColumnCount: return "wrong_column_count";
    case InputError::kUnknownSymbol: return "unknown_symbol";
    case InputError::kNotANumber: return "not_a_number";
    case InputError::kBadPrice: return "bad_price";
    case InputError::kBadSize: return "bad_size";
    case InputError::kCrossedBook: return "crossed_book";
    case InputError::kOutOfOrder: return "out_of_order";
    case InputError::kTruncatedFile: return "truncated_file";
    case InputError::kBinaryGarbage: return "binary_garbage";
    case InputError::kUnknownOrder: return "unknown_order";
    case InputError::kEmptyFile: return "empty_file";
    case InputError::kCount: break;
  }
  return "unknown";
}

namespace {
bool should_log(uint64_t n) {  // n is the 1-based count of this kind
  if (n <= InputErrors::kLogFirst) return true;
  while (n % 10 == 0) n /= 10;
  return n == 1;
}
}  // namespace

void InputErrors::report(InputError kind, std::string_view file, uint64_t line, std::string_view detail) {
  const uint64_t n = ++counts_[static_cast<size_t>(kind)];
  if (quiet_ || !should_log(n)) return;
  spdlog::warn("{}:{}: {}: {}{}", file, line, input_error_name(kind), detail,
               n == kLogFirst ? " (further reports of this kind are sampled)" : "");
}

uint64_t InputErrors::total() const {
  uint64_t t = 0;
  for (auto c : counts_) t += c;
  return t;
}

std::map<std::string, uint64_t> InputErrors::by_kind() const {
  std::map<std::string, uint64_t> m;
  for (size_t i = 0; i < kInputErrorCount; ++i) {
    if (counts_[i]) m[input_error_name(static_cast<InputError>(i))] = counts_[i];
  }
  return m;
}

void InputErrors::merge(const InputErrors& other) {
  for (size_t i = 0; i < kInputErrorCount; ++i) counts_[i] += other.counts_[i];
}

}  // namespace ts
