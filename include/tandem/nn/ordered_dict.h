// OrderedDict: a map that remembers insertion order, as LibTorch's
// torch::OrderedDict. Modules keep their parameters, buffers and children in
// one, and named_parameters() / state_dict() return one.
//
//   tandem::OrderedDict<std::string, tandem::Tensor> dict("Parameter");
//   dict.insert("weight", w);
//   for (const auto& item : dict) std::cout << item.key() << item->sizes();
//   dict["bias"];   // throws tandem::Error: Parameter 'bias' is not defined
//   if (const Tensor* t = dict.find("weight")) ...
#pragma once

#include <cstddef>
#include <initializer_list>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "tandem/core/error.h"

namespace tandem {

template <typename Key, typename Value>
class OrderedDict {
 public:
  /// One entry: key() and value(); `->` and `*` reach the value.
  class Item {
   public:
    Item(Key key, Value value) : pair_(std::move(key), std::move(value)) {}
    const Key& key() const noexcept { return pair_.first; }
    Value& value() noexcept { return pair_.second; }
    const Value& value() const noexcept { return pair_.second; }
    Value& operator*() noexcept { return pair_.second; }
    const Value& operator*() const noexcept { return pair_.second; }
    Value* operator->() noexcept { return &pair_.second; }
    const Value* operator->() const noexcept { return &pair_.second; }
    const std::pair<Key, Value>& pair() const noexcept { return pair_; }

   private:
    std::pair<Key, Value> pair_;
  };

  using Iterator = typename std::vector<Item>::iterator;
  using ConstIterator = typename std::vector<Item>::const_iterator;

  /// `key_description` names the keys in error messages ("Parameter 'w'
  /// already defined").
  explicit OrderedDict(std::string key_description = "Key")
      : key_description_(std::move(key_description)) {}
  OrderedDict(std::initializer_list<Item> items) {
    reserve(items.size());
    for (const Item& item : items) insert(item.key(), item.value());
  }

  const std::string& key_description() const noexcept { return key_description_; }

  // ---- element access ----
  Item& front() { return items_[checked_index(0, "front")]; }
  const Item& front() const { return items_[checked_index(0, "front")]; }
  Item& back() { return items_[checked_index(size() - 1, "back")]; }
  const Item& back() const { return items_[checked_index(size() - 1, "back")]; }
  Item& operator[](size_t index) { return items_[checked_index(index, "operator[]")]; }
  const Item& operator[](size_t index) const {
    return items_[checked_index(index, "operator[]")];
  }
  /// Throws tandem::Error naming the key when it is absent.
  Value& operator[](const Key& key) { return items_[index_of(key)].value(); }
  const Value& operator[](const Key& key) const { return items_[index_of(key)].value(); }
  /// nullptr when the key is absent.
  Value* find(const Key& key) noexcept {
    auto it = index_.find(key);
    return it == index_.end() ? nullptr : &items_[it->second].value();
  }
  const Value* find(const Key& key) const noexcept {
    auto it = index_.find(key);
    return it == index_.end() ? nullptr : &items_[it->second].value();
  }
  bool contains(const Key& key) const noexcept { return index_.count(key) != 0; }

  // ---- iteration, in insertion order ----
  Iterator begin() { return items_.begin(); }
  ConstIterator begin() const { return items_.begin(); }
  Iterator end() { return items_.end(); }
  ConstIterator end() const { return items_.end(); }
  size_t size() const noexcept { return items_.size(); }
  bool is_empty() const noexcept { return items_.empty(); }
  bool empty() const noexcept { return items_.empty(); }

  // ---- modification ----
  /// Appends; throws tandem::Error when the key is already present.
  Value& insert(Key key, Value value) {
    TANDEM_CHECK(!contains(key), key_description_, " '", key, "' already defined");
    index_.emplace(key, items_.size());
    items_.emplace_back(std::move(key), std::move(value));
    return items_.back().value();
  }
  /// Inserts every entry of `other`, in its order, replacing the values of
  /// keys already present (their position is kept).
  void update(const OrderedDict& other) {
    for (const Item& item : other) {
      if (Value* existing = find(item.key())) {
        *existing = item.value();
      } else {
        insert(item.key(), item.value());
      }
    }
  }
  void erase(const Key& key) {
    const size_t index = index_of(key);
    items_.erase(items_.begin() + static_cast<std::ptrdiff_t>(index));
    index_.erase(key);
    for (auto& entry : index_) {
      if (entry.second > index) --entry.second;
    }
  }
  void clear() {
    index_.clear();
    items_.clear();
  }
  void reserve(size_t n) {
    index_.reserve(n);
    items_.reserve(n);
  }

  // ---- views ----
  const std::vector<Item>& items() const noexcept { return items_; }
  std::vector<Key> keys() const {
    std::vector<Key> out;
    out.reserve(items_.size());
    for (const Item& item : items_) out.push_back(item.key());
    return out;
  }
  std::vector<Value> values() const {
    std::vector<Value> out;
    out.reserve(items_.size());
    for (const Item& item : items_) out.push_back(item.value());
    return out;
  }
  std::vector<std::pair<Key, Value>> pairs() const {
    std::vector<std::pair<Key, Value>> out;
    out.reserve(items_.size());
    for (const Item& item : items_) out.push_back(item.pair());
    return out;
  }

 private:
  size_t index_of(const Key& key) const {
    auto it = index_.find(key);
    TANDEM_CHECK(it != index_.end(), key_description_, " '", key, "' is not defined");
    return it->second;
  }
  size_t checked_index(size_t index, const char* what) const {
    TANDEM_CHECK_INDEX(!items_.empty(), "OrderedDict::", what, ": the dict is empty");
    TANDEM_CHECK_INDEX(index < items_.size(),
                       "OrderedDict::",
                       what,
                       ": index ",
                       index,
                       " is out of range for a dict of size ",
                       items_.size());
    return index;
  }

  std::string key_description_ = "Key";
  std::unordered_map<Key, size_t> index_;
  std::vector<Item> items_;
};

}  // namespace tandem
