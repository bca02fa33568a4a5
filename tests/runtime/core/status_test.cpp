#include "runtime/core/status.h"

#include <gtest/gtest.h>

namespace pshard {
namespace {

Result<int> parse_positive(int v) {
  if (v <= 0)
    return invalid_argument("value must be positive, got " + std::to_string(v));
  return v;
}

Result<int> doubled(int v) {
  PSHARD_ASSIGN_OR_RETURN(int x, parse_positive(v));
  return 2 * x;
}

Status check_twice(int v) {
  PSHARD_RETURN_IF_ERROR(doubled(v).status());
  return Status::ok_status();
}

TEST(StatusTest, AssignOrReturnPropagatesFailureAndValue) {
  EXPECT_EQ(doubled(4).value(), 8);
  Result<int> bad = doubled(-1);
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(bad.status().to_string(), "invalid argument: value must be positive, got -1");
}

TEST(StatusTest, ReturnIfErrorAndContext) {
  EXPECT_TRUE(check_twice(1).ok());
  Status s = check_twice(0).with_context("reading x");
  EXPECT_EQ(s.message(), "reading x: value must be positive, got 0");
  EXPECT_TRUE(Status::ok_status().with_context("ignored").ok());
}

} // namespace
} // namespace pshard
