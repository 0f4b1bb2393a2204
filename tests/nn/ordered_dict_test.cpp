// OrderedDict: insertion order, lookups and their errors.
#include "support/tensor_testing.h"
#include "tandem/tandem.h"

namespace {

using tandem::OrderedDict;
using tandem::testing::throws_with;

TEST(OrderedDict, KeepsInsertionOrder) {
  OrderedDict<std::string, int> dict;
  dict.insert("zeta", 1);
  dict.insert("alpha", 2);
  dict.insert("mid", 3);
  EXPECT_EQ(dict.keys(), (std::vector<std::string>{"zeta", "alpha", "mid"}));
  EXPECT_EQ(dict.values(), (std::vector<int>{1, 2, 3}));
  std::vector<std::string> seen;
  for (const auto& item : dict) seen.push_back(item.key() + "=" + std::to_string(*item));
  EXPECT_EQ(seen, (std::vector<std::string>{"zeta=1", "alpha=2", "mid=3"}));
  EXPECT_EQ(dict.size(), 3u);
  EXPECT_EQ(dict.front().key(), "zeta");
  EXPECT_EQ(dict.back().value(), 3);
  EXPECT_EQ(dict[1].key(), "alpha");
  EXPECT_EQ(dict.items()[2].pair(), (std::pair<std::string, int>("mid", 3)));
}

TEST(OrderedDict, LookupAndMissingKey) {
  OrderedDict<std::string, int> dict("Parameter");
  dict.insert("w", 7);
  EXPECT_EQ(dict["w"], 7);
  dict["w"] = 8;
  EXPECT_EQ(*dict.find("w"), 8);
  EXPECT_EQ(dict.find("b"), nullptr);
  EXPECT_TRUE(dict.contains("w"));
  EXPECT_FALSE(dict.contains("b"));
  EXPECT_TRUE(throws_with([&] { dict["b"]; }, "Parameter 'b' is not defined"));
  EXPECT_TRUE(throws_with([&] { dict.insert("w", 1); }, "Parameter 'w' already defined"));
  EXPECT_THROW(dict[5], tandem::IndexError);
}

TEST(OrderedDict, EraseUpdateAndClear) {
  OrderedDict<std::string, int> dict{{"a", 1}, {"b", 2}, {"c", 3}};
  dict.erase("b");
  EXPECT_EQ(dict.keys(), (std::vector<std::string>{"a", "c"}));
  EXPECT_EQ(dict["c"], 3);  // the index map follows the erase
  OrderedDict<std::string, int> more{{"c", 30}, {"d", 4}};
  dict.update(more);
  EXPECT_EQ(dict.keys(), (std::vector<std::string>{"a", "c", "d"}));
  EXPECT_EQ(dict["c"], 30);
  dict.clear();
  EXPECT_TRUE(dict.is_empty());
  EXPECT_THROW(dict.front(), tandem::IndexError);
  EXPECT_THROW(dict.back(), tandem::IndexError);
}

}  // namespace
