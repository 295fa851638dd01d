#pragma once
// Where the drop-in libraries (libibverbs, librdmacm, libibumad) are that
// `ibfab exec` puts first on a program's LD_LIBRARY_PATH.
#include <string>

namespace ibfab::cli {

// The libraries of the build tree for the ibfab executable of that build
// tree; for any other copy of the executable, the installed libraries at
// their place relative to it (LIBDIR/ibfab under the prefix of bin/, as
// cmake/install.cmake puts them), so that an installed tree works wherever it is put.
// Throws std::runtime_error, naming the directory, when libibverbs.so.1 is
// not there.
std::string library_dir();

}  // namespace ibfab::cli
