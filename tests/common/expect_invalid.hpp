#pragma once
// The host API's error contract, checked the same way in every module's bad-input tests:
// f() throws warpkv::error with errc::invalid_argument whose message names 'argument'.
#include <gtest/gtest.h>

#include <string>

#include "warpkv/core/error.hpp"

namespace warpkv::testing {

template <class F>
void expect_invalid(F&& f, const std::string& argument) {
  try {
    f();
    ADD_FAILURE() << "no error for bad '" << argument << "'";
  } catch (const warpkv::error& e) {
    EXPECT_EQ(e.code(), errc::invalid_argument);
    EXPECT_NE(std::string(e.what()).find("'" + argument + "'"), std::string::npos) << e.what();
  }
}

}  // namespace warpkv::testing
