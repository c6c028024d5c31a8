// oid_docgen: writes the manual pages and the bash and zsh completions of `oid` from the command's
// own tree (make_app), at build time, so that neither can drift from the command:
//
//   oid_docgen MAN_DIR COMPLETION_DIR
//
// MAN_DIR receives oid.1 and a page per command (oid-mongo-dump.1, ...); COMPLETION_DIR receives
// oid.bash (for bash-completion's directory, as `oid`) and _oid (for zsh's fpath).
//
// Written here rather than with help2man or pandoc: help2man sees one --help at a time and knows
// nothing of the tree or of which values an option takes, and docs/command.md is a guide, not a
// reference that lists every flag. CLI11 already holds all of it.
#include <CLI/CLI.hpp>
#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "cli.hpp"

#ifndef OID_VERSION_STRING
#  define OID_VERSION_STRING "unknown"
#endif

namespace {

using oid::cli::context;

/// One command of the tree: its words after `oid` ("mongo dump"; "" for oid itself).
struct command {
  std::string path;
  const CLI::App* app;
};

std::vector<const CLI::App*> visible_subcommands(const CLI::App& app) {
  // Hidden commands and CLI11's option groups (nameless apps) have no group or no name.
  return app.get_subcommands(
      [](const CLI::App* c) { return !c->get_name().empty() && !c->get_group().empty(); });
}

std::vector<const CLI::Option*> visible_options(const CLI::App& app) {
  return app.get_options([](const CLI::Option* o) { return !o->get_group().empty(); });
}

void collect(const CLI::App& app, const std::string& path, std::vector<command>& out) {
  out.push_back({path, &app});
  for (const CLI::App* sub : visible_subcommands(app)) {
    collect(*sub, path.empty() ? sub->get_name() : path + " " + sub->get_name(), out);
  }
}

std::string page_name(const std::string& path) {
  std::string name = path.empty() ? "oid" : "oid-";
  for (char c : path) name += c == ' ' ? '-' : c;
  return name;
}

std::vector<std::string> option_names(const CLI::Option& o) {
  std::vector<std::string> names;
  for (const auto& s : o.get_snames()) names.push_back("-" + s);
  for (const auto& l : o.get_lnames()) names.push_back("--" + l);
  return names;
}

// Flags expect no value (CLI11 gives them a type size of 1 all the same).
bool takes_value(const CLI::Option& o) { return o.get_expected_max() > 0; }

/// What a shell offers for an option's value or a positional argument: the words of an
/// IsMember check ("TEXT:{json,csv}"), "@files" for type FILE, "@dirs" for DIR, else "@none"
/// (a number, a URI, a filter: nothing to guess).
std::string value_completion(const CLI::Option& o) {
  const std::string type = o.get_type_name();
  if (const auto open = type.find('{'); open != std::string::npos) {
    const auto close = type.find('}', open);
    std::string words = type.substr(open + 1, close - open - 1);
    for (char& c : words) {
      if (c == ',') c = ' ';
    }
    return words;
  }
  std::string base = type.substr(0, type.find(':'));
  if (base.starts_with("[=") && base.ends_with("]")) base = base.substr(2, base.size() - 3);
  if (base == "FILE") return "@files";
  if (base == "DIR") return "@dirs";
  return "@none";
}

// ---- manual pages ----------------------------------------------------------------------------

/// Text as roff reads it: backslashes escaped, no line taken for a request.
std::string roff(std::string_view text) {
  std::string out;
  bool line_start = true;
  for (char c : text) {
    if (line_start && (c == '.' || c == '\'')) out += "\\&";
    if (c == '\\') {
      out += "\\e";
    } else {
      out += c;
    }
    line_start = c == '\n';
  }
  return out;
}

/// An option's name as roff prints it: hyphens that stay hyphens.
std::string roff_name(std::string_view name) {
  std::string out;
  for (char c : name) {
    if (c == '-') out += '\\';
    out += c;
  }
  return out;
}

std::string first_line(const std::string& text) { return text.substr(0, text.find('\n')); }

void write_option(std::ostream& out, const CLI::Option& o) {
  out << ".TP\n";
  if (o.nonpositional()) {
    const auto names = option_names(o);
    for (std::size_t i = 0; i < names.size(); ++i) {
      out << (i ? ", " : "") << "\\fB" << roff_name(names[i]) << "\\fR";
    }
    if (!o.get_type_name().empty()) out << " \\fI" << roff(o.get_type_name()) << "\\fR";
  } else {
    out << "\\fI" << roff(o.get_name(true)) << "\\fR";
  }
  out << '\n' << roff(o.get_description()) << '\n';
}

void write_page(const std::filesystem::path& dir, const command& cmd) {
  const std::string name = page_name(cmd.path);
  std::string upper = name;
  for (char& c : upper) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  std::ofstream out(dir / (name + ".1"), std::ios::binary);
  const CLI::App& app = *cmd.app;
  const std::string full = cmd.path.empty() ? "oid" : "oid " + cmd.path;

  out << ".\\\" Generated by oid_docgen from the command's definition (cli/docgen.cpp): do not "
         "edit.\n"
      << ".TH " << upper << " 1 \"\" \"oid " OID_VERSION_STRING "\" \"oid manual\"\n"
      << ".SH NAME\n"
      << roff_name(name) << " \\- " << roff(first_line(app.get_description())) << '\n'
      << ".SH SYNOPSIS\n";
  std::string usage = CLI::Formatter().make_usage(&app, full);  // the help's own usage line
  if (usage.rfind("Usage: ", 0) == 0) usage.erase(0, 7);
  while (!usage.empty() && usage.back() == '\n') usage.pop_back();
  out << ".nf\n"
      << roff(usage) << "\n.fi\n"
      << ".SH DESCRIPTION\n"
      << roff(app.get_description()) << '\n';

  std::vector<const CLI::Option*> positionals;
  for (const CLI::Option* o : visible_options(app)) {
    if (o->get_positional()) positionals.push_back(o);
  }
  if (!positionals.empty()) {
    out << ".SH ARGUMENTS\n";
    for (const CLI::Option* o : positionals) {
      out << ".TP\n\\fI" << roff(o->get_name(true)) << "\\fR\n"
          << roff(o->get_description()) << '\n';
    }
  }

  // Options by group, in the order the help shows them ("Options" first).
  std::vector<std::string> groups;
  for (const CLI::Option* o : visible_options(app)) {
    if (!o->nonpositional()) continue;
    if (std::find(groups.begin(), groups.end(), o->get_group()) == groups.end()) {
      groups.push_back(o->get_group());
    }
  }
  if (!groups.empty()) out << ".SH OPTIONS\n";
  for (const auto& group : groups) {
    if (group != "Options") out << ".SS " << roff(group) << '\n';
    for (const CLI::Option* o : visible_options(app)) {
      if (o->nonpositional() && o->get_group() == group) write_option(out, *o);
    }
  }

  const auto subs = visible_subcommands(app);
  if (!subs.empty()) {
    out << ".SH COMMANDS\n";
    for (const CLI::App* sub : subs) {
      const std::string sub_path =
          cmd.path.empty() ? sub->get_name() : cmd.path + " " + sub->get_name();
      out << ".TP\n\\fB" << roff_name(sub->get_name()) << "\\fR\n"
          << roff(first_line(sub->get_description())) << " See \\fB"
          << roff_name(page_name(sub_path)) << "\\fR(1).\n";
    }
  }

  out << ".SH EXIT STATUS\n"
      << ".TP\n0\nEverything went well.\n"
      << ".TP\n1\nSome input was bad: a document, a file or a server refused something (the rest "
         "was still processed), or the command failed.\n"
      << ".TP\n2\nA usage error (an unknown flag, flags that contradict each other), found before "
         "anything was done.\n";

  out << ".SH SEE ALSO\n";
  std::vector<std::string> see;
  if (!cmd.path.empty()) {
    const auto space = cmd.path.rfind(' ');
    see.push_back(page_name(space == std::string::npos ? "" : cmd.path.substr(0, space)));
  }
  for (const CLI::App* sub : subs) {
    see.push_back(page_name(cmd.path.empty() ? sub->get_name() : cmd.path + " " + sub->get_name()));
  }
  for (std::size_t i = 0; i < see.size(); ++i) {
    out << (i ? ",\n" : "") << "\\fB" << roff_name(see[i]) << "\\fR(1)";
  }
  if (!see.empty()) out << '\n';
  out << "\\fBoid help\\fR " << roff(cmd.path) << " gives this page's options as the command "
      << "knows them; docs/command.md in oid's sources is the guide, with examples.\n";
  if (!out.flush()) throw std::runtime_error("cannot write " + (dir / (name + ".1")).string());
}

// ---- completions -----------------------------------------------------------------------------

/// Single-quoted for both shells.
std::string shell_quoted(std::string_view text) {
  std::string out = "'";
  for (char c : text) {
    if (c == '\'') {
      out += "'\\''";
    } else {
      out += c;
    }
  }
  return out + "'";
}

/// "name:description" for zsh's _describe, its colons escaped.
std::string described(std::string_view name, std::string_view description) {
  std::string out;
  for (char c : name) {
    if (c == ':') out += '\\';
    out += c;
  }
  out += ':';
  out += first_line(std::string(description));
  return out;
}

std::string join(const std::vector<std::string>& words) {
  std::string out;
  for (const auto& w : words) out += (out.empty() ? "" : " ") + w;
  return out;
}

/// The tables both shells' functions read: per command path, its subcommands, its options, the
/// options that take a value, what their values are, and what its positional arguments are.
struct tables {
  struct row {
    std::string key;
    std::string value;
  };
  std::vector<row> commands, flags, valued, values, positional;
  std::vector<row> zsh_commands, zsh_flags;  // "name:description" entries, for _describe
};

tables make_tables(const std::vector<command>& commands) {
  tables t;
  for (const auto& cmd : commands) {
    std::vector<std::string> subs, zsh_subs, flags, zsh_flags, valued;
    for (const CLI::App* sub : visible_subcommands(*cmd.app)) {
      subs.push_back(sub->get_name());
      zsh_subs.push_back(shell_quoted(described(sub->get_name(), sub->get_description())));
    }
    std::string positional = "@none";
    for (const CLI::Option* o : visible_options(*cmd.app)) {
      // The first positional that is a file or has values: a namespace or a filter before it is
      // free text, nothing to offer.
      if (o->get_positional() && positional == "@none") positional = value_completion(*o);
      if (!o->nonpositional()) continue;
      const auto names = option_names(*o);
      for (const auto& n : names) {
        flags.push_back(n);
        zsh_flags.push_back(shell_quoted(described(n, o->get_description())));
      }
      if (takes_value(*o)) {
        for (const auto& n : names) valued.push_back(n);
      }
      // A flag may take a value after '=' (--archive[=FILE]): its type name says which.
      if (takes_value(*o) || !o->get_type_name().empty()) {
        std::string key;
        for (const auto& n : names)
          key += (key.empty() ? "" : "|") + shell_quoted(cmd.path + ":" + n);
        t.values.push_back({key, value_completion(*o)});
      }
    }
    const std::string key = shell_quoted(cmd.path);
    t.commands.push_back({key, join(subs)});
    t.zsh_commands.push_back({key, join(zsh_subs)});
    t.flags.push_back({key, join(flags)});
    t.zsh_flags.push_back({key, join(zsh_flags)});
    t.valued.push_back({key, " " + join(valued) + " "});
    t.positional.push_back({key, positional});
  }
  return t;
}

/// A shell function that sets REPLY (bash) or reply (zsh) from a case over its arguments.
void write_case(std::ostream& out, std::string_view function, std::string_view comment,
                std::string_view subject, const std::vector<tables::row>& rows, bool array,
                std::string_view fallback) {
  out << function << "() {  # " << comment << "\n  case " << subject << " in\n";
  for (const auto& row : rows) {
    if (row.value.find_first_not_of(' ') == std::string::npos || row.value == fallback) continue;
    out << "    " << row.key << ") " << (array ? "reply=(" : "REPLY=")
        << (array ? row.value : shell_quoted(row.value)) << (array ? ")" : "") << " ;;\n";
  }
  out << "    *) " << (array ? "reply=(" : "REPLY=") << fallback << (array ? ")" : "")
      << " ;;\n  esac\n}\n\n";
}

// The functions both shells' scripts define alike: which flags take a value, what their values
// and a command's arguments are.
void write_shared_cases(std::ostream& out, const tables& t) {
  write_case(out, "_oid_valued", "its flags that take a value, between spaces", "$1", t.valued,
             false, "''");
  write_case(out, "_oid_values", "a flag's values: words, @files, @dirs or @none", "$1:$2",
             t.values, false, "@none");
  write_case(out, "_oid_positional", "a command's arguments: words, @files, @dirs or @none", "$1",
             t.positional, false, "@none");
}

void write_bash(const std::filesystem::path& file, const tables& t) {
  std::ofstream out(file, std::ios::binary);
  out << "# bash completion for oid: its commands, flags and their values. Generated by "
         "oid_docgen\n"
         "# from the command's definition (cli/docgen.cpp): do not edit.\n\n";
  write_case(out, "_oid_commands", "the subcommands of a command path", "$1", t.commands, false,
             "''");
  write_case(out, "_oid_flags", "a command's flags", "$1", t.flags, false, "''");
  write_shared_cases(out, t);
  out << R"(# COMPREPLY from what a table said, for the word being completed ($2).
_oid_offer() {
  case $1 in
    @files) compopt -o filenames 2>/dev/null; mapfile -t COMPREPLY < <(compgen -f -- "$2") ;;
    @dirs) compopt -o filenames 2>/dev/null; mapfile -t COMPREPLY < <(compgen -d -- "$2") ;;
    @none) COMPREPLY=() ;;
    *) mapfile -t COMPREPLY < <(compgen -W "$1" -- "$2") ;;
  esac
}

_oid() {
  local cur=${COMP_WORDS[COMP_CWORD]} cmdpath="" opt="" w i REPLY
  # The command path: the words before the cursor that name subcommands, skipping flags and the
  # values of those that take one (bash splits --flag=value at the =).
  for ((i = 1; i < COMP_CWORD; i++)); do
    w=${COMP_WORDS[i]}
    if [[ $w == -* ]]; then
      if [[ ${COMP_WORDS[i + 1]} == "=" ]]; then
        ((i += 2))
      else
        _oid_valued "$cmdpath"
        [[ $REPLY == *" $w "* ]] && ((i++))
      fi
    else
      _oid_commands "$cmdpath"
      [[ " $REPLY " == *" $w "* ]] && cmdpath=${cmdpath:+$cmdpath }$w
    fi
  done
  # A flag's value: after "--flag ", "--flag=" or "--flag=partial".
  if [[ $cur == "=" ]]; then
    opt=${COMP_WORDS[COMP_CWORD - 1]}
    cur=""
  elif ((COMP_CWORD > 1)) && [[ ${COMP_WORDS[COMP_CWORD - 1]} == "=" ]]; then
    opt=${COMP_WORDS[COMP_CWORD - 2]}
  elif ((COMP_CWORD > 1)); then
    _oid_valued "$cmdpath"
    [[ $REPLY == *" ${COMP_WORDS[COMP_CWORD - 1]} "* ]] && opt=${COMP_WORDS[COMP_CWORD - 1]}
  fi
  if [[ -n $opt ]]; then
    _oid_values "$cmdpath" "$opt"
    _oid_offer "$REPLY" "$cur"
  elif [[ $cur == -* ]]; then
    _oid_flags "$cmdpath"
    _oid_offer "$REPLY" "$cur"
  else
    _oid_commands "$cmdpath"
    if [[ -n $REPLY ]]; then
      _oid_offer "$REPLY" "$cur"
    else
      _oid_positional "$cmdpath"
      _oid_offer "$REPLY" "$cur"
    fi
  fi
}

complete -F _oid oid
)";
  if (!out.flush()) throw std::runtime_error("cannot write " + file.string());
}

void write_zsh(const std::filesystem::path& file, const tables& t) {
  std::ofstream out(file, std::ios::binary);
  out << "#compdef oid\n"
         "# zsh completion for oid: its commands, flags and their values. Generated by oid_docgen\n"
         "# from the command's definition (cli/docgen.cpp): do not edit.\n\n";
  write_case(out, "_oid_commands", "the subcommands of a command path, name:description", "$1",
             t.zsh_commands, true, "");
  write_case(out, "_oid_flags", "a command's flags, name:description", "$1", t.zsh_flags, true, "");
  write_shared_cases(out, t);
  out << R"(# Offers what a table said.
_oid_offer() {
  case $1 in
    @files) _files ;;
    @dirs) _files -/ ;;
    @none) return 1 ;;
    *) compadd -- ${=1} ;;
  esac
}

_oid() {
  local cmdpath="" opt="" w i REPLY
  local -a reply names
  # The command path: the words before the cursor that name subcommands, skipping flags and the
  # values of those that take one.
  for ((i = 2; i < CURRENT; i++)); do
    w=${words[i]}
    if [[ $w == -* ]]; then
      if [[ $w != *=* ]]; then
        _oid_valued "$cmdpath"
        [[ $REPLY == *" $w "* ]] && ((i++))
      fi
    else
      _oid_commands "$cmdpath"
      names=(${reply%%:*})
      (( ${names[(Ie)$w]} )) && cmdpath=${cmdpath:+$cmdpath }$w
    fi
  done
  local cur=${words[CURRENT]}
  if [[ $cur == -*=* ]]; then
    opt=${cur%%=*}
    compset -P '*='
  elif ((CURRENT > 2)); then
    _oid_valued "$cmdpath"
    [[ $REPLY == *" ${words[CURRENT - 1]} "* ]] && opt=${words[CURRENT - 1]}
  fi
  if [[ -n $opt ]]; then
    _oid_values "$cmdpath" "$opt"
    _oid_offer "$REPLY"
  elif [[ $cur == -* ]]; then
    _oid_flags "$cmdpath"
    _describe -t flags 'flag' reply
  else
    _oid_commands "$cmdpath"
    if ((${#reply})); then
      _describe -t commands 'command' reply
    else
      _oid_positional "$cmdpath"
      _oid_offer "$REPLY"
    fi
  fi
}

if [[ $zsh_eval_context[-1] == loadautofunc ]]; then
  _oid "$@"
else
  compdef _oid oid
fi
)";
  if (!out.flush()) throw std::runtime_error("cannot write " + file.string());
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3) {
    std::cerr << "usage: oid_docgen MAN_DIR COMPLETION_DIR\n";
    return 2;
  }
  try {
    std::istringstream in;
    std::ostringstream out, err;
    context ctx{in, out, err, oid::cli::exit_ok, {}, false, 0, {}, false, {}, false};
    std::vector<std::string> help_topic;
    const auto app = oid::cli::make_app(ctx, help_topic);
    std::vector<command> commands;
    collect(*app, "", commands);

    const std::filesystem::path man_dir = argv[1], completion_dir = argv[2];
    std::filesystem::create_directories(man_dir);
    // Pages of commands since removed must not linger in the build tree and be installed.
    for (const auto& entry : std::filesystem::directory_iterator(man_dir)) {
      const std::string file = entry.path().filename().string();
      if (file.rfind("oid", 0) == 0 && entry.path().extension() == ".1") {
        std::filesystem::remove(entry.path());
      }
    }
    std::filesystem::create_directories(completion_dir);
    for (const auto& cmd : commands) write_page(man_dir, cmd);
    const tables t = make_tables(commands);
    write_bash(completion_dir / "oid.bash", t);
    write_zsh(completion_dir / "_oid", t);
  } catch (const std::exception& e) {
    std::cerr << "oid_docgen: " << e.what() << '\n';
    return 1;
  }
  return 0;
}
