// The io layer: tensors, modules and training checkpoints in the
// safetensors format, written atomically and checked when read.
//
//   #include <tandem/io/io.h>
//   tandem::io::save(model, "model.safetensors");
//   tandem::io::load(model, "model.safetensors");
//   tandem::io::save_checkpoint(checkpoint, "run/checkpoint.safetensors");
//   tandem::save(optimizer, "optimizer.pt");   // LibTorch's one-call form
#pragma once

#include "tandem/io/atomic_file.h"
#include "tandem/io/checkpoint.h"
#include "tandem/io/image_grid.h"
#include "tandem/io/module_io.h"
#include "tandem/io/safetensors.h"
#include "tandem/io/serialize.h"
