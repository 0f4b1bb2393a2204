#include "tandem/parallel/parallel_apply.h"

#include <exception>
#include <typeinfo>

#include "tandem/core/device_work_time.h"
#include "tandem/core/executor.h"
#include "tandem/core/profiler.h"
#include "tandem/graph/grad_mode.h"
#include "tandem/nn/module_holder.h"

namespace tandem::parallel::detail {
namespace {

// The device of replica i: the given one, or that of its first tensor.
std::vector<Device> resolve_devices(const std::vector<TensorTree>& inputs,
                                    const std::optional<std::vector<Device>>& devices) {
  if (devices) return *devices;
  std::vector<Device> resolved;
  for (size_t i = 0; i < inputs.size(); ++i) {
    const std::vector<Tensor> tensors = inputs[i].tensors();
    TANDEM_CHECK(!tensors.empty(),
                 "parallel_apply: in replica ",
                 i,
                 ", no device was provided and no tensor input was found; device "
                 "cannot be resolved");
    resolved.push_back(tensors.front().device());
  }
  return resolved;
}

// Rethrows a replica's failure as a tandem::Error naming the replica, with
// the original nested inside.
[[noreturn]] void rethrow_from_replica(const std::exception_ptr& error,
                                       size_t replica,
                                       Device device) {
  try {
    std::rethrow_exception(error);
  } catch (const std::exception& e) {
    std::throw_with_nested(
        Error(tandem::detail::str("Caught ",
                                  nn::detail::demangle(typeid(e).name()),
                                  " in replica ",
                                  replica,
                                  " on device ",
                                  device,
                                  ": ",
                                  e.what())));
  } catch (...) {
    std::throw_with_nested(Error(tandem::detail::str(
        "Caught an unknown exception in replica ", replica, " on device ", device)));
  }
}

}  // namespace

std::vector<TensorTree> parallel_apply(
    size_t num_modules,
    const std::function<TensorTree(size_t, const TensorTree&)>& call,
    const std::vector<TensorTree>& inputs,
    const std::optional<std::vector<Device>>& devices) {
  TANDEM_CHECK(inputs.size() == num_modules,
               "parallel_apply: Must have as many inputs as modules (got ",
               num_modules,
               " modules and ",
               inputs.size(),
               " inputs)");
  TANDEM_CHECK(!devices || devices->size() == num_modules,
               "parallel_apply: Must have as many devices as modules (got ",
               num_modules,
               " modules and ",
               devices ? devices->size() : 0,
               " devices)");
  const std::vector<Device> on = resolve_devices(inputs, devices);
  std::vector<TensorTree> outputs(num_modules);
  const bool grad_mode = GradMode::is_enabled();
  const std::vector<std::exception_ptr> errors = run_on_devices(on, [&](size_t i) {
    AutoGradMode mode(grad_mode);
    tandem::detail::DeviceWorkScope work(on[i]);
    profiler::Span span("parallel", "replica forward", on[i]);
    if (span.active()) {
      for (const Tensor& t : inputs[i].tensors())
        span.end_flow(profiler::take_flow(t.data_ptr()));
    }
    outputs[i] = call(i, inputs[i]);
  });
  for (size_t i = 0; i < errors.size(); ++i) {
    if (errors[i]) rethrow_from_replica(errors[i], i, on[i]);
  }
  return outputs;
}

}  // namespace tandem::parallel::detail
