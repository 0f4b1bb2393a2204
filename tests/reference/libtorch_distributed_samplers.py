#!/usr/bin/python3
"""Prints the batches of LibTorch's own distributed samplers, for the golden
values of tests/data/distributed_samplers_test.cpp.

    /usr/bin/python3 tests/reference/libtorch_distributed_samplers.py

Python's torch has no binding for the C++ frontend's samplers, so this calls
them in Debian's libtorch_cpu.so.1.13 (package libtorch1.13, which
python3-torch installs) through their exported symbols, with ctypes and the
x86-64 System V calling convention: a member function takes `this` first, a
class returned by value is written to a buffer passed before `this`, and a
trivially copyable c10::optional<size_t> travels in two registers. set_epoch
is inline in LibTorch's header, so the epoch is written into the object
(field 4, after the vtable, size, num_replicas and rank); the size check
below fails loudly if the layout is not that.
"""

import ctypes
import sys

LIB = "/usr/lib/x86_64-linux-gnu/libtorch_cpu.so.1.13"
PREFIX = "_ZN5torch4data8samplers"
RANDOM = PREFIX + "24DistributedRandomSampler"
SEQUENTIAL = PREFIX + "28DistributedSequentialSampler"

# (size, num_replicas, rank, epoch, allow_duplicates)
CASES = [
    (10, 3, 0, 0, True),
    (10, 3, 1, 0, True),
    (10, 3, 2, 0, True),
    (10, 3, 0, 0, False),
    (10, 3, 1, 0, False),
    (10, 3, 2, 0, False),
    (10, 3, 2, 7, True),
    (10, 1, 0, 0, True),
    (10, 1, 0, 5, False),
    (7, 4, 3, 2, True),
    (20, 3, 1, 1, False),
    (25, 4, 1, 9, True),
]


def function(lib, name, *argtypes):
    f = getattr(lib, name)
    f.restype = None
    f.argtypes = list(argtypes)
    return f


def drain(next_fn, sampler):
    """Every index of the pass, from next(1000000) until nullopt."""
    out = []
    while True:
        result = (ctypes.c_uint64 * 8)()  # c10::optional<std::vector<size_t>>
        next_fn(ctypes.addressof(result), sampler, 1000000)
        if result[0] & 0xFF == 0:
            return out
        begin, end = result[1], result[2]
        count = (end - begin) // 8
        out += list((ctypes.c_uint64 * count).from_address(begin))


def main():
    lib = ctypes.CDLL(LIB)
    vp, size = ctypes.c_void_p, ctypes.c_size_t
    ctor_args = (vp, size, size, size, ctypes.c_bool)
    random_ctor = function(lib, RANDOM + "C1Emmmb", *ctor_args)
    random_next = function(lib, RANDOM + "4nextEm", vp, vp, size)
    random_reset = function(
        lib, RANDOM + "5resetEN3c108optionalImEE", vp, ctypes.c_uint64, ctypes.c_uint64)
    sequential_ctor = function(lib, SEQUENTIAL + "C1Emmmb", *ctor_args)
    sequential_next = function(lib, SEQUENTIAL + "4nextEm", vp, vp, size)
    for n, replicas, rank, epoch, duplicates in CASES:
        sampler = (ctypes.c_uint64 * 32)()
        random_ctor(ctypes.addressof(sampler), n, replicas, rank, duplicates)
        if list(sampler[1:4]) != [n, replicas, rank]:
            sys.exit("unexpected object layout: " + str(list(sampler[:8])))
        sampler[4] = epoch  # set_epoch(epoch)
        random_reset(ctypes.addressof(sampler), 0, 0)  # reset(nullopt)
        print(f"random {n} {replicas} {rank} {epoch} {int(duplicates)}:",
              drain(random_next, ctypes.addressof(sampler)))
        sequential = (ctypes.c_uint64 * 32)()
        sequential_ctor(ctypes.addressof(sequential), n, replicas, rank, duplicates)
        print(f"sequential {n} {replicas} {rank} {int(duplicates)}:",
              drain(sequential_next, ctypes.addressof(sequential)))


if __name__ == "__main__":
    main()
