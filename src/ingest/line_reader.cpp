#include "ingest/line_reader.h"

#include <libdeflate.h>
#include <zlib.h>

#if defined(__AVX2__)
#include <immintrin.h>
#endif

#include <algorithm>
#include <climits>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <utility>

#include "ingest/field_parse.h"

namespace ts::ingest {

namespace {

// PERF NOTE: one pass over the line's bytes. With AVX2, 32 bytes a step and the last 32 bytes
// loaded again (overlapping) instead of a byte loop for the tail: the compiler's vectorized loop
// left up to 31 bytes to a scalar loop, ~900 instructions per 663-byte SZSE row (callgrind).
bool contains_garbage(const char* p, size_t n) {
#if defined(__AVX2__)
  if (n >= 32) {
    const __m256i below_space = _mm256_set1_epi8(0x1f), tab = _mm256_set1_epi8('\t'), cr = _mm256_set1_epi8('\r'),
                  del = _mm256_set1_epi8(0x7f);
    auto bad = [&](const char* at) {
      const __m256i v = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(at));
      const __m256i control = _mm256_cmpeq_epi8(_mm256_min_epu8(v, below_space), v);  // c <= 0x1f
      const __m256i allowed = _mm256_or_si256(_mm256_cmpeq_epi8(v, tab), _mm256_cmpeq_epi8(v, cr));
      return _mm256_or_si256(_mm256_andnot_si256(allowed, control), _mm256_cmpeq_epi8(v, del));
    };
    __m256i acc = bad(p + n - 32);
    for (size_t i = 0; i + 32 <= n; i += 32) acc = _mm256_or_si256(acc, bad(p + i));
    return _mm256_movemask_epi8(acc) != 0;
  }
#endif
  unsigned bad = 0;
  for (size_t i = 0; i < n; ++i) {
    const auto c = static_cast<unsigned char>(p[i]);
    bad |= static_cast<unsigned>((c < 0x20 && c != '\t' && c != '\r') | (c == 0x7f));
  }
  return bad != 0;
}

}  // namespace

// The gzip decoder state: one z_stream reused for every member (inflateReset between them).
//
// PERF NOTE: where the whole compressed input is in memory (open_memory(), or a regular file of
// at most kWholeInputBytes read at once by open()), each member is first inflated in one call by
// libdeflate straight into the line buffer: about 3x zlib's inflate (szse-l2's 13.9 MB day:
// bench/results/ingest-decode-cpu2-20261202-fd4.json). libdeflate decodes whole members only
// and says nothing of where a bad one goes wrong, so a member it does not accept (corrupt, cut
// off, a header CRC that zlib checks and it skips, larger than kFastMemberBytes) is decoded
// again by zlib from the member's first byte: the lines and reports of a bad file are zlib's.
struct LineReader::Gzip {
  z_stream zs{};
  static constexpr size_t kInBytes = 128 * 1024;
  std::unique_ptr<unsigned char[]> in;  // streamed input only; uninitialized: filled by fread
  uint64_t consumed_before = 0;  // compressed bytes before base (offsets in reports)
  const unsigned char* base = nullptr;  // in.get(), or the start of the whole input
  // The whole compressed input (null when streamed from a file): from open_memory(), or `owned`.
  const unsigned char* all = nullptr;
  size_t all_size = 0;
  std::unique_ptr<unsigned char[]> owned;
  libdeflate_decompressor* fast = nullptr;  // with `all` only
  size_t member_guess = 0;       // output room the next member is first tried with (bytes)
  bool grow = false;             // the member needs more room than was given: refill() grows it
  uint64_t member = 0;           // 1-based index of the member being (or last) decoded
  bool in_member = false;        // between a member's header and its end
  bool resyncing = false;        // after a corrupt member, until a member ends cleanly
  bool input_eof = false;
  bool cut_line = false;        // a fault cut the line being assembled (refill() trims it)
  ~Gzip() {
    inflateEnd(&zs);
    if (fast != nullptr) libdeflate_free_decompressor(fast);
  }
  uint64_t offset() const { return consumed_before + uint64_t(zs.next_in - base); }
  size_t left_in_all() const { return all_size - size_t(zs.next_in - all); }
  // With the whole input: zlib's window is everything from next_in on (zlib counts in uInt).
  void window_to_end() { zs.avail_in = static_cast<uInt>(std::min<size_t>(left_in_all(), UINT_MAX)); }
};

namespace {

// Compressed inputs up to this size are read whole by open() (fast path); larger ones stream
// through zlib in 128 KiB steps as before. The two caps bound what the fast path holds in memory
// (the compressed file and one member's text, 320 MiB at most, against ~0.4 MiB streamed): the
// real datasets are at most 3 MB compressed and 35 MB of text.
constexpr size_t kWholeInputBytes = size_t(64) << 20;
// The most output room one member is inflated into at once; a larger member goes to zlib.
constexpr size_t kFastMemberBytes = size_t(256) << 20;
constexpr size_t kMinMemberGuess = 4096;

// The first output room to try: the last member's ISIZE (the whole output of a single-member
// file; a bgzip block's size), within [kMinMemberGuess, kFastMemberBytes].
size_t first_member_guess(const unsigned char* all, size_t n) {
  if (n < 18) return kMinMemberGuess;
  const unsigned char* t = all + n - 4;
  const size_t isize = size_t(t[0]) | size_t(t[1]) << 8 | size_t(t[2]) << 16 | size_t(t[3]) << 24;
  // A last member said to be larger than the cap goes to zlib at once (member_guess above the
  // cap) rather than after inflating 256 MiB in vain.
  return isize + 1 > kFastMemberBytes ? kFastMemberBytes + 1 : std::max(isize + 1, kMinMemberGuess);
}

}  // namespace

Result<std::unique_ptr<LineReader>> LineReader::open(const std::string& path, InputErrors& errors) {
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) return Status(StatusCode::kNotFound, "no such file: " + path);
  if (std::filesystem::is_directory(path, ec)) {
    return Status(StatusCode::kInvalidArgument, "is a directory, not a file: " + path);
  }
  std::FILE* f = std::fopen(path.c_str(), "rb");
  if (f == nullptr) {
    return Status(StatusCode::kIoError, "cannot open " + path + ": " + std::strerror(errno));
  }
  // gzip or plain, by the magic bytes (as gzopen decides).
  unsigned char magic[2] = {0, 0};
  const size_t got = std::fread(magic, 1, 2, f);
  const bool gzip = got == 2 && magic[0] == 0x1f && magic[1] == 0x8b;
  std::rewind(f);
  if (gzip) {
    // A regular file of at most kWholeInputBytes is read at once: its members then take the
    // fast path (Gzip's PERF NOTE). A short read (the file shrank) streams it instead.
    std::unique_ptr<unsigned char[]> whole;
    const uintmax_t size = std::filesystem::is_regular_file(path, ec) ? std::filesystem::file_size(path, ec) : 0;
    if (!ec && size >= 2 && size <= kWholeInputBytes) {
      whole.reset(new unsigned char[size_t(size)]);
      if (std::fread(whole.get(), 1, size_t(size), f) == size_t(size) && std::fgetc(f) == EOF) {
        std::fclose(f);
        const std::string_view bytes(reinterpret_cast<const char*>(whole.get()), size_t(size));
        std::unique_ptr<LineReader> r(new LineReader(path, nullptr, bytes, true, errors));
        r->gz_->owned = std::move(whole);
        if (inflateInit2(&r->gz_->zs, 15 + 16) != Z_OK) {
          return Status(StatusCode::kInternal, "zlib: inflateInit2 failed for " + path);
        }
        return r;
      }
      std::rewind(f);
    }
  }
  std::unique_ptr<LineReader> r(new LineReader(path, f, {}, gzip, errors));
  if (gzip && inflateInit2(&r->gz_->zs, 15 + 16) != Z_OK) {
    return Status(StatusCode::kInternal, "zlib: inflateInit2 failed for " + path);
  }
  return r;
}

std::unique_ptr<LineReader> LineReader::open_memory(std::string_view bytes, std::string name, InputErrors& errors) {
  const bool gzip = bytes.size() >= 2 && bytes[0] == '\x1f' && bytes[1] == '\x8b';
  std::unique_ptr<LineReader> r(new LineReader(std::move(name), nullptr, bytes, gzip, errors));
  // inflateInit2 fails only when zlib cannot allocate its state; then every read reports a
  // corrupt member, which is what a caller of an in-memory reader (a fuzz target) can check.
  if (gzip) (void)inflateInit2(&r->gz_->zs, 15 + 16);
  return r;
}

LineReader::LineReader(std::string path, std::FILE* file, std::string_view memory, bool gzip, InputErrors& errors)
    : path_(std::move(path)), file_(file), memory_(memory), gz_(gzip ? std::make_unique<Gzip>() : nullptr),
      errors_(errors),
      // PERF NOTE: an in-memory reader of a small input takes a buffer of its size (at least
      // 4 KiB): the fuzz targets open readers per input, and a 256 KiB block per reader was
      // mapped and unmapped each time under ASan. Lines longer than the buffer grow it, as
      // for files; the lines are the same for any buffer size (line_reader_fuzz checks it).
      cap_(file != nullptr ? kBufferBytes : std::clamp(memory.size() + 1, size_t{4096}, kBufferBytes)) {
  buf_.reset(new char[cap_]);
  if (!gz_) return;
  Gzip& g = *gz_;
  if (file == nullptr) {  // the whole input is in memory: zlib reads it in place, no copy
    g.all = reinterpret_cast<const unsigned char*>(memory.data());
    g.all_size = memory.size();
    g.base = g.all;
    g.fast = libdeflate_alloc_decompressor();  // null (no memory): every member goes to zlib
    g.member_guess = first_member_guess(g.all, g.all_size);
    memory_ = {};
  } else {
    g.in.reset(new unsigned char[Gzip::kInBytes]);
    g.base = g.in.get();
  }
  g.zs.next_in = const_cast<unsigned char*>(g.base);
  g.zs.avail_in = 0;
}

size_t LineReader::read_input(void* out, size_t room) {
  if (file_ != nullptr) return std::fread(out, 1, room, file_);
  const size_t n = std::min(room, memory_.size());
  if (n > 0) std::memcpy(out, memory_.data(), n);
  memory_.remove_prefix(n);
  return n;
}

LineReader::~LineReader() {
  if (file_ != nullptr) std::fclose(file_);
}

std::string_view LineReader::file_name() const { return base_name(path_); }

void LineReader::report_fault(const std::string& what) {
  truncated_ = true;
  errors_.report(InputError::kTruncatedFile, file_name(), number_ + 1, what);
}

void LineReader::drop_partial_line() {
  size_t keep = end_;
  while (keep > begin_ && buf_[keep - 1] != '\n') --keep;
  end_ = keep;
}

bool LineReader::fill_input() {
  Gzip& g = *gz_;
  if (g.input_eof) return false;
  if (g.all != nullptr) {  // the window already reaches the end, or UINT_MAX bytes past next_in
    if (g.zs.avail_in == g.left_in_all()) {
      g.input_eof = true;
      return false;
    }
    g.window_to_end();
    return true;
  }
  const size_t left = g.zs.avail_in;
  g.consumed_before += uint64_t(g.zs.next_in - g.in.get());
  if (left > 0) std::memmove(g.in.get(), g.zs.next_in, left);
  const size_t n = read_input(g.in.get() + left, Gzip::kInBytes - left);
  g.zs.next_in = g.in.get();
  g.zs.avail_in = static_cast<uInt>(left + n);
  if (n == 0) g.input_eof = true;
  return n > 0;
}

LineReader::FastMember LineReader::inflate_member_fast(char* out, size_t room) {
  Gzip& g = *gz_;
  z_stream& zs = g.zs;
  const size_t left = g.left_in_all();
  // FHCRC: zlib checks the header's CRC-16, libdeflate skips it; such a member goes to zlib.
  if (left < 4 || (zs.next_in[3] & 0x02) != 0 || g.member_guess > kFastMemberBytes) return FastMember::kNotTaken;
  // No member inflates to more than 1,032 times its compressed size (deflate's longest match
  // per shortest code): a small input with a wild ISIZE asks for no more than that.
  const size_t bound = std::min(kFastMemberBytes, left * 1032 + 64);
  g.member_guess = std::min(g.member_guess, bound);
  if (room < g.member_guess) {
    g.grow = true;
    return FastMember::kNeedsRoom;
  }
  size_t in_used = 0, out_used = 0;
  const libdeflate_result r = libdeflate_gzip_decompress_ex(g.fast, zs.next_in, left, out, room, &in_used, &out_used);
  if (r == LIBDEFLATE_INSUFFICIENT_SPACE && room < bound) {  // the room grows each time: this ends
    g.member_guess = std::min(room * 2, bound);
    g.grow = true;
    return FastMember::kNeedsRoom;
  }
  if (r != LIBDEFLATE_SUCCESS) return FastMember::kNotTaken;
  ++g.member;
  g.member_guess = std::max(g.member_guess, out_used + 1);
  zs.next_in += in_used;
  g.window_to_end();
  zs.next_out += out_used;
  zs.avail_out -= static_cast<uInt>(out_used);
  return FastMember::kDone;
}

size_t LineReader::read_gzip(char* out, size_t room) {
  Gzip& g = *gz_;
  z_stream& zs = g.zs;
  zs.next_out = reinterpret_cast<Bytef*>(out);
  zs.avail_out = static_cast<uInt>(room);
  auto produced = [&] { return room - zs.avail_out; };
  g.grow = false;
  while (zs.avail_out > 0) {
    if (!g.in_member) {
      // At a member boundary: the next bytes are another member's header, trailing garbage or
      // nothing. zlib's gzread skips garbage here silently; it is reported instead.
      while (zs.avail_in < 3 && fill_input()) {
      }
      if (zs.avail_in == 0) break;  // clean end of file
      if (zs.avail_in < 3 || zs.next_in[0] != 0x1f || zs.next_in[1] != 0x8b || zs.next_in[2] != 8) {
        if (g.resyncing) {  // inside a corrupt member: look for the next header
          ++zs.next_in;
          --zs.avail_in;
          continue;
        }
        // A damaged member header or trailing garbage: reported once; the bytes are skipped
        // up to the next member header (if any), as after a corrupt member.
        report_fault("bytes at " + std::to_string(g.offset()) + " after gzip member " + std::to_string(g.member) +
                     " are not a gzip member (a damaged member or trailing garbage); skipped to the next "
                     "member header, if any");
        g.resyncing = true;
        continue;
      }
      if (g.fast != nullptr && !g.resyncing) {
        switch (inflate_member_fast(out + produced(), zs.avail_out)) {
          case FastMember::kDone:  // an empty member produced nothing: on to the next one
            if (produced() > 0) return produced();
            continue;
          case FastMember::kNeedsRoom: return produced();  // refill() grows the buffer and asks again
          case FastMember::kNotTaken: break;               // zlib decodes it, from its first byte
        }
      }
      inflateReset(&zs);
      g.in_member = true;
      ++g.member;
    }
    if (zs.avail_in == 0 && !fill_input()) {
      g.in_member = false;
      g.cut_line = true;
      report_fault("compressed stream ends early in gzip member " + std::to_string(g.member) +
                   " (cut off); the partial last line is dropped");
      break;
    }
    const int ret = inflate(&zs, Z_NO_FLUSH);
    const uint64_t at = g.offset();
    if (ret == Z_STREAM_END) {
      g.in_member = false;
      g.resyncing = false;
    } else if (ret != Z_OK && ret != Z_BUF_ERROR) {
      // A corrupt member (or a false header while resyncing): its partial line goes, and the
      // search for the next member starts one byte past where this one failed.
      g.in_member = false;
      g.cut_line = true;
      if (!g.resyncing) {
        report_fault("gzip member " + std::to_string(g.member) + " is corrupt near byte " + std::to_string(at) +
                     " (" + (zs.msg ? zs.msg : "?") + "); its partial last line is dropped, reading resumes at the "
                     "next member");
        g.resyncing = true;
      }
      if (zs.avail_in > 0) {
        ++zs.next_in;
        --zs.avail_in;
      }
      break;  // the caller trims the partial line before more output follows
    }
  }
  return produced();
}

void LineReader::grow_buffer(size_t bytes) {
  if (bytes <= cap_) return;
  std::unique_ptr<char[]> bigger(new char[bytes]);
  std::memcpy(bigger.get(), buf_.get(), end_);
  buf_ = std::move(bigger);
  cap_ = bytes;
}

bool LineReader::refill() {
  if (eof_) return false;
  // Keep the unread tail; grow only for a line longer than the whole buffer.
  if (begin_ > 0) {
    std::memmove(buf_.get(), buf_.get() + begin_, end_ - begin_);
    end_ -= begin_;
    begin_ = 0;
  }
  if (end_ == cap_) grow_buffer(cap_ * 2);  // a line longer than the whole buffer
  size_t n = 0;
  bool cut = false;
  if (gz_) {
    n = read_gzip(buf_.get() + end_, cap_ - end_);
    while (n == 0 && std::exchange(gz_->grow, false)) {  // a whole member wants more room
      grow_buffer(end_ + gz_->member_guess);
      n = read_gzip(buf_.get() + end_, cap_ - end_);
    }
    cut = std::exchange(gz_->cut_line, false);
  } else {
    n = read_input(buf_.get() + end_, cap_ - end_);
    if (n == 0 && file_ != nullptr && std::ferror(file_)) report_fault(std::string("read error: ") + std::strerror(errno));
  }
  end_ += n;
  if (cut) {
    drop_partial_line();
    if (!gz_->input_eof || gz_->zs.avail_in > 0) return true;  // more members may follow
  }
  if (n > 0) return true;
  eof_ = true;
  return false;
}

bool LineReader::next(Line& line) {
  for (;;) {
    const size_t avail = end_ - begin_;
    const char* start = buf_.get() + begin_;
    const auto* nl = static_cast<const char*>(std::memchr(start, '\n', avail));
    size_t len = 0;
    bool unterminated = false;
    if (nl != nullptr) {
      len = static_cast<size_t>(nl - start);
      begin_ += len + 1;
    } else if (!refill()) {
      // refill() moved the unread bytes to the front (and may have dropped a cut line).
      len = end_ - begin_;
      if (len == 0) return false;
      unterminated = true;
      start = buf_.get() + begin_;
      begin_ = end_;
    } else {
      continue;
    }
    if (len > 0 && start[len - 1] == '\r') --len;
    if (number_ == 0 && len >= 3 && std::memcmp(start, "\xEF\xBB\xBF", 3) == 0) {  // UTF-8 BOM
      start += 3;
      len -= 3;
    }
    line.text = std::string_view(start, len);
    line.number = ++number_;
    line.unterminated = unterminated;
    line.has_garbage = contains_garbage(start, len);
    return true;
  }
}

}  // namespace ts::ingest
