#include "metrics_file.h"

#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <set>
#include <string_view>

#include "tandem/core/error.h"

namespace tandem::cli {
namespace {

// Deeper than this, a value in a record is refused rather than skipped: the
// skipping recurses, and no metrics field nests at all.
constexpr int kMaxNesting = 32;

bool is_digit(char c) { return c >= '0' && c <= '9'; }

// Thrown by LineParser with the 0-based offset; read_metrics_file names the
// file and line.
struct LineError {
  size_t offset;
  std::string problem;
};

// One line's object, by RFC 8259 (the tandem io layer's reader is private
// to the library; this one needs only flat objects and keeps their numbers).
class LineParser {
 public:
  explicit LineParser(std::string_view text) : text_(text) {}

  std::map<std::string, double> record() {
    std::map<std::string, double> numbers;
    skip_whitespace();
    expect('{', "a record starts with '{'");
    skip_whitespace();
    if (!consume('}')) {
      do {
        skip_whitespace();
        const size_t key_at = pos_;
        if (peek() != '"') fail("expected a field name in double quotes");
        const std::string key = string();
        if (!seen_.insert(key).second)
          fail_at(key_at, "field \"" + key + "\" appears twice");
        skip_whitespace();
        expect(':', "expected ':' after the field name");
        skip_whitespace();
        if (std::optional<double> x = top_level_value()) numbers[key] = *x;
        skip_whitespace();
      } while (consume(','));
      expect('}', "expected ',' or '}' after a value");
    }
    skip_whitespace();
    if (pos_ < text_.size()) fail("expected the end of the line after the record's '}'");
    return numbers;
  }

 private:
  [[noreturn]] void fail(const std::string& problem) const { fail_at(pos_, problem); }
  [[noreturn]] void fail_at(size_t offset, const std::string& problem) const {
    throw LineError{offset, problem};
  }
  char peek() const { return pos_ < text_.size() ? text_[pos_] : '\0'; }
  bool consume(char c) {
    if (peek() != c) return false;
    ++pos_;
    return true;
  }
  void expect(char c, const char* problem) {
    if (!consume(c)) fail(problem);
  }
  void skip_whitespace() {
    while (pos_ < text_.size() && std::strchr(" \t\r\n", text_[pos_]) != nullptr) ++pos_;
  }

  // A number's value, NaN for null, nullopt for what is skipped.
  std::optional<double> top_level_value() {
    const char c = peek();
    if (c == '-' || is_digit(c)) return number();
    if (c == 'n' && literal("null")) return std::numeric_limits<double>::quiet_NaN();
    skip_value(/*depth=*/1);
    return std::nullopt;
  }

  void skip_value(int depth) {
    if (depth > kMaxNesting)
      fail("values nest deeper than " + std::to_string(kMaxNesting) + " levels");
    const char c = peek();
    if (c == '"') {
      string();
    } else if (c == '-' || is_digit(c)) {
      number();
    } else if (c == '{' || c == '[') {
      container(depth);
    } else if (!literal("true") && !literal("false") && !literal("null")) {
      fail(c == '\0' ? "the line ends where a value belongs"
                     : "expected a value (a number, string, true, false, null, "
                       "array or object)");
    }
  }

  void container(int depth) {
    const bool object = text_[pos_++] == '{';
    const char close = object ? '}' : ']';
    skip_whitespace();
    if (consume(close)) return;
    do {
      skip_whitespace();
      if (object) {
        if (peek() != '"') fail("expected a field name in double quotes");
        string();
        skip_whitespace();
        expect(':', "expected ':' after the field name");
        skip_whitespace();
      }
      skip_value(depth + 1);
      skip_whitespace();
    } while (consume(','));
    expect(close,
           object ? "expected ',' or '}' after a value"
                  : "expected ',' or ']' after a value");
  }

  bool literal(std::string_view word) {
    if (text_.substr(pos_, word.size()) != word) return false;
    pos_ += word.size();
    return true;
  }

  double number() {
    const size_t start = pos_;
    consume('-');
    if (consume('0')) {
      if (is_digit(peek())) fail_at(start, "a number has a leading zero");
    } else if (!digits()) {
      fail("expected a digit");
    }
    if (consume('.') && !digits()) fail("expected a digit after the decimal point");
    if (consume('e') || consume('E')) {
      if (!consume('+')) consume('-');
      if (!digits()) fail("expected a digit in the exponent");
    }
    double value = 0;
    const auto [end, ec] =
        std::from_chars(text_.data() + start, text_.data() + pos_, value);
    if (ec != std::errc() || end != text_.data() + pos_)
      fail_at(start, "the number is out of range");
    return value;
  }

  bool digits() {
    const size_t start = pos_;
    while (is_digit(peek())) ++pos_;
    return pos_ > start;
  }

  std::string string() {
    ++pos_;  // the opening quote
    std::string out;
    while (true) {
      if (pos_ >= text_.size()) fail("the line ends inside a string");
      const char c = text_[pos_];
      if (c == '"') break;
      if (static_cast<unsigned char>(c) < 0x20)
        fail("a control character in a string (escape it)");
      ++pos_;
      if (c != '\\') {
        out += c;
        continue;
      }
      const char e = peek();
      const char* from = "\"\\/bfnrt";
      const char* to = "\"\\/\b\f\n\r\t";
      if (e != '\0' && std::strchr(from, e) != nullptr) {
        out += to[std::strchr(from, e) - from];
        ++pos_;
      } else if (e == 'u') {
        ++pos_;
        append_utf8(out, code_point());
      } else {
        fail("an unknown escape in a string");
      }
    }
    ++pos_;
    return out;
  }

  // After "\u": the code point of one escape, or of a surrogate pair.
  unsigned code_point() {
    const unsigned first = hex4();
    if (first >= 0xDC00 && first <= 0xDFFF) fail("a lone low surrogate in a \\u escape");
    if (first < 0xD800 || first > 0xDBFF) return first;
    if (!literal("\\u")) fail("a high surrogate without its low half");
    const unsigned second = hex4();
    if (second < 0xDC00 || second > 0xDFFF) fail("a high surrogate without its low half");
    return 0x10000 + ((first - 0xD800) << 10) + (second - 0xDC00);
  }

  unsigned hex4() {
    unsigned value = 0;
    for (int i = 0; i < 4; ++i, ++pos_) {
      const char c = peek();
      const int digit = is_digit(c)              ? c - '0'
                        : (c >= 'a' && c <= 'f') ? c - 'a' + 10
                        : (c >= 'A' && c <= 'F') ? c - 'A' + 10
                                                 : -1;
      if (digit < 0) fail("expected four hex digits after \\u");
      value = value * 16 + static_cast<unsigned>(digit);
    }
    return value;
  }

  static void append_utf8(std::string& out, unsigned cp) {
    auto byte = [&out](unsigned b) { out += static_cast<char>(b); };
    if (cp < 0x80) {
      byte(cp);
    } else if (cp < 0x800) {
      byte(0xC0 | (cp >> 6));
      byte(0x80 | (cp & 0x3F));
    } else if (cp < 0x10000) {
      byte(0xE0 | (cp >> 12));
      byte(0x80 | ((cp >> 6) & 0x3F));
      byte(0x80 | (cp & 0x3F));
    } else {
      byte(0xF0 | (cp >> 18));
      byte(0x80 | ((cp >> 12) & 0x3F));
      byte(0x80 | ((cp >> 6) & 0x3F));
      byte(0x80 | (cp & 0x3F));
    }
  }

  std::string_view text_;
  size_t pos_ = 0;
  std::set<std::string> seen_;
};

}  // namespace

std::optional<double> MetricsRecord::number(const std::string& field) const {
  auto it = numbers.find(field);
  if (it == numbers.end()) return std::nullopt;
  return it->second;
}

bool MetricsRecord::is_step() const {
  return has("step") && !has("test_loss") && !has("test_accuracy");
}

bool MetricsRecord::is_epoch() const { return has("epoch") && !is_step(); }

MetricsFile read_metrics_file(const std::string& path) {
  std::error_code ignored;
  if (std::filesystem::is_directory(path, ignored))
    throw Error("cannot read the metrics file '" + path + "': it is a folder");
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    const int reason = errno;
    throw Error("cannot read the metrics file '" + path + "': " + std::strerror(reason));
  }
  MetricsFile file{path, {}};
  std::string text;
  for (int64_t line = 1; std::getline(in, text); ++line) {
    if (text.find_first_not_of(" \t\r") == std::string::npos) continue;
    try {
      file.records.push_back({line, LineParser(text).record()});
    } catch (const LineError& e) {
      throw Error("metrics file '" + path + "' line " + std::to_string(line) +
                  ", column " + std::to_string(e.offset + 1) + ": " + e.problem +
                  " (each line must be one JSON object, as tandem train --metrics "
                  "writes)");
    }
  }
  if (in.bad()) {
    throw Error("cannot read the metrics file '" + path + "': " + std::strerror(errno));
  }
  if (file.records.empty()) {
    throw Error("the metrics file '" + path +
                "' holds no records (tandem train --metrics FILE writes one JSON "
                "object per epoch)");
  }
  return file;
}

}  // namespace tandem::cli
