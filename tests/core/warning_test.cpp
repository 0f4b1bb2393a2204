// tandem::warn goes to the installed handler, one call at a time; the
// default handler writes one line to stderr.
#include <gtest/gtest.h>

#include <thread>
#include <vector>

#include "tandem/core/warning.h"

namespace {

TEST(Warning, GoesToTheInstalledHandlerAndTheOldOneComesBack) {
  std::vector<std::string> seen;
  auto previous = tandem::set_warning_handler(
      [&](const std::string& message) { seen.push_back(message); });
  tandem::warn("first");
  auto mine = tandem::set_warning_handler(previous);
  tandem::warn("to stderr");  // not seen
  ASSERT_EQ(seen, std::vector<std::string>{"first"});
  ASSERT_TRUE(static_cast<bool>(mine));
  mine("second");
  EXPECT_EQ(seen.back(), "second");
}

TEST(Warning, AnEmptyHandlerRestoresStderr) {
  tandem::set_warning_handler({});
  testing::internal::CaptureStderr();
  tandem::warn("careful");
  EXPECT_EQ(testing::internal::GetCapturedStderr(), "tandem warning: careful\n");
}

TEST(Warning, HandlersRunOneAtATime) {
  int inside = 0, most = 0, calls = 0;  // unguarded on purpose: warn serialises
  auto previous = tandem::set_warning_handler([&](const std::string&) {
    most = std::max(most, ++inside);
    ++calls;
    std::this_thread::yield();
    --inside;
  });
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([] {
      for (int i = 0; i < 200; ++i) tandem::warn("x");
    });
  }
  for (auto& t : threads) t.join();
  tandem::set_warning_handler(previous);
  EXPECT_EQ(calls, 800);
  EXPECT_EQ(most, 1);
}

}  // namespace
