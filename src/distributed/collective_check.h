// TANDEM_DISTRIBUTED_DEBUG=detail: before a collective runs, the ranks
// gather each other's signature of it (operation, reduction, root, dtype,
// element count, device) and compare; see Note [Checking collectives] in
// collective_check.cpp. Used by the comm thread only.
#pragma once

#include <optional>
#include <string>

#include "distributed/state.h"

namespace tandem::distributed::detail {

/// Whether TANDEM_DISTRIBUTED_DEBUG asks for the check: unset, "off" ->
/// false; "detail" -> true (either case); anything else throws
/// tandem::Error naming the values it takes.
bool collective_checks_requested();

/// Fills `op.signatures` with this rank's signature and starts gathering
/// every rank's on `group.check` (op.request). Returns MPI's error code.
int start_check(CollectiveOp& op, const GroupState& group);

/// After the gather: nullopt if every rank calls the same collective,
/// else the error naming what each rank calls.
std::optional<std::string> check_mismatch(const CollectiveOp& op,
                                          const GroupState& group);

}  // namespace tandem::distributed::detail
