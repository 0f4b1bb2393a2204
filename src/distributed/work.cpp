#include "tandem/distributed/work.h"

#include <utility>

#include "distributed/state.h"
#include "tandem/core/error.h"

namespace tandem::distributed {

Work::Work(std::shared_ptr<detail::WorkState> state) : state_(std::move(state)) {}

Work Work::completed(std::vector<Tensor> result, std::string description) {
  auto state = std::make_shared<detail::WorkState>(nullptr,
                                                   0,
                                                   std::move(description),
                                                   std::move(result),
                                                   detail::Clock::now(),
                                                   std::chrono::milliseconds(0));
  state->finish(nullptr);
  return Work(std::move(state));
}

const detail::WorkState& Work::state() const {
  TANDEM_CHECK(state_ != nullptr, "Work: the handle is undefined (default-constructed)");
  return *state_;
}

bool Work::is_completed() const { return state().is_completed(); }

bool Work::is_success() const { return state().is_completed() && !state().exception(); }

std::exception_ptr Work::exception() const { return state().exception(); }

void Work::wait() const {
  static_cast<void>(state());
  state_->wait(std::nullopt);
}

void Work::wait(std::chrono::milliseconds timeout) const {
  static_cast<void>(state());
  state_->wait(timeout);
}

const std::vector<Tensor>& Work::result() const { return state().outputs; }

uint64_t Work::sequence_number() const { return state().seq; }

const std::string& Work::description() const { return state().description; }

}  // namespace tandem::distributed
