#include "io/json_reader.h"

#include <cstdint>

namespace tandem::io::detail {

namespace {

bool is_digit(char c) { return c >= '0' && c <= '9'; }

std::string printable(char c) {
  auto byte = static_cast<unsigned char>(c);
  if (byte >= 0x20 && byte < 0x7f) return tandem::detail::str("'", c, "'");
  static constexpr char kHex[] = "0123456789abcdef";
  return tandem::detail::str("byte 0x", kHex[byte >> 4], kHex[byte & 0xf]);
}

void append_utf8(std::string& out, uint32_t code_point) {
  if (code_point < 0x80) {
    out += static_cast<char>(code_point);
  } else if (code_point < 0x800) {
    out += static_cast<char>(0xc0 | (code_point >> 6));
    out += static_cast<char>(0x80 | (code_point & 0x3f));
  } else if (code_point < 0x10000) {
    out += static_cast<char>(0xe0 | (code_point >> 12));
    out += static_cast<char>(0x80 | ((code_point >> 6) & 0x3f));
    out += static_cast<char>(0x80 | (code_point & 0x3f));
  } else {
    out += static_cast<char>(0xf0 | (code_point >> 18));
    out += static_cast<char>(0x80 | ((code_point >> 12) & 0x3f));
    out += static_cast<char>(0x80 | ((code_point >> 6) & 0x3f));
    out += static_cast<char>(0x80 | (code_point & 0x3f));
  }
}

}  // namespace

JsonSyntaxError::JsonSyntaxError(size_t offset, const std::string& problem)
    : Error(tandem::detail::str("invalid JSON at byte ", offset, ": ", problem)),
      offset_(offset) {}

std::string_view describe(JsonKind kind) {
  switch (kind) {
    case JsonKind::kObject:
      return "an object";
    case JsonKind::kArray:
      return "an array";
    case JsonKind::kString:
      return "a string";
    case JsonKind::kNumber:
      return "a number";
    case JsonKind::kTrue:
    case JsonKind::kFalse:
      return "a boolean";
    case JsonKind::kNull:
      return "null";
  }
  return "a value";
}

void JsonReader::fail(const std::string& problem) const {
  throw JsonSyntaxError(pos_, problem);
}

void JsonReader::skip_whitespace() {
  while (pos_ < text_.size()) {
    char c = text_[pos_];
    if (c != ' ' && c != '\t' && c != '\n' && c != '\r') return;
    ++pos_;
  }
}

void JsonReader::expect(char c, const char* context) {
  skip_whitespace();
  if (pos_ >= text_.size())
    fail(tandem::detail::str("expected '", c, "' ", context, ", got the end"));
  if (text_[pos_] != c) {
    fail(tandem::detail::str(
        "expected '", c, "' ", context, ", got ", printable(text_[pos_])));
  }
  ++pos_;
}

JsonKind JsonReader::peek() {
  skip_whitespace();
  if (pos_ >= text_.size()) fail("expected a value, got the end");
  char c = text_[pos_];
  switch (c) {
    case '{':
      return JsonKind::kObject;
    case '[':
      return JsonKind::kArray;
    case '"':
      return JsonKind::kString;
    case 't':
      return JsonKind::kTrue;
    case 'f':
      return JsonKind::kFalse;
    case 'n':
      return JsonKind::kNull;
    default:
      if (c == '-' || is_digit(c)) return JsonKind::kNumber;
      fail(tandem::detail::str("expected a value, got ", printable(c)));
  }
}

void JsonReader::begin_object() {
  expect('{', "to open an object");
  levels_.push_back({Container::kObject, /*first=*/true});
}

void JsonReader::begin_array() {
  expect('[', "to open an array");
  levels_.push_back({Container::kArray, /*first=*/true});
}

bool JsonReader::step_in(Container container, char close) {
  TANDEM_INTERNAL_ASSERT(!levels_.empty() && levels_.back().container == container,
                         "JsonReader: stepping through a container that is not open");
  skip_whitespace();
  if (pos_ < text_.size() && text_[pos_] == close) {
    ++pos_;
    levels_.pop_back();
    return false;
  }
  if (levels_.back().first) {
    levels_.back().first = false;
  } else {
    expect(',',
           container == Container::kObject ? "or '}' after an object member"
                                           : "or ']' after an array element");
  }
  return true;
}

bool JsonReader::next_key(std::string& key) {
  if (!step_in(Container::kObject, '}')) return false;
  skip_whitespace();
  if (pos_ >= text_.size() || text_[pos_] != '"') {
    fail(pos_ >= text_.size() ? std::string("expected a string key, got the end")
                              : "expected a string key, got " + printable(text_[pos_]));
  }
  key = read_string();
  expect(':', "after an object key");
  return true;
}

bool JsonReader::next_element() { return step_in(Container::kArray, ']'); }

unsigned JsonReader::read_hex4() {
  unsigned value = 0;
  for (int i = 0; i < 4; ++i, ++pos_) {
    if (pos_ >= text_.size()) fail("unterminated \\u escape");
    char c = text_[pos_];
    unsigned digit = 0;
    if (is_digit(c)) {
      digit = c - '0';
    } else if (c >= 'a' && c <= 'f') {
      digit = c - 'a' + 10;
    } else if (c >= 'A' && c <= 'F') {
      digit = c - 'A' + 10;
    } else {
      fail("expected a hex digit in a \\u escape, got " + printable(c));
    }
    value = value * 16 + digit;
  }
  return value;
}

// Reads the escape after a backslash (pos_ is on the character after it).
void JsonReader::append_escape(std::string& out) {
  if (pos_ >= text_.size()) fail("unterminated string");
  char c = text_[pos_++];
  switch (c) {
    case '"':
    case '\\':
    case '/':
      out += c;
      return;
    case 'b':
      out += '\b';
      return;
    case 'f':
      out += '\f';
      return;
    case 'n':
      out += '\n';
      return;
    case 'r':
      out += '\r';
      return;
    case 't':
      out += '\t';
      return;
    case 'u':
      break;
    default:
      --pos_;
      fail("invalid escape \\" + std::string(1, c));
  }
  uint32_t code_point = read_hex4();
  if (code_point >= 0xdc00 && code_point <= 0xdfff)
    fail("lone low surrogate in a \\u escape");
  if (code_point >= 0xd800 && code_point <= 0xdbff) {
    // A high surrogate must be followed by an escaped low one (UTF-16 pair).
    if (text_.substr(pos_, 2) != "\\u") fail("high surrogate without a low surrogate");
    pos_ += 2;
    uint32_t low = read_hex4();
    if (low < 0xdc00 || low > 0xdfff) fail("high surrogate without a low surrogate");
    code_point = 0x10000 + ((code_point - 0xd800) << 10) + (low - 0xdc00);
  }
  append_utf8(out, code_point);
}

std::string JsonReader::read_string() {
  expect('"', "to open a string");
  std::string out;
  while (true) {
    if (pos_ >= text_.size()) fail("unterminated string");
    char c = text_[pos_];
    if (c == '"') {
      ++pos_;
      return out;
    }
    if (static_cast<unsigned char>(c) < 0x20)
      fail("unescaped control character in a string");
    ++pos_;
    if (c == '\\') {
      append_escape(out);
    } else {
      out += c;
    }
  }
}

std::string_view JsonReader::read_number() {
  skip_whitespace();
  size_t start = pos_;
  auto at = [&](size_t i) { return i < text_.size() ? text_[i] : '\0'; };
  auto digits = [&](const char* where) {
    if (!is_digit(at(pos_))) fail(tandem::detail::str("expected a digit ", where));
    while (is_digit(at(pos_))) ++pos_;
  };
  if (at(pos_) == '-') ++pos_;
  if (at(pos_) == '0') {
    ++pos_;
    if (is_digit(at(pos_))) fail("leading zero in a number");
  } else {
    digits("in a number");
  }
  if (at(pos_) == '.') {
    ++pos_;
    digits("after a decimal point");
  }
  if (at(pos_) == 'e' || at(pos_) == 'E') {
    ++pos_;
    if (at(pos_) == '+' || at(pos_) == '-') ++pos_;
    digits("in an exponent");
  }
  return text_.substr(start, pos_ - start);
}

void JsonReader::end() {
  TANDEM_INTERNAL_ASSERT(levels_.empty(), "JsonReader: end() inside an open container");
  skip_whitespace();
  if (pos_ != text_.size())
    fail("unexpected " + printable(text_[pos_]) + " after the JSON value");
}

size_t find_invalid_utf8(std::string_view text) {
  size_t i = 0;
  while (i < text.size()) {
    auto byte = static_cast<unsigned char>(text[i]);
    if (byte < 0x80) {
      ++i;
      continue;
    }
    // The sequence length and the allowed range of the second byte, which
    // rules out overlong forms, surrogates and code points past U+10FFFF
    // (Unicode Table 3-7).
    size_t length = 0;
    unsigned char low = 0x80;
    unsigned char high = 0xbf;
    if (byte >= 0xc2 && byte <= 0xdf) {
      length = 2;
    } else if (byte >= 0xe0 && byte <= 0xef) {
      length = 3;
      if (byte == 0xe0) low = 0xa0;
      if (byte == 0xed) high = 0x9f;
    } else if (byte >= 0xf0 && byte <= 0xf4) {
      length = 4;
      if (byte == 0xf0) low = 0x90;
      if (byte == 0xf4) high = 0x8f;
    } else {
      return i;
    }
    if (text.size() - i < length) return i;
    auto second = static_cast<unsigned char>(text[i + 1]);
    if (second < low || second > high) return i;
    for (size_t k = 2; k < length; ++k) {
      auto next = static_cast<unsigned char>(text[i + k]);
      if (next < 0x80 || next > 0xbf) return i;
    }
    i += length;
  }
  return std::string_view::npos;
}

void append_json_string(std::string& out, std::string_view text) {
  static constexpr char kHex[] = "0123456789abcdef";
  out += '"';
  for (char c : text) {
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\b':
        out += "\\b";
        break;
      case '\f':
        out += "\\f";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\r':
        out += "\\r";
        break;
      case '\t':
        out += "\\t";
        break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          out += "\\u00";
          out += kHex[(c >> 4) & 0xf];
          out += kHex[c & 0xf];
        } else {
          out += c;
        }
    }
  }
  out += '"';
}

}  // namespace tandem::io::detail
