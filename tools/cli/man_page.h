#pragma once
// ibfab's man pages, in roff (man(7)), rendered from the CLI11 declarations
// --help prints: the descriptions, the usage lines, every option --help
// shows (names, type, default, repetition, required-ness, needs, excludes,
// environment variable) in its group, and the commands. What --help hides
// (the group "") the pages leave out too.
#include <CLI/CLI.hpp>

#include <filesystem>
#include <string>
#include <vector>

namespace ibfab::cli {

// What a page's title line (.TH) says besides the page's name.
struct ManPageTitle {
  std::string version;  // the project's version, e.g. "0.1.0"
  std::string date;     // YYYY-MM-DD, or empty for none
};

// The page of `cmd`, in section 1, named by its words from the root joined
// with '-' (the root needs a name): ibfab, ibfab-run. NAME, SYNOPSIS,
// DESCRIPTION, OPTIONS, COMMANDS, EXIT STATUS (exit_status.h), SEE ALSO.
// The root's page lists its commands, each pointing to its own page; a
// command's page describes its subcommands, every level down, in place.
std::string man_page(const CLI::App& cmd, const ManPageTitle& title);

// Writes the root's page and the page of every command it shows into
// `dir` (made when missing) as NAME.1; returns the files' names, root's
// first. Throws std::runtime_error when one cannot be written.
std::vector<std::string> write_man_pages(const CLI::App& root, const std::filesystem::path& dir,
                                         const ManPageTitle& title);

// The day SOURCE_DATE_EPOCH names (seconds since 1970, UTC) as YYYY-MM-DD;
// empty when it is unset or not such a number.
std::string source_date();

}  // namespace ibfab::cli
