#include "fabric/topology/text_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

namespace ibfab::topo {
namespace {

const char* kind_of(mode_t mode) {
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISSOCK(mode)) return "a socket";
  return "not a regular file";
}

std::string mebibytes(std::size_t bytes) {
  return bytes % (1u << 20) == 0 ? std::to_string(bytes >> 20) + " MiB" : std::to_string(bytes) + " bytes";
}

// Closes the fd on every way out.
struct Fd {
  int fd;
  ~Fd() {
    if (fd >= 0) ::close(fd);
  }
};

}  // namespace

std::string read_text_file(const std::string& path, std::size_t limit, const char* what) {
  auto fail = [&](const std::string& problem) { return TextFileError(path + ": " + problem); };
  // O_NONBLOCK: opening a FIFO with no writer returns at once (it is then refused).
  const Fd f{::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY)};
  if (f.fd < 0) throw fail(std::string("cannot open: ") + std::strerror(errno));
  struct stat st;
  if (::fstat(f.fd, &st) != 0) throw fail(std::string("cannot open: ") + std::strerror(errno));
  if (!S_ISREG(st.st_mode)) throw fail(std::string(kind_of(st.st_mode)) + ", not a regular file");
  const std::string too_large = "larger than " + mebibytes(limit) + " (the limit for " + what + ")";
  if (static_cast<std::size_t>(st.st_size) > limit) throw fail(too_large);
  std::string text(static_cast<std::size_t>(st.st_size), '\0');
  std::size_t used = 0;
  for (;;) {
    if (used == text.size()) {
      if (text.size() > limit) throw fail(too_large);  // it grew while we read
      text.resize(std::min(limit + 1, text.size() + 4096));
    }
    const ssize_t n = ::read(f.fd, text.data() + used, text.size() - used);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) throw fail(std::string("read error: ") + std::strerror(errno));
    if (n == 0) break;
    used += static_cast<std::size_t>(n);
  }
  text.resize(used);
  return text;
}

}  // namespace ibfab::topo
