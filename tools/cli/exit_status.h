#pragma once
// What ibfab's exit status means: the contract main.cpp keeps, stated once
// for every command's --help (its footer) and for the man pages (EXIT
// STATUS).
#include <array>
#include <string>
#include <string_view>

namespace ibfab::cli {

struct ExitStatus {
  int code;
  std::string_view meaning;
};

inline constexpr std::array<ExitStatus, 3> kExitStatuses{{
    {0, "success"},
    {1, "a run whose checks failed"},
    {2, "bad arguments or bad input files (one line on stderr says what)"},
}};

// --help's footer: "Exit status:", then one line per status ("  0  success").
inline std::string exit_status_footer() {
  std::string footer = "Exit status:";
  for (const ExitStatus& s : kExitStatuses) footer += "\n  " + std::to_string(s.code) + "  " + std::string(s.meaning);
  return footer;
}

}  // namespace ibfab::cli
