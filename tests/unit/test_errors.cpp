// The two kinds of error (core/errors.hpp): what a user can cause, and a broken invariant.
#include "core/errors.hpp"

#include <gtest/gtest.h>

#include <string>

namespace meshslice {
namespace {

TEST(Errors, RequireThrowsAUserErrorWithTheMessage) {
  EXPECT_NO_THROW(require(true, "never"));
  try {
    require(false, "S=", 3, " must divide ", 8);
    FAIL() << "no throw";
  } catch (const UserError& e) {
    EXPECT_STREQ(e.what(), "S=3 must divide 8");
  }
}

TEST(Errors, AnAssertionNamesItsSourceLineAndAsksForAReport) {
  EXPECT_NO_THROW(MESHSLICE_ASSERT(1 + 1 == 2, "never"));
  try {
    MESHSLICE_ASSERT(2 < 1, "slot ", 2, " of ", 1);
    FAIL() << "no throw";
  } catch (const UserError&) {
    FAIL() << "a broken invariant is not the user's error";
  } catch (const InternalError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("test_errors.cpp:"), std::string::npos) << what;
    EXPECT_NE(what.find("slot 2 of 1"), std::string::npos) << what;
    EXPECT_NE(what.find("please report"), std::string::npos) << what;
  }
}

}  // namespace
}  // namespace meshslice
