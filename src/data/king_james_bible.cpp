#include "tandem/data/king_james_bible.h"

#include <cctype>
#include <cstdio>
#include <fstream>
#include <map>
#include <memory>
#include <unordered_map>
#include <utility>

#include "tandem/core/error.h"

namespace tandem::data::datasets {
namespace {

constexpr int64_t kBooksPerCycle = 11;  // books 9 and 10 of every 11 are held out

std::vector<std::string> read_verses(const std::string& path) {
  std::vector<std::string> verses;
  std::string line;
  if (!path.empty()) {
    std::ifstream in(path);
    TANDEM_CHECK(in.good(), "KingJamesBible: cannot read ", path);
    while (std::getline(in, line)) {
      if (!line.empty()) verses.push_back(line);
    }
    TANDEM_CHECK(!verses.empty(), "KingJamesBible: ", path, " holds no verse");
    return verses;
  }
  std::unique_ptr<FILE, int (*)(FILE*)> pipe(
      popen("bible -f Gen1:1-Rev22:21 2>/dev/null", "r"), pclose);
  TANDEM_CHECK(pipe != nullptr, "KingJamesBible: cannot run the bible command");
  char buffer[4096];
  while (std::fgets(buffer, sizeof buffer, pipe.get())) {
    line = buffer;
    if (!line.empty() && line.back() == '\n') line.pop_back();
    if (!line.empty()) verses.push_back(line);
  }
  TANDEM_CHECK(verses.size() >= 1000,
               "KingJamesBible: the bible command printed no text: install Debian's "
               "bible-kjv package (apt-get install bible-kjv), or name a file of "
               "verses");
  return verses;
}

// "Ge1:1 In the beginning ..." -> {"Ge", "In the beginning ..."}.
std::pair<std::string, std::string> split_reference(const std::string& verse) {
  const size_t space = verse.find(' ');
  const std::string reference = verse.substr(0, space);
  const size_t book_end = reference.find_last_not_of("0123456789:");
  TANDEM_CHECK(space != std::string::npos && book_end != std::string::npos &&
                   book_end + 1 < reference.size(),
               "KingJamesBible: not a verse (\"Book1:1 text\"): '",
               verse.substr(0, 80),
               "'");
  return {reference.substr(0, book_end + 1), verse.substr(space + 1)};
}

bool is_letter(char c) { return std::isalpha(static_cast<unsigned char>(c)) != 0; }

}  // namespace

std::vector<std::string> tokenize_verse(const std::string& text) {
  std::vector<std::string> tokens;
  std::string word;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    const bool inner_apostrophe =
        c == '\'' && !word.empty() && i + 1 < text.size() && is_letter(text[i + 1]);
    if (is_letter(c) || inner_apostrophe) {
      word += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
      continue;
    }
    if (!word.empty()) tokens.push_back(std::move(word));
    word.clear();
    if (!std::isspace(static_cast<unsigned char>(c))) tokens.emplace_back(1, c);
  }
  if (!word.empty()) tokens.push_back(std::move(word));
  tokens.emplace_back("<eos>");
  return tokens;
}

KingJamesBible::KingJamesBible(const std::string& path)
    : source_(path.empty() ? "bible-kjv" : path) {
  std::vector<std::string> parts[3];  // train, valid, test
  std::string book;
  int64_t book_index = -1;
  for (const std::string& verse : read_verses(path)) {
    auto [name, text] = split_reference(verse);
    if (name != book) {
      book = name;
      ++book_index;
    }
    const int64_t cycle = book_index % kBooksPerCycle;
    const int part = cycle == 9 ? 1 : cycle == 10 ? 2 : 0;
    for (std::string& token : tokenize_verse(text))
      parts[part].push_back(std::move(token));
  }
  std::map<std::string, int64_t> counts;  // ordered: ids do not depend on hashing
  for (const std::string& token : parts[0]) ++counts[token];
  words_.push_back("<unk>");
  std::unordered_map<std::string, int64_t> ids;
  for (const auto& [word, count] : counts) {
    if (count < 2) continue;
    ids[word] = static_cast<int64_t>(words_.size());
    words_.push_back(word);
  }
  std::vector<int64_t>* outputs[] = {&train_, &valid_, &test_};
  const char* names[] = {"training", "validation", "test"};
  for (int p = 0; p < 3; ++p) {
    TANDEM_CHECK(!parts[p].empty(),
                 "KingJamesBible: ",
                 source_,
                 " leaves the ",
                 names[p],
                 " part empty (it needs books 0-8, 9 and 10 of the 66, or at least 11 "
                 "books)");
    outputs[p]->reserve(parts[p].size());
    for (const std::string& token : parts[p]) {
      auto id = ids.find(token);
      outputs[p]->push_back(id == ids.end() ? 0 : id->second);
    }
  }
}

}  // namespace tandem::data::datasets
