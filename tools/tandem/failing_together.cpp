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
  try {
    set_up();
  } catch (...) {
    failure = std::current_exception();
  }
  // The lowest failing rank, or size() when none failed.
  Tensor first = empty({1}, kFloat64);
  first.data_ptr<double>()[0] = failure ? group->rank() : group->size();
  group
      ->allreduce(first,
                  distributed::AllreduceOptions().reduce_op(distributed::ReduceOp::MIN))
      .wait();
  const auto reporter = static_cast<int>(first.data_ptr<double>()[0]);
  if (reporter == group->size()) return;
  if (reporter == group->rank()) std::rethrow_exception(failure);
  throw QuietExit(1);
}

}  // namespace tandem::cli
