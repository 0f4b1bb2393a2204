// The King James Bible as a word-level language-modelling corpus: the text
// of Debian's bible-kjv package (its `bible -f Gen1:1-Rev22:21` prints it,
// one verse a line, "Ge1:1 In the beginning ..."), or a file in that
// format, cut into tokens with a vocabulary built from the training part.
//
//   using tandem::data::datasets::KingJamesBible;
//   KingJamesBible bible;             // runs the bible command
//   bible.train().size();             // about 804k token ids
//   bible.word(bible.train()[0]);     // "in"
//
// Split by book: of the 66 books (in order, from 0) those with index % 11
// == 9 are the validation part (2 Samuel, Proverbs, Jonah, Luke,
// 2 Thessalonians, Jude), index % 11 == 10 the test part (1 Kings,
// Ecclesiastes, Micah, John, 1 Timothy, Revelation), the rest the training
// part: about 804k, 60k and 81k tokens. The tokenizer lowercases and cuts a
// verse into words (letters, with inner apostrophes: "lord's") and single
// punctuation marks, and ends it with "<eos>". The vocabulary is id 0,
// "<unk>", then every token seen at least twice in the training part in
// byte order (about 8.1k in all); other tokens read as <unk>.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace tandem::data::datasets {

/// The tokens of one verse's text, "<eos>" last.
std::vector<std::string> tokenize_verse(const std::string& text);

class KingJamesBible {
 public:
  /// Reads `path` (one verse a line), or with "" runs `bible -f
  /// Gen1:1-Rev22:21`. A tandem::Error when the file cannot be read, the
  /// command prints nothing (the error says to install bible-kjv), a line
  /// is no verse, or a part comes out empty.
  explicit KingJamesBible(const std::string& path = "");

  const std::vector<int64_t>& train() const { return train_; }
  const std::vector<int64_t>& valid() const { return valid_; }
  const std::vector<int64_t>& test() const { return test_; }
  /// Vocabulary size, <unk> included.
  int64_t vocabulary_size() const { return static_cast<int64_t>(words_.size()); }
  const std::string& word(int64_t id) const { return words_.at(static_cast<size_t>(id)); }
  /// Where the text came from: the path, or "bible-kjv".
  const std::string& source() const { return source_; }

 private:
  std::string source_;
  std::vector<std::string> words_;  // id -> word; 0 is <unk>
  std::vector<int64_t> train_, valid_, test_;
};

}  // namespace tandem::data::datasets
