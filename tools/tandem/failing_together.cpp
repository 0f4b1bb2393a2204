#include "failing_together.h"

#include <exception>

#include "commands.h"
#include "tandem/ops/factory.h"

namespace tandem::cli {

void set_up_together(distributed::ProcessGroup* group,
                     const std::function<void()>& set_up) {
  if (group == nullptr) {
    set_up();
    return;
  }
  std::exception_ptr failure;
  int exit_code = 0;  // what main() returns for `failure`
  try {
    set_up();
  } catch (const UsageError&) {
    failure = std::current_exception();
    exit_code = 2;
  } catch (...) {
    failure = std::current_exception();
    exit_code = 1;
  }
  // The lowest failing rank and its exit code (as rank * 4 + code), or
  // size() * 4 when none failed; every process then exits with that code.
  Tensor first = empty({1}, kInt64);
  first.data_ptr<int64_t>()[0] =
      failure ? int64_t{group->rank()} * 4 + exit_code : int64_t{group->size()} * 4;
  group
      ->allreduce(first,
                  distributed::AllreduceOptions().reduce_op(distributed::ReduceOp::MIN))
      .wait();
  const int64_t reporter = first.data_ptr<int64_t>()[0] / 4;
  if (reporter == group->size()) return;
  if (reporter == group->rank()) std::rethrow_exception(failure);
  throw QuietExit(static_cast<int>(first.data_ptr<int64_t>()[0] % 4));
}

}  // namespace tandem::cli
