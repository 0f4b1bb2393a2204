// Device work time (tandem/core/device_work_time.h): a DeviceWorkScope adds
// its lifetime to its device, less the StepWorkScopes inside it on its
// thread; a StepWorkScope outside any scope changes nothing.
#include <gtest/gtest.h>

#include <chrono>
#include <thread>

#include "tandem/core/device_work_time.h"

namespace {

using tandem::Device;
using tandem::device_work_seconds;
using tandem::detail::DeviceWorkScope;
using tandem::detail::StepWorkScope;

// A device no other test records work on.
const Device kDevice("cpu:37");

void sleep_ms(int ms) { std::this_thread::sleep_for(std::chrono::milliseconds(ms)); }

TEST(DeviceWorkTime, AScopeAddsItsLifetime) {
  const double before = device_work_seconds(kDevice);
  {
    const DeviceWorkScope work(kDevice);
    sleep_ms(20);
  }
  EXPECT_GE(device_work_seconds(kDevice) - before, 0.020);
}

TEST(DeviceWorkTime, StepWorkInsideAScopeIsNotTheDevices) {
  const double before = device_work_seconds(kDevice);
  {
    const DeviceWorkScope work(kDevice);
    sleep_ms(20);
    {
      const StepWorkScope step;
      sleep_ms(200);
    }
  }
  const double spent = device_work_seconds(kDevice) - before;
  EXPECT_GE(spent, 0.020);
  EXPECT_LT(spent, 0.200);  // the 200 ms of step work are left out
}

TEST(DeviceWorkTime, StepWorkOutsideAnyScopeTakesNothingAway) {
  const double before = device_work_seconds(kDevice);
  {
    const StepWorkScope step;
    sleep_ms(5);
  }
  EXPECT_EQ(device_work_seconds(kDevice), before);
}

TEST(DeviceWorkTime, StepWorkPausesOnlyItsOwnThreadsScope) {
  const double before = device_work_seconds(kDevice);
  {
    const DeviceWorkScope work(kDevice);
    std::thread other([] {
      const StepWorkScope step;  // no scope open on this thread
      sleep_ms(200);
    });
    other.join();  // this scope lasts the other thread's 200 ms
  }
  EXPECT_GE(device_work_seconds(kDevice) - before, 0.200);
}

}  // namespace
