// The man page renderer (tools/cli/man_page.h) on small commands built
// here: text escaped so that it reads as written, in roff and through
// groff; what an option's entry says; which pages are written.
#include "tools/cli/man_page.h"

#include <gtest/gtest.h>

#include <array>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

namespace {

using ibfab::cli::man_page;

const ibfab::cli::ManPageTitle kTitle{"1.2.3", "2024-05-06"};

// What groff prints of `roff` as plain text, on lines wide enough that no
// sentence here is broken or stretched.
std::string groff_text(const std::string& roff) {
  const std::string path = ::testing::TempDir() + "/man_page_test.1";
  std::ofstream(path) << roff;
  FILE* p = popen(("groff -man -Tascii -rLL=300n -P-cbou " + path + " 2>&1").c_str(), "r");
  if (!p) return "popen failed";
  std::string out;
  std::array<char, 4096> buf;
  std::size_t n;
  while ((n = fread(buf.data(), 1, buf.size(), p)) > 0) out.append(buf.data(), n);
  const int status = pclose(p);
  return status == 0 ? out : "groff failed: " + out;
}

// `page` holds `text` (or says what it holds instead).
::testing::AssertionResult Holds(const std::string& page, const std::string& text) {
  if (page.find(text) != std::string::npos) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "it holds no\n" << text << "\nbut\n" << page;
}

// A description that roff would take for requests, escapes and hyphens.
constexpr const char* kTricky = ".starts with a dot\nback\\slash and a-hyphen\n'starts with an apostrophe";

TEST(ManPage, IndentedLinesStayAsTheyAreAndTheRestIsFilled) {
  CLI::App app{"Runs things.\nUsage:\n  tiny A\n      B\nAfter the example.", "tiny"};
  const std::string page = man_page(app, kTitle);
  EXPECT_TRUE(Holds(page, "\nUsage:\n.nf\n  tiny A\n      B\n.fi\nAfter the example.\n"));
  const std::string text = groff_text(page);
  EXPECT_TRUE(Holds(text, "  tiny A\n"));
  EXPECT_TRUE(Holds(text, "      B\n"));
  EXPECT_TRUE(Holds(text, "Runs things.  Usage:"));  // filled: two spaces after a sentence
}

TEST(ManPage, EscapesWhatRoffWouldReadOtherwise) {
  CLI::App app{kTricky, "tiny"};
  app.add_flag("--dry-run", "Do nothing");
  const std::string page = man_page(app, kTitle);
  EXPECT_TRUE(Holds(page, "\n\\&.starts with a dot\n"));
  EXPECT_TRUE(Holds(page, "\nback\\(rsslash and a\\-hyphen\n"));
  EXPECT_TRUE(Holds(page, "\n\\&'starts with an apostrophe\n"));
  EXPECT_TRUE(Holds(page, "\n\\fB\\-\\-dry\\-run\\fR\n"));
  // Every line that starts a request is one of the page's own.
  std::istringstream lines(page);
  for (std::string line; std::getline(lines, line);)
    if (line.starts_with('.') || line.starts_with('\''))
      EXPECT_TRUE(line.starts_with(".TH ") || line.starts_with(".SH ") || line.starts_with(".SS ") ||
                  line.starts_with(".B ") || line == ".TP" || line == ".br" || line == ".PP" || line == ".sp" ||
                  line == ".nf" || line == ".fi")
          << line;
}

TEST(ManPage, GroffPrintsTheTextAsWritten) {
  CLI::App app{kTricky, "tiny"};
  app.add_flag("--dry-run", "Do nothing");
  const std::string text = groff_text(man_page(app, kTitle));
  EXPECT_TRUE(Holds(text, ".starts with a dot back\\slash and a-hyphen 'starts with an apostrophe"));
  EXPECT_TRUE(Holds(text, "--dry-run"));
  EXPECT_TRUE(Holds(text, "tiny - .starts with a dot"));
}

TEST(ManPage, NamesWhatIsNotAsciiByCodePoint) {
  CLI::App app{"caf\xc3\xa9 \xe2\x80\x94 ok", "tiny"};
  const std::string page = man_page(app, kTitle);
  EXPECT_TRUE(Holds(page, "caf\\[u00E9] \\[u2014] ok"));
}

TEST(ManPage, SaysWhatHelpSaysOfAnOption) {
  CLI::App app{"A program", "tiny"};
  std::string file, mode = "fast";
  std::vector<std::string> items;
  CLI::Option* out = app.add_option("-o,--output", file, "Where to write")->required();
  app.add_option("--mode", mode, "How")->capture_default_str()->check(CLI::IsMember({"fast", "slow"}));
  CLI::Option* item = app.add_option("--item", items, "Repeatable thing")->needs(out);
  app.add_flag("--quiet", "Say less")->excludes(item)->group("Output");
  const std::string page = man_page(app, kTitle);
  EXPECT_TRUE(Holds(page, "\\fB\\-o\\fR, \\fB\\-\\-output\\fR \\fITEXT\\fR\nWhere to write\n.br\nRequired.\n"));
  EXPECT_TRUE(Holds(page, "\\fB\\-\\-mode\\fR \\fITEXT:{fast,slow}\\fR=fast\nHow\n"));
  EXPECT_TRUE(Holds(page, "\\fB\\-\\-item\\fR \\fITEXT\\fR ...\nRepeatable thing\n"
                          ".br\nNeeds: \\-\\-output. Excludes: \\-\\-quiet.\n"));
  // Two groups: each under its heading. No commands: nothing to see also.
  EXPECT_FALSE(Holds(page, "SEE ALSO"));
  EXPECT_TRUE(Holds(page, ".SS Options\n"));
  EXPECT_TRUE(Holds(page, ".SS Output\n.TP\n\\fB\\-\\-quiet\\fR\nSay less\n.br\nExcludes: \\-\\-item.\n"));
}

TEST(ManPage, LeavesOutWhatHelpHides) {
  CLI::App app{"A program", "tiny"};
  app.add_flag("--secret", "Not shown")->group("");
  app.add_subcommand("shown", "A command");
  app.add_subcommand("hidden", "Not shown either")->group("");
  const std::string page = man_page(app, kTitle);
  EXPECT_FALSE(Holds(page, "secret"));
  EXPECT_FALSE(Holds(page, "hidden"));
  EXPECT_TRUE(Holds(page, ".SH COMMANDS\n.TP\n\\fBshown\\fR\nA command\n.br\nSee \\fBtiny\\-shown\\fR(1).\n"));
}

TEST(ManPage, CommandPageHoldsItsSubcommandsAndPointsToTheRoot) {
  CLI::App app{"A program", "tiny"};
  CLI::App* topo = app.add_subcommand("topo", "Topologies");
  std::string spec;
  topo->add_subcommand("gen", "Write one")->add_option("SPEC", spec, "Which")->required();
  const std::string page = man_page(*topo, kTitle);
  EXPECT_TRUE(page.starts_with(".TH \"TINY\\-TOPO\" 1 \"2024\\-05\\-06\" \"tiny 1.2.3\" \"tiny Manual\"\n")) << page;
  EXPECT_TRUE(Holds(page, ".SH NAME\ntiny\\-topo \\- Topologies\n"));
  EXPECT_TRUE(Holds(page, "\\fBtiny topo gen\\fR [OPTIONS] SPEC\n"));
  EXPECT_TRUE(Holds(page, ".SS \"tiny topo gen\"\nWrite one\n.TP\n\\fISPEC\\fR \\fITEXT\\fR\nWhich\n"));
  EXPECT_TRUE(page.ends_with(".SH \"SEE ALSO\"\n\\fBtiny\\fR(1)\n")) << page;
}

TEST(ManPage, WritesTheRootsPageAndOnePerCommand) {
  CLI::App app{"A program", "tiny"};
  app.add_subcommand("run", "Runs");
  app.add_subcommand("topo", "Topologies")->add_subcommand("gen", "Write one");
  app.add_subcommand("man-pages", "Hidden")->group("");
  const std::filesystem::path dir = ::testing::TempDir() + "/man_page_test_pages";
  std::filesystem::remove_all(dir);
  const std::vector<std::string> files = ibfab::cli::write_man_pages(app, dir / "man1", kTitle);
  EXPECT_EQ(files, (std::vector<std::string>{"tiny.1", "tiny-run.1", "tiny-topo.1"}));
  for (const std::string& f : files) EXPECT_TRUE(std::filesystem::is_regular_file(dir / "man1" / f)) << f;
  EXPECT_EQ(std::distance(std::filesystem::directory_iterator(dir / "man1"), {}), 3);
}

TEST(ManPage, DatesFromSourceDateEpochOnly) {
  ::unsetenv("SOURCE_DATE_EPOCH");
  EXPECT_EQ(ibfab::cli::source_date(), "");
  ::setenv("SOURCE_DATE_EPOCH", "1700000000", 1);
  EXPECT_EQ(ibfab::cli::source_date(), "2023-11-14");
  for (const char* bad : {"", "-1", "12x", "99999999999999999999"}) {
    ::setenv("SOURCE_DATE_EPOCH", bad, 1);
    EXPECT_EQ(ibfab::cli::source_date(), "") << bad;
  }
  ::unsetenv("SOURCE_DATE_EPOCH");
}

}  // namespace
