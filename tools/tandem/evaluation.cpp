#include "evaluation.h"

#include <algorithm>

#include "launched_group.h"
#include "tandem/graph/grad_mode.h"
#include "tandem/ops/elementwise.h"
#include "tandem/ops/factory.h"
#include "tandem/ops/loss.h"
#include "tandem/ops/reduction.h"

namespace tandem::cli {

Evaluation evaluate(ModelOnDevices& model, const ImageSplit& split, int64_t batch_size) {
  NoGradGuard no_grad;
  model.model()->eval();
  const auto& group = model.group();
  const RowRange mine = rows_of_this_process(group.get(), split.size());
  const int64_t begin = mine.begin, end = mine.begin + mine.length;
  double loss_sum = 0;
  int64_t correct = 0;
  for (int64_t start = begin; start < end; start += batch_size) {
    const int64_t n = std::min(batch_size, end - start);
    const Tensor target = split.targets.narrow(0, start, n).to(model.output_device());
    const Tensor logits = model.forward(split.images.narrow(0, start, n));
    loss_sum += cross_entropy(logits, target, Tensor(), kSum).item<double>();
    correct += eq(argmax(logits, 1), target).sum().item<int64_t>();
  }
  model.model()->train();
  if (group) {
    Tensor sums = empty({2}, kFloat64);
    sums.data_ptr<double>()[0] = loss_sum;
    sums.data_ptr<double>()[1] = static_cast<double>(correct);
    group->allreduce(sums).wait();
    loss_sum = sums.data_ptr<double>()[0];
    correct = static_cast<int64_t>(sums.data_ptr<double>()[1]);
  }
  Evaluation result;
  result.images = split.size();
  if (result.images > 0) {
    result.loss = loss_sum / static_cast<double>(result.images);
    result.accuracy = static_cast<double>(correct) / static_cast<double>(result.images);
  }
  return result;
}

}  // namespace tandem::cli
