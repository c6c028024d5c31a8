#include <unistd.h>

#include <CLI/CLI.hpp>
#include <iostream>
#include <oid/error.hpp>
#include <vector>

#include "cli.hpp"

#ifndef OID_VERSION_STRING
#  define OID_VERSION_STRING "unknown"
#endif

namespace oid::cli {
namespace {

// The help of one command, with the whole command in its usage line ("oid bson dump"). Through the
// formatter, not App::help(): after parsing, help() shows the parsed subcommand instead, so
// `oid help` would explain `help` rather than list the commands.
std::string help_for(const CLI::App& target) {
  std::string name = target.get_name();
  for (const CLI::App* p = target.get_parent(); p != nullptr; p = p->get_parent()) {
    name = p->get_name() + " " + name;
  }
  return target.get_formatter()->make_help(&target, name, CLI::AppFormatMode::Normal);
}

}  // namespace

std::unique_ptr<CLI::App> make_app(context& ctx, std::vector<std::string>& help_topic) {
  auto app = std::make_unique<CLI::App>(
      "oid: MongoDB ObjectIds, BSON and a lean MongoDB client.\n"
      "With no command, prints one new ObjectId.",
      "oid");
  app->set_version_flag("--version", "oid " OID_VERSION_STRING);
  app->require_subcommand(0, 1);
  app->fallthrough(false);
  app->add_subcommand("help", "Show help for oid or for one command")
      ->add_option("command", help_topic, "The command to explain");

  add_id_commands(*app, ctx);
  add_check_unique_command(*app, ctx);
  add_bson_commands(*app, ctx);
  add_mongo_commands(*app, ctx);
  return app;
}

int run(std::span<const std::string_view> args, std::istream& in, std::ostream& out,
        std::ostream& err) {
  return run(args, in, out, err, &out == &std::cout && ::isatty(STDOUT_FILENO) == 1);
}

int run(std::span<const std::string_view> args, std::istream& in, std::ostream& out,
        std::ostream& err, bool out_is_terminal) {
  context ctx{in, out, err, exit_ok, {}, false, 0, {}, out_is_terminal, {}, false};
  std::vector<std::string> help_topic;
  const std::unique_ptr<CLI::App> owner = make_app(ctx, help_topic);
  CLI::App& app = *owner;
  const CLI::App* help = app.get_subcommand("help");

  // CLI11 takes the arguments in reverse order.
  std::vector<std::string> reversed(args.rbegin(), args.rend());
  try {
    app.parse(std::move(reversed));
  } catch (const CLI::CallForHelp&) {
    // --help on the app or a subcommand: CLI11 sets the parsed subcommand chain for us.
    const CLI::App* target = &app;
    while (!target->get_subcommands().empty()) target = target->get_subcommands().front();
    out << help_for(*target);
    return exit_ok;
  } catch (const CLI::CallForAllHelp&) {
    out << app.help("", CLI::AppFormatMode::All);
    return exit_ok;
  } catch (const CLI::CallForVersion&) {
    out << "oid " OID_VERSION_STRING "\n";
    return exit_ok;
  } catch (const CLI::ParseError& e) {
    err << "oid: " << e.what() << "\nRun 'oid --help' for usage.\n";
    return exit_usage;
  } catch (const oid::exception& e) {
    err << "oid: " << e.what();
    if (e.offset() != 0) err << " (at byte " << e.offset() << ")";
    err << '\n';
    return exit_bad_input;
  } catch (const std::exception& e) {
    err << "oid: " << e.what() << '\n';
    return exit_bad_input;
  }

  if (help->parsed()) {
    if (help_topic.empty()) {
      out << help_for(app);
      return exit_ok;
    }
    const CLI::App* target = &app;
    for (const auto& name : help_topic) {
      try {
        target = const_cast<CLI::App*>(target)->get_subcommand(name);
      } catch (const CLI::OptionNotFound&) {
        err << "oid: help: no command " << name << "\nRun 'oid help' for the list.\n";
        return exit_usage;
      }
    }
    out << help_for(*target);
    return exit_ok;
  }
  if (app.get_subcommands().empty()) print_one_new_id(ctx);
  out.flush();
  return ctx.status;
}

}  // namespace oid::cli
