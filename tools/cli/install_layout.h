#pragma once
// Where ibfab's own files are, found from the running executable: in its
// build tree, or installed under a prefix (cmake/install.cmake), wherever
// that tree was put.
#include <filesystem>
#include <string>

namespace ibfab::cli {

// This program's file (/proc/self/exe). Throws std::runtime_error when it
// cannot be read.
std::filesystem::path this_executable();

// The drop-in libraries (libibverbs, librdmacm, libibumad) that `ibfab
// exec` puts first on a program's LD_LIBRARY_PATH: the build tree's for
// the ibfab executable of that build tree; for any other copy of the
// executable, the installed ones at their place relative to it
// (LIBDIR/ibfab under the prefix of bin/). Throws std::runtime_error,
// naming the directory, when libibverbs.so.1 is not there.
std::string library_dir();

}  // namespace ibfab::cli
