// Private: what a backward pass knows about each node of its graph, in one
// flat table keyed by the node.
//
// Note [One table for the pass]
// ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
// A pass needs, per node, how many edges still have to deliver into it and
// the gradients gathered so far. As a set of visited nodes plus two
// std::unordered_maps, every node cost three heap allocations before any
// gradient existed: a quarter of the seed's tiny step's allocations. Here
// the three live in one open-addressing table (linear probing, power-of-two
// capacity, never more than half full): one allocation for a small graph,
// a few doublings for a large one. Entries are never removed; a node's
// gradients are moved out when it runs.
#pragma once

#include <bit>
#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

#include "tandem/graph/node.h"

namespace tandem::autograd::detail {

struct NodeState {
  int dependencies = 0;  // edges into the node not yet delivered
  tensor_list buffer;    // its gradients so far, one per output
};

class NodeTable {
 public:
  NodeTable() : slots_(kInitialCapacity) {}

  /// The node's state, made (zeroed) if the node is new; `inserted` says
  /// which. The reference is valid until the next insertion.
  NodeState& find_or_insert(Node* node, bool& inserted) {
    if (2 * (count_ + 1) > slots_.size()) grow();
    Slot& slot = probe(slots_, node);
    inserted = slot.node == nullptr;
    if (inserted) {
      slot.node = node;
      ++count_;
    }
    return slot.state;
  }

  /// The state of a node already in the table.
  NodeState& at(Node* node) {
    Slot& slot = probe(slots_, node);
    TANDEM_INTERNAL_ASSERT(
        slot.node == node, "backward: ", node->name(), " was never visited");
    return slot.state;
  }

 private:
  static constexpr size_t kInitialCapacity = 32;

  struct Slot {
    Node* node = nullptr;
    NodeState state;
  };

  // The slot holding `node`, or the empty one where it would go.
  static Slot& probe(std::vector<Slot>& slots, Node* node) {
    const size_t mask = slots.size() - 1;
    // Fibonacci hashing of the address (nodes are 16-byte aligned).
    size_t i = (reinterpret_cast<uintptr_t>(node) >> 4) * 0x9E3779B97F4A7C15ull >>
               (64 - std::countr_zero(slots.size()));
    while (slots[i].node != nullptr && slots[i].node != node) i = (i + 1) & mask;
    return slots[i];
  }

  void grow() {
    std::vector<Slot> bigger(2 * slots_.size());
    for (Slot& s : slots_) {
      if (s.node != nullptr) probe(bigger, s.node) = std::move(s);
    }
    slots_ = std::move(bigger);
  }

  std::vector<Slot> slots_;
  size_t count_ = 0;
};

}  // namespace tandem::autograd::detail
