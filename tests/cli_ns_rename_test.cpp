// mongorestore's --nsFrom/--nsTo patterns (cli/mongo/restore.hpp, ns_renamer), without a server:
// which namespaces a pattern renames and to what, and the patterns refused before anything runs.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "mongo/restore.hpp"

namespace {

using oid::cli::ns_renamer;

ns_renamer make(const std::vector<std::string>& from, const std::vector<std::string>& to) {
  auto r = ns_renamer::make(from, to);
  EXPECT_TRUE(r.has_value()) << r.error();
  return r ? std::move(*r) : ns_renamer();
}

TEST(NsRenameTest, StarsTakeWhatTheirNsFromMatchedInOrder) {
  const auto r = make({"prod.*"}, {"staging.*"});
  EXPECT_EQ(r.rename("prod.orders"), "staging.orders");
  EXPECT_EQ(r.rename("prod.a.b"), "staging.a.b");
  EXPECT_EQ(r.rename("production.orders"), "production.orders");  // no match: unchanged
  EXPECT_EQ(r.rename("test.prod"), "test.prod");

  const auto users = make({"*.user*"}, {"*.member*"});
  EXPECT_EQ(users.rename("shop.users"), "shop.members");
  EXPECT_EQ(users.rename("shop.user_2024"), "shop.member_2024");
  EXPECT_EQ(users.rename("shop.orders"), "shop.orders");
}

TEST(NsRenameTest, NamedVariablesMayChangePlaces) {
  const auto r = make({"data.$kind$_$year$"}, {"$year$.$kind$"});
  // Each variable takes the shortest text that lets the rest match.
  EXPECT_EQ(r.rename("data.sales_2024"), "2024.sales");
  EXPECT_EQ(r.rename("data.big_sales_2024"), "sales_2024.big");
  EXPECT_EQ(r.rename("data.sales"), "data.sales");
}

TEST(NsRenameTest, TheFirstMatchingPairWins) {
  const auto r = make({"a.x", "a.*"}, {"b.special", "c.*"});
  EXPECT_EQ(r.rename("a.x"), "b.special");
  EXPECT_EQ(r.rename("a.y"), "c.y");
  EXPECT_TRUE(ns_renamer().empty());
  EXPECT_EQ(ns_renamer().rename("a.b"), "a.b");
}

TEST(NsRenameTest, BackslashMakesAStarOrADollarLiteral) {
  const auto r = make({R"(db.a\*b)", R"(db.\$x)"}, {"db.star", R"(db.dollar\$)"});
  EXPECT_EQ(r.rename("db.a*b"), "db.star");
  EXPECT_EQ(r.rename("db.aXb"), "db.aXb");
  EXPECT_EQ(r.rename("db.$x"), "db.dollar$");
}

TEST(NsRenameTest, BadPatternsAreRefusedSayingWhy) {
  const auto refused = [](std::vector<std::string> from, std::vector<std::string> to,
                          const std::string& why) {
    auto r = ns_renamer::make(from, to);
    ASSERT_FALSE(r.has_value()) << why;
    EXPECT_NE(r.error().find(why), std::string::npos) << r.error();
  };
  refused({"a.*"}, {}, "come in pairs");
  refused({"a.*", "b.*"}, {"c.*"}, "come in pairs");
  refused({"a.$x"}, {"b.c"}, "not closed");
  refused({"a.$$"}, {"b.c"}, "not closed");
  refused({"a.b\\"}, {"b.c"}, "escapes nothing");
  refused({"a.*"}, {"b.c"}, "has 0 '*'");
  refused({"a.b"}, {"b.*"}, "has 1 '*'");
  refused({"a.$x$"}, {"b.$y$"}, "$y$ is not in its --nsFrom");
}

// The namespace comes from a dump someone else made. Matching tried every way of splitting it
// among the wildcards, so a --nsFrom with eight of them against a 250-byte name that does not
// match took longer than anyone waits (fuzz_ns_rename found it); a match is now one pass per
// wildcard and position.
TEST(NsRenameTest, ManyWildcardsAgainstALongNameEnd) {
  const auto r = make({"*.*_*_*_*_*_*_*x"}, {"*.*_*_*_*_*_*_*y"});
  const std::string ns = "d." + std::string(250, '_');
  EXPECT_EQ(r.rename(ns), ns);  // no x: unchanged
  EXPECT_EQ(r.rename(ns + "x"), ns + "y");
  // A long name full of the literal between two wildcards: each start of the second wildcard was
  // tried against every end (time quadratic in the name's length).
  const auto two = make({"$a$.$b$x"}, {"$b$.$a$y"});
  const std::string dots(200000, '.');
  EXPECT_EQ(two.rename(dots), dots);
  EXPECT_EQ(two.rename(dots + "x"), dots.substr(1) + "." + "y");
}

}  // namespace
