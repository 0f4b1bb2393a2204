// SmallVector<T, N>: a vector that keeps up to N elements inside itself
// and moves them to the heap only beyond that.
//
// Note [Sizes without the heap]
// ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
// Every tensor carries two short integer lists (sizes and strides), and
// every op builds a few more (an output shape, broadcast strides, a loop's
// merged dims). As std::vectors each was a heap allocation: the seed's
// tiny training step (Linear 5->2, batch 30) made about 290 malloc calls,
// a third of its time. Tensors almost never have more than 6 dims, so
// these lists live inline (as c10::SmallVector and LLVM's do) and a step
// allocates only for tensor objects, storage and autograd nodes.
//
// Only for trivially copyable T (integers, arrays of them): elements are
// moved with memcpy and never destroyed one by one.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <initializer_list>
#include <iterator>
#include <new>
#include <stdexcept>
#include <type_traits>
#include <vector>

namespace tandem {

template <typename T, size_t N>
class SmallVector {
  static_assert(std::is_trivially_copyable_v<T>,
                "SmallVector holds trivially copyable types");
  static_assert(N > 0, "SmallVector needs an inline capacity");

 public:
  using value_type = T;
  using size_type = size_t;
  using difference_type = std::ptrdiff_t;
  using reference = T&;
  using const_reference = const T&;
  using pointer = T*;
  using const_pointer = const T*;
  using iterator = T*;
  using const_iterator = const T*;
  using reverse_iterator = std::reverse_iterator<iterator>;
  using const_reverse_iterator = std::reverse_iterator<const_iterator>;

  SmallVector() = default;
  explicit SmallVector(size_t count) { resize(count); }
  SmallVector(size_t count, const T& value) { assign(count, value); }
  SmallVector(std::initializer_list<T> values) { assign(values.begin(), values.end()); }
  template <typename It, typename = typename std::iterator_traits<It>::iterator_category>
  SmallVector(It first, It last) {
    assign(first, last);
  }
  SmallVector(const std::vector<T>& v)  // implicit
  {
    assign(v.begin(), v.end());
  }
  SmallVector(const SmallVector& other) { assign(other.begin(), other.end()); }
  SmallVector(SmallVector&& other) noexcept { take(other); }
  SmallVector& operator=(const SmallVector& other) {
    if (this != &other) assign(other.begin(), other.end());
    return *this;
  }
  SmallVector& operator=(SmallVector&& other) noexcept {
    if (this != &other) {
      release();
      take(other);
    }
    return *this;
  }
  SmallVector& operator=(std::initializer_list<T> values) {
    assign(values.begin(), values.end());
    return *this;
  }
  ~SmallVector() { release(); }

  /// A std::vector copy, for APIs that want one (as LibTorch's
  /// IntArrayRef converts).
  operator std::vector<T>() const { return vec(); }  // implicit
  std::vector<T> vec() const { return std::vector<T>(begin(), end()); }

  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  size_t capacity() const { return capacity_; }
  T* data() { return data_; }
  const T* data() const { return data_; }

  T& operator[](size_t i) { return data_[i]; }
  const T& operator[](size_t i) const { return data_[i]; }
  T& front() { return data_[0]; }
  const T& front() const { return data_[0]; }
  T& back() { return data_[size_ - 1]; }
  const T& back() const { return data_[size_ - 1]; }

  iterator begin() { return data_; }
  iterator end() { return data_ + size_; }
  const_iterator begin() const { return data_; }
  const_iterator end() const { return data_ + size_; }
  const_iterator cbegin() const { return data_; }
  const_iterator cend() const { return data_ + size_; }
  reverse_iterator rbegin() { return reverse_iterator(end()); }
  reverse_iterator rend() { return reverse_iterator(begin()); }
  const_reverse_iterator rbegin() const { return const_reverse_iterator(end()); }
  const_reverse_iterator rend() const { return const_reverse_iterator(begin()); }

  void reserve(size_t n) {
    if (n > capacity_) grow_to(n);
  }
  void clear() { size_ = 0; }
  void push_back(const T& value) {
    if (size_ == capacity_) return push_back_growing(value);
    data_[size_++] = value;
  }
  template <typename... Args>
  T& emplace_back(Args&&... args) {
    push_back(T(std::forward<Args>(args)...));
    return back();
  }
  void pop_back() { --size_; }
  void resize(size_t n) { resize(n, T{}); }
  void resize(size_t n, const T& value) {
    const T copy = value;  // `value` may live in this vector
    reserve(n);
    for (size_t i = size_; i < n; ++i) data_[i] = copy;
    size_ = n;
  }
  void assign(size_t count, const T& value) {
    clear();
    resize(count, value);
  }
  template <typename It>
  void assign(It first, It last) {
    clear();
    insert(end(), first, last);
  }

  iterator insert(const_iterator pos, const T& value) {
    const T copy = value;
    return insert(pos, &copy, &copy + 1);
  }
  iterator insert(const_iterator pos, size_t count, const T& value) {
    const T copy = value;  // `value` may live in this vector
    const size_t at = static_cast<size_t>(pos - begin());
    open_gap(at, count);
    std::fill_n(data_ + at, count, copy);
    return data_ + at;
  }
  template <typename It, typename = typename std::iterator_traits<It>::iterator_category>
  iterator insert(const_iterator pos, It first, It last) {
    const size_t at = static_cast<size_t>(pos - begin());
    const auto count = static_cast<size_t>(std::distance(first, last));
    if (count == 0) return data_ + at;
    if constexpr (std::is_same_v<std::remove_cv_t<std::remove_pointer_t<It>>, T> &&
                  std::is_pointer_v<It>) {
      const std::less<const T*> before;  // a total order, unlike < on pointers
      if (!before(first, data_) && before(first, data_ + size_)) {
        // The source is this vector's own elements: after the gap opens,
        // those at or past `at` sit `count` further up (none is in the gap).
        const auto from = static_cast<size_t>(first - data_);
        open_gap(at, count);
        for (size_t i = 0; i < count; ++i) {
          const size_t s = from + i;
          data_[at + i] = data_[s < at ? s : s + count];
        }
        return data_ + at;
      }
    }
    open_gap(at, count);
    std::copy(first, last, data_ + at);
    return data_ + at;
  }
  iterator insert(const_iterator pos, std::initializer_list<T> values) {
    return insert(pos, values.begin(), values.end());
  }
  iterator erase(const_iterator pos) { return erase(pos, pos + 1); }
  iterator erase(const_iterator first, const_iterator last) {
    const size_t at = static_cast<size_t>(first - begin());
    const size_t count = static_cast<size_t>(last - first);
    std::memmove(static_cast<void*>(data_ + at),
                 data_ + at + count,
                 (size_ - at - count) * sizeof(T));
    size_ -= count;
    return data_ + at;
  }

  friend bool operator==(const SmallVector& a, const SmallVector& b) {
    return std::equal(a.begin(), a.end(), b.begin(), b.end());
  }
  friend bool operator==(const SmallVector& a, const std::vector<T>& b) {
    return std::equal(a.begin(), a.end(), b.begin(), b.end());
  }
  friend bool operator<(const SmallVector& a, const SmallVector& b) {
    return std::lexicographical_compare(a.begin(), a.end(), b.begin(), b.end());
  }

 private:
  bool on_heap() const { return data_ != inline_; }

  // Out of line: the rare path, kept out of callers' inlined loops.
  [[gnu::noinline]] void push_back_growing(T value) {  // by value: it may be ours
    grow_to(2 * capacity_);
    data_[size_++] = value;
  }

  void grow_to(size_t n) {
    if (n > SIZE_MAX / sizeof(T))
      throw std::length_error("SmallVector: too many elements");
    auto* fresh = static_cast<T*>(std::malloc(n * sizeof(T)));
    if (fresh == nullptr) throw std::bad_alloc();
    if (size_ > 0) std::memcpy(static_cast<void*>(fresh), data_, size_ * sizeof(T));
    release();
    data_ = fresh;
    capacity_ = n;
  }

  // Makes room for `count` elements at `at`, shifting the tail up.
  void open_gap(size_t at, size_t count) {
    if (size_ + count > capacity_) grow_to(std::max(size_ + count, 2 * capacity_));
    std::memmove(
        static_cast<void*>(data_ + at + count), data_ + at, (size_ - at) * sizeof(T));
    size_ += count;
  }

  void release() {
    if (on_heap()) std::free(data_);
    data_ = inline_;
    capacity_ = N;
  }

  // Takes `other`'s elements (stealing its heap block if it has one) and
  // leaves it empty.
  void take(SmallVector& other) {
    if (other.on_heap()) {
      data_ = other.data_;
      capacity_ = other.capacity_;
      other.data_ = other.inline_;
      other.capacity_ = N;
    } else {
      std::memcpy(static_cast<void*>(inline_), other.inline_, other.size_ * sizeof(T));
    }
    size_ = other.size_;
    other.size_ = 0;
  }

  T* data_ = inline_;
  size_t size_ = 0;
  size_t capacity_ = N;
  T inline_[N];
};

}  // namespace tandem
