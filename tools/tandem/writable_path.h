// Whether the train job will be able to write its files, asked before it
// trains: a checkpoint into a missing folder, onto a read-only filesystem
// or over a folder would otherwise fail only when the first epoch ends.
//
//   check_writable("run/checkpoint.safetensors", "checkpoint");  // throws
#pragma once

#include <string>

namespace tandem::cli {

/// Throws tandem::Error naming `what` ("checkpoint", "metrics file"),
/// `path` and the operating system's reason unless a file can be created
/// in path's folder (a probe file is made there and removed) and path is
/// not a folder. An existing file at `path` is left as it is.
void check_writable(const std::string& path, const std::string& what);

}  // namespace tandem::cli
