#include "model_on_devices.h"

#include <algorithm>
#include <utility>

#include "commands.h"
#include "options.h"
#include "tandem/core/device_guard.h"
#include "tandem/graph/grad_mode.h"

namespace tandem::cli {

std::vector<Device> default_devices() {
  std::vector<Device> devices;
  for (int64_t i = 0; i < device_count(kCUDA); ++i) devices.emplace_back(kCUDA, i);
  if (devices.empty()) devices.emplace_back(kCPU, 0);
  return devices;
}

std::vector<Device> devices_or_default(const std::string& list) {
  return list.empty() ? default_devices() : parse_device_list(list);
}

std::string device_list(const std::vector<Device>& devices) {
  std::string list;
  for (const Device& d : devices) {
    if (!list.empty()) list += ',';
    list += d.str();
  }
  return list;
}

void check_devices(const std::vector<Device>& devices, bool distributed) {
  if (devices.empty()) throw UsageError("--devices: the list is empty");
  if (distributed && devices.size() > 1) {
    throw UsageError("--devices: " + device_list(devices) +
                     " lists several devices, but under mpirun each process trains on "
                     "one device (start one process per device instead)");
  }
  for (size_t i = 0; i < devices.size(); ++i) {
    const Device& d = devices[i];
    if (d.type() != devices.front().type()) {
      throw UsageError(
          "--devices: " + device_list(devices) +
          " mixes device types; data parallelism runs on devices of one type");
    }
    if (std::find(devices.begin(), devices.begin() + static_cast<ptrdiff_t>(i), d) !=
        devices.begin() + static_cast<ptrdiff_t>(i)) {
      throw UsageError("--devices: " + d.str() + " is listed twice in " +
                       device_list(devices));
    }
    if (d.is_cuda() && d.index() >= device_count(kCUDA)) {
      throw UsageError("--devices: " + d.str() + " is not available: this machine has " +
                       std::to_string(device_count(kCUDA)) +
                       " CUDA devices (see tandem devices)");
    }
  }
}

ModelOnDevices::ModelOnDevices(nn::Sequential model,
                               std::vector<Device> devices,
                               std::shared_ptr<distributed::ProcessGroup> group,
                               nn::DistributedDataParallelOptions ddp_options,
                               const Balancing& balancing)
    : model_(std::move(model)),
      devices_(std::move(devices)),
      dtype_(model_->parameters().empty() ? kFloat32
                                          : model_->parameters().front().dtype()),
      balancing_(balancing),
      group_(std::move(group)) {
  check_devices(devices_, group_ != nullptr);

  model_->to(devices_.front());
  if (group_) {
    ddp_options.process_group(group_).balance(balancing_.balance);
    if (balancing_.shares) ddp_options.shares(*balancing_.shares);
    if (balancing_.micro_batch > 0)
      ddp_options.invariant(true).micro_batch(balancing_.micro_batch);
    distributed_ = nn::DistributedDataParallel(model_, ddp_options);
  } else if (devices_.size() > 1 || balancing_.micro_batch > 0) {
    nn::DataParallelOptions options;
    options.device_ids(devices_).balance(balancing_.balance);
    if (balancing_.shares) options.shares(*balancing_.shares);
    if (balancing_.micro_batch > 0)
      options.invariant(true).micro_batch(balancing_.micro_batch);
    parallel_ = nn::DataParallel(model_, options);
  }
}

std::vector<size_t> ModelOnDevices::grad_ready_order() const {
  if (!distributed_) return {};
  return distributed_->stats().grad_ready_order;
}

Tensor ModelOnDevices::forward(const Tensor& batch) {
  const Tensor input = batch.to(dtype_);
  if (parallel_) return parallel_->forward(input);
  if (distributed_ && GradMode::is_enabled()) {
    return distributed_->forward(input.to(devices_.front(), /*non_blocking=*/true));
  }
  // Asynchronous from a pinned batch (the trainer's loader pins them).
  return model_->forward(input.to(devices_.front(), /*non_blocking=*/true));
}

std::vector<double> ModelOnDevices::shares() const {
  if (distributed_) return distributed_->shares();
  return parallel_ ? parallel_->shares() : std::vector<double>{1.0};
}

std::vector<int64_t> ModelOnDevices::cut(int64_t rows) const {
  return distributed_ ? distributed_->cut(rows) : std::vector<int64_t>{rows};
}

std::string ModelOnDevices::device_list() const { return cli::device_list(devices_); }

}  // namespace tandem::cli
