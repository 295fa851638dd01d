#pragma once
// A test fixture: rdma-core's own build of a library, loaded privately
// (RTLD_LOCAL) beside ibfab's, as an oracle. Tests skip when it is not
// installed (an empty path).
#include <dlfcn.h>
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <utility>

namespace ibfab::testing {

class SystemLibrary : public ::testing::Test {
 protected:
  explicit SystemLibrary(std::string path) : path_(std::move(path)) {}

  void SetUp() override {
    if (path_.empty()) GTEST_SKIP() << "rdma-core's library is not installed";
    handle_ = dlopen(path_.c_str(), RTLD_NOW | RTLD_LOCAL);
    ASSERT_NE(handle_, nullptr) << dlerror();
  }
  void TearDown() override {
    if (handle_ != nullptr) dlclose(handle_);
  }

  // The system library's default version of `name`, typed like ours.
  template <class F>
  F* real(F*, const char* name) {
    void* p = dlsym(handle_, name);
    EXPECT_NE(p, nullptr) << name;
    F* f = nullptr;
    std::memcpy(&f, &p, sizeof f);
    return f;
  }

 private:
  std::string path_;
  void* handle_ = nullptr;
};

}  // namespace ibfab::testing

// The system library's `fn`, typed like ibfab's: REAL(umad_class_str).
#define REAL(fn) real(&fn, #fn)
