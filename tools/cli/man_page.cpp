#include "tools/cli/man_page.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string_view>

#include "tools/cli/exit_status.h"

namespace ibfab::cli {
namespace {

// The pieces of --help reused as they are (usage, option names, a
// command's description): those of CLI11's default formatter, which ibfab's
// commands keep.
const CLI::Formatter kHelp;

// `text` as roff: a backslash prints as one, every '-' is a minus sign (so
// that an option copied from the page works), a leading '.' or '\'' starts
// no request, '"' is safe in a macro's arguments, and other than ASCII is
// named by its code point (read right whatever the reader's encoding; a
// byte that is no UTF-8 stands for the Latin-1 character).
std::string escape(std::string_view text) {
  std::string out;
  if (!text.empty() && (text[0] == '.' || text[0] == '\'')) out += "\\&";
  for (std::size_t i = 0; i < text.size(); ++i) {
    const auto c = static_cast<unsigned char>(text[i]);
    if (c == '\\') out += "\\(rs";
    else if (c == '-') out += "\\-";
    else if (c == '"') out += "\\(dq";
    else if (c < 0x80) out += static_cast<char>(c);
    else {
      std::size_t len = c >= 0xF0 ? 4 : c >= 0xE0 ? 3 : c >= 0xC0 ? 2 : 1;
      uint32_t code = len == 1 ? c : c & (0xFFu >> (len + 1));
      for (std::size_t k = 1; k < len; ++k) {
        const auto next = i + k < text.size() ? static_cast<unsigned char>(text[i + k]) : 0u;
        if ((next & 0xC0) != 0x80) {
          len = 1;
          code = c;
          break;
        }
        code = code << 6 | (next & 0x3F);
      }
      i += len - 1;
      char name[16];
      std::snprintf(name, sizeof name, "\\[u%04X]", static_cast<unsigned>(code));
      out += name;
    }
  }
  return out;
}

std::string bold(std::string_view s) { return "\\fB" + escape(s) + "\\fR"; }
std::string italic(std::string_view s) { return "\\fI" + escape(s) + "\\fR"; }

// `text`'s lines as roff text lines, which the reader fills into one
// paragraph as --help's lines are one description; an empty line is a
// blank line, and indented lines (a synopsis, an example) are kept as
// they are, unfilled.
void text_lines(std::ostream& out, std::string_view s) {
  bool verbatim = false;
  while (!s.empty()) {
    const std::size_t end = std::min(s.find('\n'), s.size());
    std::string_view line = s.substr(0, end);
    line = line.substr(0, line.find_last_not_of(" \t") + 1);
    const bool indented = line.starts_with(' ');
    if (indented != verbatim) out << (indented ? ".nf\n" : ".fi\n");
    verbatim = indented;
    out << (line.empty() ? ".sp" : escape(line)) << '\n';
    s.remove_prefix(std::min(end + 1, s.size()));
  }
  if (verbatim) out << ".fi\n";
}

// The subcommands --help lists: named, and not in the hidden group "".
std::vector<const CLI::App*> shown_subcommands(const CLI::App& app) {
  return app.get_subcommands([](const CLI::App* s) { return !s->get_name().empty() && !s->get_group().empty(); });
}

// `app`'s words from the root: "ibfab topo gen".
std::string command_words(const CLI::App& app) {
  const CLI::App* parent = app.get_parent();
  return parent ? command_words(*parent) + " " + app.get_name() : app.get_name();
}

const CLI::App& root_of(const CLI::App& app) { return app.get_parent() ? root_of(*app.get_parent()) : app; }

std::string page_name(const CLI::App& app) {
  std::string name = command_words(app);
  for (char& c : name)
    if (c == ' ') c = '-';
  return name;
}

// The reference to `app`'s page: ibfab-run(1).
std::string page_reference(const CLI::App& app) { return bold(page_name(app)) + "(1)"; }

// --help's usage line, its command in bold.
std::string usage(const CLI::App& app) {
  std::string rest = kHelp.make_usage(&app, "");  // "Usage: [OPTIONS] SPEC\n"
  rest = rest.substr(rest.find(':') + 1);
  while (!rest.empty() && rest.back() == '\n') rest.pop_back();
  return bold(command_words(app)) + escape(rest);
}

// One .TP entry of --help's: the names (options in bold, positionals in
// italics) and what follows them (the type, '=' and the default, "..."
// when repeatable), then the description and what else --help says of it.
void option(std::ostream& out, const CLI::App& app, const CLI::Option& opt, bool positional) {
  out << ".TP\n";
  std::string names = kHelp.make_option_name(&opt, positional);
  for (std::size_t start = 0; start <= names.size();) {
    const std::size_t comma = std::min(names.find(',', start), names.size());
    const std::string_view name = std::string_view(names).substr(start, comma - start);
    out << (start ? ", " : "") << (positional ? italic(name) : bold(name));
    start = comma + 1;
  }
  std::string also;  // what --help puts after the type: sentences here
  if (!opt.get_option_text().empty()) {
    out << ' ' << escape(opt.get_option_text());
  } else {
    if (opt.get_type_size() != 0) {
      if (!opt.get_type_name().empty()) out << ' ' << italic(opt.get_type_name());
      if (!opt.get_default_str().empty()) out << '=' << escape(opt.get_default_str());
      if (opt.get_expected_max() == CLI::detail::expected_max_vector_size) out << " ...";
      else if (opt.get_expected_min() > 1) out << " x " << opt.get_expected();
      if (opt.get_required()) also += " Required.";
    }
    if (!opt.get_envname().empty()) also += " Environment: " + opt.get_envname() + ".";
    // The options it names, in the order they were declared.
    const auto listed = [&app](const std::string& what, const std::set<CLI::Option*>& named) {
      std::string s;
      for (const CLI::Option* o : app.get_options())
        if (std::ranges::find(named, o) != named.end()) s += (s.empty() ? " " + what + ": " : ", ") + o->get_name();
      return s.empty() ? s : s + ".";
    };
    also += listed("Needs", opt.get_needs()) + listed("Excludes", opt.get_excludes());
  }
  out << '\n';
  text_lines(out, opt.get_description());
  if (!also.empty()) out << ".br\n" << escape(also.substr(1)) << '\n';
}

// `app`'s positionals, then its options group by group as --help shows
// them; each group under a heading (`heading` and its name) when there are
// several.
void options(std::ostream& out, const CLI::App& app, const char* heading) {
  for (const CLI::Option* o : app.get_options())
    if (!o->get_group().empty() && o->get_positional()) option(out, app, *o, true);
  std::vector<std::string> groups = app.get_groups();
  std::erase(groups, std::string());
  for (const std::string& group : groups) {
    const std::vector<const CLI::Option*> in_group =
        app.get_options([&group](const CLI::Option* o) { return o->get_group() == group && o->nonpositional(); });
    if (in_group.empty()) continue;
    if (groups.size() > 1) out << heading << escape(group) << "\n";
    for (const CLI::Option* o : in_group) option(out, app, *o, false);
  }
}

// A command's subcommands described in place, every level down.
void subcommands(std::ostream& out, const CLI::App& app) {
  for (const CLI::App* sub : shown_subcommands(app)) {
    out << ".SS \"" << escape(command_words(*sub)) << "\"\n";
    text_lines(out, kHelp.make_description(sub));
    options(out, *sub, ".PP\n.B ");
    subcommands(out, *sub);
  }
}

// The synopsis: `app`'s usage and, on a command's page, its subcommands'.
void synopsis(std::ostream& out, const CLI::App& app, bool with_subcommands) {
  out << usage(app) << '\n';
  if (!with_subcommands) return;
  for (const CLI::App* sub : shown_subcommands(app)) {
    out << ".br\n";
    synopsis(out, *sub, true);
  }
}

// NAME's summary: the description's first line, without a leading
// "NAME: " and a trailing '.'.
std::string summary(const CLI::App& app) {
  std::string s = app.get_description().substr(0, app.get_description().find('\n'));
  const std::string prefix = app.get_name() + ": ";
  if (s.starts_with(prefix)) s.erase(0, prefix.size());
  if (s.ends_with('.')) s.pop_back();
  return s;
}

}  // namespace

std::string man_page(const CLI::App& cmd, const ManPageTitle& title) {
  const bool root = cmd.get_parent() == nullptr;
  const std::string name = page_name(cmd);
  std::string upper = name;
  for (char& c : upper) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  const std::string program = root_of(cmd).get_name();
  std::ostringstream out;
  out << ".TH \"" << escape(upper) << "\" 1 \"" << escape(title.date) << "\" \""
      << escape(program + " " + title.version) << "\" \"" << escape(program) << " Manual\"\n";
  const std::string what = summary(cmd);
  out << ".SH NAME\n" << escape(name) << (what.empty() ? "" : " \\- " + escape(what)) << '\n';
  out << ".SH SYNOPSIS\n";
  synopsis(out, cmd, !root);
  out << ".SH DESCRIPTION\n";
  text_lines(out, kHelp.make_description(&cmd));
  out << ".SH OPTIONS\n";
  options(out, cmd, ".SS ");
  const std::vector<const CLI::App*> commands = shown_subcommands(cmd);
  if (!commands.empty()) {
    out << ".SH COMMANDS\n";
    if (root) {
      for (const CLI::App* sub : commands) {
        out << ".TP\n" << bold(sub->get_name()) << '\n';
        text_lines(out, sub->get_description());
        out << ".br\nSee " << page_reference(*sub) << ".\n";
      }
    } else {
      subcommands(out, cmd);
    }
  }
  out << ".SH \"EXIT STATUS\"\n";
  for (const ExitStatus& s : kExitStatuses) out << ".TP\n.B " << s.code << '\n' << escape(s.meaning) << '\n';
  // The root's page points to its commands' pages; a command's, to the root's.
  if (!root || !commands.empty()) out << ".SH \"SEE ALSO\"\n";
  if (root) {
    for (std::size_t i = 0; i < commands.size(); ++i)
      out << page_reference(*commands[i]) << (i + 1 < commands.size() ? "," : "") << '\n';
  } else {
    out << page_reference(*cmd.get_parent()) << '\n';
  }
  return out.str();
}

std::vector<std::string> write_man_pages(const CLI::App& root, const std::filesystem::path& dir,
                                         const ManPageTitle& title) {
  std::filesystem::create_directories(dir);
  std::vector<const CLI::App*> pages{&root};
  for (const CLI::App* sub : shown_subcommands(root)) pages.push_back(sub);
  std::vector<std::string> files;
  for (const CLI::App* page : pages) {
    files.push_back(page_name(*page) + ".1");
    const std::filesystem::path path = dir / files.back();
    std::ofstream out(path);
    out << man_page(*page, title);
    out.close();
    if (!out) throw std::runtime_error(path.string() + ": cannot write");
  }
  return files;
}

std::string source_date() {
  const char* epoch = std::getenv("SOURCE_DATE_EPOCH");
  if (!epoch) return {};
  const std::string_view s = epoch;
  int64_t seconds = 0;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), seconds);
  if (s.empty() || ec != std::errc() || end != s.data() + s.size() || seconds < 0) return {};
  const auto t = static_cast<std::time_t>(seconds);
  std::tm day{};
  char date[16];
  if (!::gmtime_r(&t, &day) || std::strftime(date, sizeof date, "%Y-%m-%d", &day) == 0) return {};
  return date;
}

}  // namespace ibfab::cli
