#pragma once
// The one way ibfab reads an input file (net files, --ip-file, scenarios):
// whole, from a regular file only, up to a size limit. A FIFO, a device or
// a directory is refused before anything is read from it (a FIFO could block
// for ever, /dev/zero never ends), and so is a file past the limit, so a
// reader never hangs and never holds more than `limit` bytes.
#include <cstddef>
#include <stdexcept>
#include <string>

namespace ibfab::topo {

// Thrown with a one-line what(): "PATH: problem".
class TextFileError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// The contents of the regular file `path`; `what` names the file's kind in
// messages ("net files", "scenario files"). Throws TextFileError for a file that
// cannot be opened or read, is not a regular file, or is larger than
// `limit` bytes.
std::string read_text_file(const std::string& path, std::size_t limit, const char* what);

}  // namespace ibfab::topo
