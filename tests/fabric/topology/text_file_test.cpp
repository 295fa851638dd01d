// read_text_file: regular files only, whole, up to a limit.
#include "fabric/topology/text_file.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <string>

namespace ibfab::topo {
namespace {

std::string tmp(const std::string& name) { return ::testing::TempDir() + "/text-file-" + name; }

std::string error_of(const std::string& path, std::size_t limit) {
  try {
    read_text_file(path, limit, "test files");
  } catch (const TextFileError& e) {
    return e.what();
  }
  return "(read)";
}

TEST(TextFile, ReadsARegularFileWhole) {
  const std::string path = tmp("ok.txt");
  std::ofstream(path) << "one\ntwo\n";
  EXPECT_EQ(read_text_file(path, 8, "test files"), "one\ntwo\n");  // exactly at the limit
  EXPECT_EQ(error_of(path, 7), path + ": larger than 7 bytes (the limit for test files)");
}

TEST(TextFile, RefusesWhatIsNoRegularFileBeforeReading) {
  const std::string fifo = tmp("fifo");
  std::filesystem::remove(fifo);
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  EXPECT_EQ(error_of(fifo, 1 << 20), fifo + ": a FIFO, not a regular file");  // no writer: would block
  EXPECT_EQ(error_of("/dev/zero", 1 << 20), "/dev/zero: a character device, not a regular file");
  EXPECT_EQ(error_of(::testing::TempDir(), 1 << 20), ::testing::TempDir() + ": a directory, not a regular file");
  EXPECT_EQ(error_of(tmp("missing"), 1 << 20), tmp("missing") + ": cannot open: No such file or directory");
}

}  // namespace
}  // namespace ibfab::topo
