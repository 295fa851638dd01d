// ibfab: the command line. `ibfab --help` lists the commands; every command
// has its own --help and man page (`ibfab man-pages DIR`, hidden, writes
// them: man_page.h). Exit status: 0 success, 1 a run whose checks failed,
// 2 bad arguments or bad input files (one line on stderr says what), as
// exit_status.h states it for --help and the man pages.
#include <CLI/CLI.hpp>

#include <cstdio>
#include <exception>
#include <iostream>
#include <string>
#include <string_view>

#include "fabric/topology/topology_error.h"
#include "tools/cli/commands.h"
#include "tools/cli/exit_status.h"
#include "tools/cli/huge_pages.h"
#include "tools/cli/man_page.h"
#include "tools/scenario/scenario_loader.h"

int main(int argc, char** argv) {
  // The commands that build a whole fabric's model.
  if (argc > 1) {
    const std::string_view command = argv[1];
    if (command == "run" || command == "serve" || command == "validate") ibfab::cli::use_huge_pages(argv);
  }
  CLI::App app{
      "ibfab: an InfiniBand fabric simulator.\n"
      "Builds a model of HCAs, switches and links, runs scenarios on it, and\n"
      "shows what happened (reports, captures, pictures).",
      "ibfab"};
  app.require_subcommand(1);
  app.set_help_all_flag("--help-all", "Print help for every command");
  app.footer(ibfab::cli::exit_status_footer());  // before the commands, which inherit it
  ibfab::cli::Commands commands;
  commands.add_to(app);
  // Hidden from --help (group ""): the build runs it (tools/man.cmake).
  std::string man_dir;
  CLI::App* man_pages = app.add_subcommand("man-pages", "Write ibfab.1 and ibfab-COMMAND.1, every command's, into DIR");
  man_pages->group("");
  man_pages->add_option("DIR", man_dir, "The directory (made when missing)")->required();
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    std::fprintf(stderr, "ibfab: %s\n(see: ibfab --help)\n", e.what());
    return 2;
  }
  try {
    if (*man_pages) {
      ibfab::cli::write_man_pages(app, man_dir, {IBFAB_VERSION, ibfab::cli::source_date()});
      return 0;
    }
    return commands.run();
  } catch (const ibfab::topo::TopologyError& e) {
    std::fprintf(stderr, "ibfab: %s\n", e.what());
  } catch (const ibfab::scenario::ScenarioError& e) {
    std::fprintf(stderr, "ibfab: %s\n", e.what());
  } catch (const std::exception& e) {
    std::fprintf(stderr, "ibfab: %s\n", e.what());
  }
  return 2;
}
