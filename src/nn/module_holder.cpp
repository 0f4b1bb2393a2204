// Support for ModuleHolder: readable type names and the empty-holder error.
#include "tandem/nn/module_holder.h"

#include <cxxabi.h>

#include <cstdlib>
#include <memory>

#include "tandem/core/error.h"

namespace tandem::nn::detail {

std::string demangle(const char* mangled) {
  int status = 0;
  std::unique_ptr<char, void (*)(void*)> readable(
      abi::__cxa_demangle(mangled, nullptr, nullptr, &status), std::free);
  return status == 0 && readable ? std::string(readable.get()) : std::string(mangled);
}

void throw_empty_holder(const std::string& impl_name) {
  throw Error(tandem::detail::str(
      "module holder: accessing an empty holder of ",
      impl_name,
      "; it was made from nullptr and never assigned a module (assign one, "
      "e.g. from register_module, before using it)"));
}

}  // namespace tandem::nn::detail
