// ibfab: the command line. `ibfab --help` lists the commands; every command
// has its own --help. Exit status: 0 success, 1 a run whose checks failed,
// 2 bad arguments or bad input files (one line on stderr says what).
#include <CLI/CLI.hpp>

#include <cstdio>
#include <exception>
#include <iostream>
#include <string_view>

#include "fabric/topology/topology_error.h"
#include "tools/cli/commands.h"
#include "tools/cli/huge_pages.h"
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
  ibfab::cli::Commands commands;
  commands.add_to(app);
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
