#include "tandem/core/error.h"

namespace tandem::detail {

void throw_internal(const char* cond,
                    const char* file,
                    int line,
                    const std::string& msg) {
  throw InternalError(str("internal error in tandem: ",
                          msg.empty() ? "" : msg,
                          msg.empty() ? "" : " ",
                          "(",
                          cond,
                          " failed at ",
                          file,
                          ":",
                          line,
                          "); this is a bug in tandem, please report it"));
}

}  // namespace tandem::detail
