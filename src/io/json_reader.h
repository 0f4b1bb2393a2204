// JsonReader: a strict, pull-style JSON parser for safetensors headers.
//
// The caller walks the document it expects, value by value, so no tree is
// built: memory stays proportional to what the caller keeps, whatever the
// input (a 100 MB header of `[0,0,0,...]` costs nothing beyond the values
// taken). Everything it reads follows RFC 8259 exactly: no comments, no
// trailing commas, no leading zeros, no raw control characters in strings,
// no lone surrogates in \u escapes, nothing but whitespace after the value.
// Duplicate keys are the caller's to reject (it knows which keys it took).
//
//   JsonReader json(text);
//   json.begin_object();
//   std::string key;
//   while (json.next_key(key)) {
//     if (json.peek() != JsonKind::kString) ...;   // the caller's error
//     std::string value = json.read_string();
//   }
//   json.end();
//
// Grammar errors throw JsonSyntaxError with the byte offset; a value of the
// wrong kind is the caller's error (peek() tells what comes next). Nothing
// recurses: nesting goes only as deep as the caller opens containers, so a
// deeply nested input fails at the first container the caller did not
// expect rather than exhausting the stack.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "tandem/core/error.h"

namespace tandem::io::detail {

class JsonSyntaxError : public Error {
 public:
  JsonSyntaxError(size_t offset, const std::string& problem);
  size_t offset() const { return offset_; }

 private:
  size_t offset_;
};

enum class JsonKind { kObject, kArray, kString, kNumber, kTrue, kFalse, kNull };

/// "an object", "a number", ... for messages.
std::string_view describe(JsonKind kind);

class JsonReader {
 public:
  /// `text` must be valid UTF-8 (see find_invalid_utf8) and outlive the reader.
  explicit JsonReader(std::string_view text) : text_(text) {}

  /// The kind of the next value; throws on a character no value starts with.
  JsonKind peek();

  void begin_object();
  /// Steps to the next member of the innermost object: true with its key
  /// (the reader then stands before the member's value), or false after
  /// consuming the object's closing brace.
  bool next_key(std::string& key);

  void begin_array();
  /// Steps to the next element of the innermost array: true (the reader
  /// stands before it), or false after consuming the closing bracket.
  bool next_element();

  std::string read_string();
  /// The literal text of a number, checked against the JSON grammar.
  std::string_view read_number();

  /// Checks that only whitespace follows the top-level value.
  void end();

 private:
  enum class Container { kObject, kArray };

  [[noreturn]] void fail(const std::string& problem) const;
  void skip_whitespace();
  void expect(char c, const char* context);
  /// Handles the comma or closing character before the next member or
  /// element; false when the container closed.
  bool step_in(Container container, char close);
  unsigned read_hex4();
  void append_escape(std::string& out);

  std::string_view text_;
  size_t pos_ = 0;
  // One entry per open container: its kind and whether a member or element
  // has been read yet (the first one has no comma before it).
  struct Level {
    Container container;
    bool first;
  };
  std::vector<Level> levels_;
};

/// The offset of the first byte that is not part of a well-formed UTF-8
/// sequence (overlong forms, surrogates and code points past U+10FFFF are
/// ill-formed), or npos when the whole text is valid.
size_t find_invalid_utf8(std::string_view text);

/// Appends `text` as a JSON string literal, escaped as serde_json does (the
/// reference safetensors writer): \" \\ \b \f \n \r \t, other control
/// characters as \u00xx, everything else (UTF-8 included) as is.
void append_json_string(std::string& out, std::string_view text);

}  // namespace tandem::io::detail
