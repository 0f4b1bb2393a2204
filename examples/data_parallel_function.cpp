// The first seed's hand-written data_parallel, composed from the four
// primitives exactly as the tutorial writes it in Python:
//
//   replicas = replicate(module, device_ids)
//   inputs = scatter(input, device_ids)
//   replicas = replicas[:len(inputs)]
//   outputs = parallel_apply(replicas, inputs)
//   return gather(outputs, output_device)
//
// It checks the result (and the gradients) against the module applied to
// the whole batch on one device, and exits non-zero on a mismatch.
#include <tandem/tandem.h>

#include <iostream>
#include <optional>

using namespace tandem;

Tensor data_parallel(nn::Linear module,
                     const Tensor& input,
                     const std::vector<Device>& device_ids,
                     std::optional<Device> output_device = std::nullopt) {
  if (device_ids.empty()) return module->forward(input);
  Device out = output_device.value_or(device_ids.front());
  auto replicas = parallel::replicate(module, device_ids);
  auto inputs = parallel::scatter(input, device_ids);
  replicas.erase(replicas.begin() + static_cast<int64_t>(inputs.size()), replicas.end());
  auto outputs = parallel::parallel_apply(replicas, inputs);
  return parallel::gather(outputs, out);
}

int main() {
  manual_seed(0);
  nn::Linear module(10, 20);
  Tensor input = randn({30, 10});
  std::vector<Device> devices = {"cpu:0", "cpu:1", "cpu:2"};

  Tensor output = data_parallel(module, input, devices);
  output.pow(2).sum().backward();
  Tensor grad = module->weight.grad().clone();

  module->zero_grad();
  Tensor reference = module->forward(input);
  reference.pow(2).sum().backward();

  bool ok = output.sizes() == reference.sizes() && output.device() == devices[0] &&
            allclose(output, reference, 1e-5, 1e-6) &&
            allclose(grad, module->weight.grad(), 1e-5, 1e-5);
  std::cout << "data_parallel over " << devices.size() << " devices: output "
            << output.sizes() << " on " << output.device() << ", "
            << (ok ? "equals" : "DIFFERS FROM") << " the single-device result\n";
  return ok ? 0 : 1;
}
