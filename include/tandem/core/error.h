// Errors and checks.
//
// TANDEM_CHECK is for misuse by the caller and throws tandem::Error with a
// message built from its remaining arguments. TANDEM_INTERNAL_ASSERT guards
// tandem's own invariants: it is always on, throws tandem::InternalError and
// asks for a bug report.
//
//   TANDEM_CHECK(x.dim() == 2, "mm: expected a 2-D tensor, got shape ",
//                x.sizes());
#pragma once

#include <cstdint>
#include <ostream>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "tandem/core/int_list.h"  // messages print shapes
#include "tandem/core/str.h"

namespace tandem {

/// Misuse: wrong shapes, dtypes, devices, arguments, files.
class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// An index out of range (like Python's IndexError).
class IndexError : public Error {
 public:
  using Error::Error;
};

/// A device ran out of memory (like torch.cuda.OutOfMemoryError); the
/// message says how much was asked for and how much is in use.
class OutOfMemoryError : public Error {
 public:
  using Error::Error;
};

/// A feature that exists in PyTorch but not (yet) in tandem.
class NotImplementedError : public Error {
 public:
  using Error::Error;
};

/// A broken invariant inside tandem: a bug, never the caller's fault.
class InternalError : public std::logic_error {
 public:
  using std::logic_error::logic_error;
};

namespace detail {

using tandem::str;

[[noreturn]] void throw_internal(const char* cond,
                                 const char* file,
                                 int line,
                                 const std::string& msg);

}  // namespace detail
}  // namespace tandem

#define TANDEM_CHECK(cond, ...)                                  \
  do {                                                           \
    if (!(cond)) [[unlikely]] {                                  \
      throw ::tandem::Error(::tandem::detail::str(__VA_ARGS__)); \
    }                                                            \
  } while (false)

#define TANDEM_CHECK_INDEX(cond, ...)                                 \
  do {                                                                \
    if (!(cond)) [[unlikely]] {                                       \
      throw ::tandem::IndexError(::tandem::detail::str(__VA_ARGS__)); \
    }                                                                 \
  } while (false)

#define TANDEM_INTERNAL_ASSERT(cond, ...)                                 \
  do {                                                                    \
    if (!(cond)) [[unlikely]] {                                           \
      ::tandem::detail::throw_internal(                                   \
          #cond, __FILE__, __LINE__, ::tandem::detail::str(__VA_ARGS__)); \
    }                                                                     \
  } while (false)

// LibTorch's deprecated AT_ASSERT, which renaming torch:: leaves as it is;
// not defined when ATen already did.
#ifndef AT_ASSERT
#define AT_ASSERT(cond, ...) TANDEM_INTERNAL_ASSERT(cond, __VA_ARGS__)
#endif

#ifdef NDEBUG
#define TANDEM_INTERNAL_ASSERT_DEBUG_ONLY(cond, ...) \
  do {                                               \
  } while (false)
#else
#define TANDEM_INTERNAL_ASSERT_DEBUG_ONLY(cond, ...) \
  TANDEM_INTERNAL_ASSERT(cond, __VA_ARGS__)
#endif
