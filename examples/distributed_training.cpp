// PyTorch's DistributedDataParallel tutorial in C++: a toy model trained by
// every process of an MPI job, each on its own shard of a random dataset,
// gradients averaged by DistributedDataParallel. The shards are uneven (101
// samples split without padding, batches of 5: with 2 ranks, 11 batches
// and 10), so the loop runs inside an nn::Join, which lets the rank that
// finishes first stand in for itself until the other is done. Run it alone
// (a group of one) or under mpirun:
//
//   mpirun -np 2 build/examples/distributed_training
#include <tandem/tandem.h>

#include <iostream>
#include <memory>

using namespace tandem;
namespace dist = tandem::distributed;

struct ToyModelImpl : nn::Module {
  ToyModelImpl() {
    net1 = register_module("net1", nn::Linear(10, 10));
    net2 = register_module("net2", nn::Linear(10, 5));
  }
  Tensor forward(const Tensor& x) { return net2->forward(relu(net1->forward(x))); }
  nn::Linear net1{nullptr}, net2{nullptr};
};
TANDEM_MODULE(ToyModel);

int main() {
  auto group = dist::init_process_group();  // reads mpirun's environment
  const int rank = group->rank(), size = group->size();

  manual_seed(42);  // the same data on every rank; each takes its shard
  const int64_t samples = 101, begin = samples * rank / size,
                end = samples * (rank + 1) / size;
  const Tensor inputs = randn({samples, 10}), targets = randn({samples, 5});
  auto loader = data::make_data_loader(
      data::TensorDataset(inputs.narrow(0, begin, end - begin),
                          targets.narrow(0, begin, end - begin)),
      data::samplers::RandomSampler(static_cast<size_t>(end - begin), /*seed=*/0),
      data::DataLoaderOptions().batch_size(5));
  manual_seed(rank);  // different initial weights: DDP broadcasts rank 0's
  ToyModel model;
  nn::DistributedDataParallel ddp(model);
  optim::SGD optimizer(ddp->parameters(), optim::SGDOptions(0.01));

  double last_loss = 0;
  int64_t steps = 0;
  {
    nn::Join join(ddp);  // ranks may have different numbers of batches
    for (int64_t epoch = 0; epoch < 3; ++epoch) {
      for (const data::Batch& batch : loader->epoch(epoch)) {
        optimizer.zero_grad();
        const Tensor loss = mse_loss(ddp(batch.data), batch.target);
        loss.backward();  // gradients averaged across the ranks here
        optimizer.step();
        last_loss = loss.item<double>();
        ++steps;
      }
    }
    join.finish();
  }
  std::cout << "rank " << rank << " of " << size << ": " << steps << " steps, last loss "
            << last_loss << std::endl;
  // Every replica ends equal: the sum of rank 0's first weight, everywhere.
  Tensor check = model->net1->weight.detach().sum().reshape({1});
  Tensor root = check.clone();
  group->broadcast(root).wait();
  if (check.item<double>() != root.item<double>()) {
    std::cerr << "rank " << rank << ": the replicas differ\n";
    return 1;
  }
  return 0;
}
