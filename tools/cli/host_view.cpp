#include "tools/cli/host_view.h"

#include <dirent.h>
#include <fcntl.h>
#include <sched.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <stdexcept>
#include <string>
#include <vector>

#include "tools/cli/device_tree.h"
#include "tools/cli/fabric_network.h"
#include "tools/cli/host_network.h"

namespace ibfab::cli {
namespace {

inline constexpr const char* kWhatToDo =
    "run `ibfab exec` as root, or allow unprivileged user namespaces "
    "(sysctl kernel.unprivileged_userns_clone=1 / user.max_user_namespaces > 0), "
    "or pass --no-device-view to run the program without the host's /dev, /sys and network view";

[[noreturn]] void fail(const std::string& what) {
  throw std::runtime_error("device view: " + what + ": " + std::strerror(errno));
}

void write_proc(const std::string& path, const std::string& text) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CLOEXEC);
  if (fd < 0) fail("cannot open " + path);
  const bool ok = ::write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size());
  ::close(fd);
  if (!ok) fail("cannot write " + path);
}

// Private mount and network namespaces; through a user namespace in which
// this user is root when it is not root already. The network namespace is
// the host's from the fabric network beside the engine when serve keeps
// one (fabric_network.h), else a new one of this process's own. Returns
// whether device nodes can be made.
bool enter_namespaces(const HostSnapshot& host, const std::string& engine_socket) {
  const bool in_user_namespace = ::geteuid() != 0;
  if (!in_user_namespace) {
    if (const int ns = join_fabric_network(engine_socket, host); ns >= 0) {
      const bool joined = ::setns(ns, CLONE_NEWNET) == 0;
      ::close(ns);
      if (!joined) fail("cannot enter the host's network namespace");
      if (::unshare(CLONE_NEWNS) != 0) fail(std::string("cannot make a mount namespace (") + kWhatToDo + ")");
      return true;
    }
    if (::unshare(CLONE_NEWNS | CLONE_NEWNET) != 0) fail(std::string("cannot make namespaces (") + kWhatToDo + ")");
  } else {
    const uid_t uid = ::geteuid();
    const gid_t gid = ::getegid();
    if (::unshare(CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWNET) != 0)
      fail(std::string("not root, and no user namespace could be made (") + kWhatToDo + ")");
    write_proc("/proc/self/setgroups", "deny");
    write_proc("/proc/self/uid_map", "0 " + std::to_string(uid) + " 1");
    write_proc("/proc/self/gid_map", "0 " + std::to_string(gid) + " 1");
  }
  std::cerr << "ibfab: no fabric network beside the engine (`ibfab serve` keeps one when it runs as root): "
               "this program's IPoIB interfaces reach no other host\n";
  configure_host_network(host, "", "ibfab-wire");
  return !in_user_namespace;
}

void mount_or_fail(const char* source, const std::string& target, const char* type, unsigned long flags,
                   const char* data = nullptr) {
  if (::mount(source, target.c_str(), type, flags, data) != 0) fail("cannot mount " + target);
}

// Fills the empty directory `target` with every entry of each of `sources`
// that an earlier source did not have: directories and files are bound
// (recursively), symbolic links copied.
void mirror(const std::string& target, const std::vector<std::string>& sources) {
  for (const std::string& source : sources) {
    DIR* d = ::opendir(source.c_str());
    if (!d) fail("cannot read " + source);
    while (const dirent* e = ::readdir(d)) {
      const std::string name = e->d_name;
      if (name == "." || name == "..") continue;
      const std::string from = source + "/" + name, to = target + "/" + name;
      struct stat st;
      if (::lstat(to.c_str(), &st) == 0 || ::lstat(from.c_str(), &st) != 0) continue;
      if (S_ISLNK(st.st_mode)) {
        char link[4096];
        const ssize_t n = ::readlink(from.c_str(), link, sizeof link - 1);
        if (n < 0) continue;
        link[n] = '\0';
        if (::symlink(link, to.c_str()) != 0) fail("cannot make " + to);
        continue;
      }
      if (S_ISDIR(st.st_mode)) {
        if (::mkdir(to.c_str(), st.st_mode & 07777) != 0) fail("cannot make " + to);
      } else {
        const int fd = ::open(to.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
        if (fd < 0) fail("cannot make " + to);
        ::close(fd);
      }
      mount_or_fail(from.c_str(), to, nullptr, MS_BIND | MS_REC);
    }
    ::closedir(d);
  }
}

}  // namespace

void enter_host_view(const HostSnapshot& host, const std::string& engine_socket) {
  const bool device_nodes = enter_namespaces(host, engine_socket);
  mount_or_fail(nullptr, "/", nullptr, MS_REC | MS_PRIVATE);

  // A scratch tmpfs (on a fresh directory, removed again) holds the
  // generated tree, a sysfs of the new network namespace and the old /dev.
  char scratch[] = "/tmp/ibfab-view.XXXXXX";
  if (!::mkdtemp(scratch)) fail("cannot make a directory in /tmp");
  const std::string t = scratch;
  mount_or_fail("ibfab", t, "tmpfs", MS_NOSUID, "mode=0755");
  for (const char* d : {"/gen", "/sys", "/olddev"})
    if (::mkdir((t + d).c_str(), 0755) != 0) fail("cannot make " + t + d);
  write_device_tree(t + "/gen", host, device_nodes);
  mount_or_fail("sysfs", t + "/sys", "sysfs", MS_NOSUID | MS_NODEV | MS_NOEXEC);
  mount_or_fail("/dev", t + "/olddev", nullptr, MS_BIND | MS_REC);

  mount_or_fail("ibfab", "/dev", "tmpfs", MS_NOSUID, "mode=0755");
  mirror("/dev", {t + "/gen/dev", t + "/olddev"});
  mount_or_fail((t + "/sys/devices").c_str(), "/sys/devices", nullptr, MS_BIND | MS_REC);
  mount_or_fail("ibfab", "/sys/class", "tmpfs", MS_NOSUID | MS_NODEV | MS_NOEXEC, "mode=0755");
  mirror("/sys/class", {t + "/gen/class", t + "/sys/class"});
  mount_or_fail(nullptr, "/sys/class", nullptr, MS_REMOUNT | MS_BIND | MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC);

  if (::umount2(t.c_str(), MNT_DETACH) == 0) ::rmdir(t.c_str());
}

}  // namespace ibfab::cli
