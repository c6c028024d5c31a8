// SCRAM message arithmetic (src/mongo/auth/scram.hpp): the published example conversations,
// written here as data (fixed nonces): RFC 5802 §5 (SCRAM-SHA-1), RFC 7677 §3 (SCRAM-SHA-256) and
// MongoDB's authentication specification (auth.md, SCRAM-SHA-1 with its MD5 pre-hash), SASLprep
// (RFC 4013), and every way a server message can be malformed.
#include <gtest/gtest.h>

#include <set>
#include <string>
#include <thread>
#include <vector>

#include "detail/hex.hpp"
#include "mongo/auth/scram.hpp"
#include "support/matchers.hpp"

namespace {

using oid::errc;
using oid::mongo::secret;
using oid::testing::HasError;
using oid::testing::HasErrorAt;
using namespace oid::mongo::detail;

std::string hex(std::span<const std::uint8_t> bytes) {
  std::string s;
  for (auto b : bytes) s.append(&oid::detail::hex_pairs[2 * std::size_t{b}], 2);
  return s;
}

// A malformed server message and the error it must give.
struct bad_message {
  const char* message;
  std::error_code code;
  std::size_t offset;
};

std::vector<std::uint8_t> bytes(std::string_view s) { return {s.begin(), s.end()}; }

// Vector 1: SCRAM-SHA-1, MongoDB's variant (auth.md "SCRAM-SHA-1" / "Conversation").
TEST(ScramTest, Sha1ConversationOfTheSpecification) {
  auto c = scram_conversation::start(scram_mechanism::sha1, "user", secret("pencil"), nullptr,
                                     "fyko+d2lbbFgONRv9qkxdawL");
  ASSERT_TRUE(c);
  EXPECT_EQ(scram_mechanism_name(c->mechanism()), "SCRAM-SHA-1");
  EXPECT_EQ(c->client_first(), "n,,n=user,r=fyko+d2lbbFgONRv9qkxdawL");
  const auto final = c->client_final(
      "r=fyko+d2lbbFgONRv9qkxdawLHo+Vgk7qvUOKUwuWLIWg4l/9SraGMHEE,s=rQ9ZY3MntBeuP3E1TDVC4w==,"
      "i=10000");
  ASSERT_TRUE(final);
  EXPECT_EQ(*final,
            "c=biws,r=fyko+d2lbbFgONRv9qkxdawLHo+Vgk7qvUOKUwuWLIWg4l/9SraGMHEE,"
            "p=MC2T8BvbmWRckDw8oWl5IVghwCY=");
  EXPECT_TRUE(c->verify_server_final("v=UMWeI25JD1yNYZRMpZ4VHvhZ9e0="));
}

TEST(ScramTest, Sha1IntermediateValues) {
  const auto prepared = scram_prepare_password(scram_mechanism::sha1, "user", secret("pencil"));
  ASSERT_TRUE(prepared);
  EXPECT_EQ(prepared->reveal(), "1c33006ec1ffd90f9cadcbcc0e118200");
  const auto salt = bytes("\xad\x0f\x59\x63\x73\x27\xb4\x17\xae\x3f\x71\x35\x4c\x35\x42\xe3");
  EXPECT_EQ(hex(scram_salt_password(scram_mechanism::sha1, *prepared, salt, 10000)->bytes()),
            "6abd37850da6e327df8dc5afd430791052f92499");
}

// Vector 3: RFC 5802 §5, the generic SCRAM-SHA-1 core without MongoDB's MD5 step.
TEST(ScramTest, Rfc5802SaltedPassword) {
  const auto parsed = parse_scram_server_first(
      "r=fyko+d2lbbFgONRv9qkxdawL3rfcNHYJY1ZVvWVs7j,s=QSXCR+Q6sek8bf92,i=4096",
      "fyko+d2lbbFgONRv9qkxdawL");
  ASSERT_TRUE(parsed);
  EXPECT_EQ(hex(scram_salt_password(scram_mechanism::sha1, secret("pencil"), parsed->salt, 4096)
                    ->bytes()),
            "1d96ee3a529b5a5f9e47c01f229a2cb8a6e15f7d");
}

// Vector 2: SCRAM-SHA-256 (auth.md "SCRAM-SHA-256" / "Conversation", RFC 7677 §3).
TEST(ScramTest, Sha256ConversationOfTheSpecification) {
  auto c = scram_conversation::start(scram_mechanism::sha256, "user", secret("pencil"), nullptr,
                                     "rOprNGfwEbeRWgbNEkqO");
  ASSERT_TRUE(c);
  EXPECT_EQ(scram_mechanism_name(c->mechanism()), "SCRAM-SHA-256");
  EXPECT_EQ(c->client_first(), "n,,n=user,r=rOprNGfwEbeRWgbNEkqO");
  const auto final = c->client_final(
      "r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096");
  ASSERT_TRUE(final);
  EXPECT_EQ(*final,
            "c=biws,r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,"
            "p=dHzbZapWIk4jUhN+Ute9ytag9zjfMHgsqmmiz7AndVQ=");
  EXPECT_TRUE(c->verify_server_final("v=6rriTRBi23WpRR/wtup+mMhUZUn/dB5nLTJRsjl95G4="));
}

TEST(ScramTest, Sha256SaltedPassword) {
  const auto parsed = parse_scram_server_first(
      "r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096",
      "rOprNGfwEbeRWgbNEkqO");
  ASSERT_TRUE(parsed);
  EXPECT_EQ(hex(scram_salt_password(scram_mechanism::sha256, secret("pencil"), parsed->salt, 4096)
                    ->bytes()),
            "c4a49510323ab4f952cac1fa99441939e78ea74d6be81ddf7096e87513dc615d");
}

// A server that cannot prove it knows the password is refused.
TEST(ScramTest, RefusesAWrongOrMissingServerSignature) {
  auto c = scram_conversation::start(scram_mechanism::sha256, "user", secret("pencil"), nullptr,
                                     "rOprNGfwEbeRWgbNEkqO");
  ASSERT_TRUE(c);
  // Before client_final there is no signature to check against.
  EXPECT_THAT(c->verify_server_final("v=6rriTRBi23WpRR/wtup+mMhUZUn/dB5nLTJRsjl95G4="),
              HasErrorAt(oid::mongo::errc::authentication_failed, 2));
  ASSERT_TRUE(c->client_final(
      "r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096"));
  // One bit off, a truncated one, the SHA-1 vector's, and the server's own refusal.
  EXPECT_THAT(c->verify_server_final("v=6rriTRBi23WpRR/wtup+mMhUZUn/dB5nLTJRsjl95G0="),
              HasErrorAt(oid::mongo::errc::authentication_failed, 2));
  EXPECT_THAT(c->verify_server_final("v=6rriTRBi23WpRR/wtup+mMhUZUn/dB5nLTJRsjl9"),
              HasErrorAt(oid::mongo::errc::authentication_failed, 2));
  EXPECT_THAT(c->verify_server_final("v=UMWeI25JD1yNYZRMpZ4VHvhZ9e0="),
              HasErrorAt(oid::mongo::errc::authentication_failed, 2));
  EXPECT_THAT(c->verify_server_final("e=invalid-proof"),
              HasErrorAt(oid::mongo::errc::authentication_failed, 2));
  EXPECT_THAT(c->verify_server_final("v=6rriTRBi23WpRR/wtup+mMhUZUn/dB5nLTJRsjl95G4"),
              HasErrorAt(errc::invalid_base64, 45));
  EXPECT_TRUE(c->verify_server_final("v=6rriTRBi23WpRR/wtup+mMhUZUn/dB5nLTJRsjl95G4="));
}

TEST(ScramTest, WrongPasswordGivesAnotherProof) {
  auto c = scram_conversation::start(scram_mechanism::sha256, "user", secret("pencil2"), nullptr,
                                     "rOprNGfwEbeRWgbNEkqO");
  ASSERT_TRUE(c);
  const auto final = c->client_final(
      "r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096");
  ASSERT_TRUE(final);
  EXPECT_EQ(final->find("dHzbZapWIk4jUhN+Ute9ytag9zjfMHgsqmmiz7AndVQ="), std::string::npos);
  EXPECT_THAT(c->verify_server_final("v=6rriTRBi23WpRR/wtup+mMhUZUn/dB5nLTJRsjl95G4="),
              HasErrorAt(oid::mongo::errc::authentication_failed, 2));
}

TEST(ScramTest, EscapesTheUserNameAndKeepsItUnnormalised) {
  auto c = scram_conversation::start(scram_mechanism::sha256, "a,b=c", secret("p"), nullptr, "N");
  ASSERT_TRUE(c);
  EXPECT_EQ(c->client_first(), "n,,n=a=2Cb=3Dc,r=N");
  // U+2168 ROMAN NUMERAL NINE goes on the wire as is (auth.md Test Plan step 4).
  auto nine =
      scram_conversation::start(scram_mechanism::sha256, "\u2168", secret("\u2163"), nullptr, "N");
  ASSERT_TRUE(nine);
  EXPECT_EQ(nine->client_first(), "n,,n=\xe2\x85\xa8,r=N");
}

TEST(ScramTest, RandomNonces) {
  const auto a = scram_client_nonce();
  const auto b = scram_client_nonce();
  ASSERT_TRUE(a);
  ASSERT_TRUE(b);
  EXPECT_EQ(a->size(), 32u);  // 24 bytes in base64
  EXPECT_NE(*a, *b);
  auto c = scram_conversation::start(scram_mechanism::sha1, "user", secret("pencil"));
  ASSERT_TRUE(c);
  EXPECT_EQ(c->client_nonce().size(), 32u);
}

// auth.md Test Plan step 4 and RFC 4013 §3.
TEST(ScramTest, SaslPrep) {
  struct {
    const char* in;
    const char* want;
  } const cases[] = {
      {"I\u00ADX", "IX"}, {"IX", "IX"},        {"\u2163", "IV"}, {"I\u00ADV", "IV"},
      {"user", "user"},   {"USER", "USER"},    {"\u00AA", "a"},  {"\u2168", "IX"},
      {"", ""},           {"a\u00A0b", "a b"},  // non-ASCII space to SPACE
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.in);
    const auto r = saslprep(c.in);
    ASSERT_TRUE(r);
    EXPECT_EQ(r->reveal(), c.want);
  }
  EXPECT_THAT(saslprep("\u0007"), HasErrorAt(oid::mongo::errc::invalid_password, 0));  // control
  EXPECT_THAT(saslprep("\u0627\u0031"),
              HasErrorAt(oid::mongo::errc::invalid_password, 0));  // bidi rule
  EXPECT_THAT(saslprep(std::string_view("ab\0c", 4)),
              HasErrorAt(oid::mongo::errc::invalid_password, 2));
  EXPECT_THAT(saslprep("a\xff"), HasErrorAt(errc::invalid_utf8, 0));
  EXPECT_THAT(saslprep("\U000E0001"),
              HasErrorAt(oid::mongo::errc::invalid_password, 0));  // tagging char
}

TEST(ScramTest, PasswordPreparationPerMechanism) {
  // SHA-256: SASLprep, so both forms of the password give one salted password.
  const auto a = scram_prepare_password(scram_mechanism::sha256, "IX", secret("I\u00ADX"));
  const auto b = scram_prepare_password(scram_mechanism::sha256, "IX", secret("IX"));
  ASSERT_TRUE(a);
  ASSERT_TRUE(b);
  EXPECT_EQ(*a, *b);
  EXPECT_THAT(scram_prepare_password(scram_mechanism::sha256, "u", secret("\u0007")),
              HasError(oid::mongo::errc::invalid_password));
  // SHA-1: no SASLprep, the bytes as given, and even a control character is fine.
  const auto c = scram_prepare_password(scram_mechanism::sha1, "IX", secret("I\u00ADX"));
  const auto d = scram_prepare_password(scram_mechanism::sha1, "IX", secret("IX"));
  ASSERT_TRUE(c);
  ASSERT_TRUE(d);
  EXPECT_NE(*c, *d);
  EXPECT_EQ(d->size(), 32u);
  EXPECT_TRUE(scram_prepare_password(scram_mechanism::sha1, "u", secret("\u0007")));
}

// Short messages so that each offset is easy to check by eye: client nonce "abc", salt "ABC".
//   r=abcdef,s=QUJD,i=4096
//   0 2     8 11  15 18   22
TEST(ScramTest, ParsesServerFirst) {
  const auto r = parse_scram_server_first("r=abcdef,s=QUJD,i=4096", "abc");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->nonce, "abcdef");
  EXPECT_EQ(r->salt, bytes("ABC"));
  EXPECT_EQ(r->iterations, 4096u);
  EXPECT_EQ(r->extensions, "");
  EXPECT_EQ(r->to_string(), "r=abcdef,s=QUJD,i=4096");

  const auto big = parse_scram_server_first("r=abcd,s=QUI=,i=1000000,x=1,y=a=b", "abc");
  ASSERT_TRUE(big);
  EXPECT_EQ(big->salt, bytes("AB"));
  EXPECT_EQ(big->iterations, scram_max_iterations);
  EXPECT_EQ(big->extensions, "x=1,y=a=b");
  EXPECT_EQ(big->to_string(), "r=abcd,s=QUI=,i=1000000,x=1,y=a=b");
}

TEST(ScramTest, RefusesMalformedServerFirst) {
  const bad_message cases[] = {
      {"", oid::mongo::errc::invalid_scram_message, 0},
      {"r", oid::mongo::errc::invalid_scram_message, 0},
      {"m=x,r=abcdef,s=QUJD,i=4096", oid::mongo::errc::invalid_scram_message,
       0},  // mandatory extension
      {"s=QUJD,r=abcdef,i=4096", oid::mongo::errc::invalid_scram_message, 0},  // out of order
      {"R=abcdef,s=QUJD,i=4096", oid::mongo::errc::invalid_scram_message, 0},
      {"r:abcdef,s=QUJD,i=4096", oid::mongo::errc::invalid_scram_message, 0},
      {"r=,s=QUJD,i=4096", oid::mongo::errc::invalid_scram_message, 2},
      {"r=abc def,s=QUJD,i=4096", oid::mongo::errc::invalid_scram_message, 2},  // not printable
      {"r=abc\x7f,s=QUJD,i=4096", oid::mongo::errc::invalid_scram_message, 2},
      {"r=xyzdef,s=QUJD,i=4096", oid::mongo::errc::authentication_failed,
       2},  // not the client's nonce
      {"r=abc,s=QUJD,i=4096", oid::mongo::errc::authentication_failed, 2},  // nothing added
      {"r=ab,s=QUJD,i=4096", oid::mongo::errc::authentication_failed, 2},
      {"r=abcdef", oid::mongo::errc::invalid_scram_message, 8},  // missing s
      {"r=abcdef,", oid::mongo::errc::invalid_scram_message, 8},
      {"r=abcdef,i=4096,s=QUJD", oid::mongo::errc::invalid_scram_message, 9},
      {"r=abcdef,r=abcdef,s=QUJD,i=4096", oid::mongo::errc::invalid_scram_message, 9},  // repeated
      {"r=abcdef,s=,i=4096", oid::mongo::errc::invalid_scram_message, 11},
      {"r=abcdef,s=QUJ,i=4096", errc::invalid_base64, 14},   // not a multiple of 4
      {"r=abcdef,s=QU!D,i=4096", errc::invalid_base64, 13},  // outside the alphabet
      {"r=abcdef,s=QUJ=,i=4096", errc::invalid_base64, 13},  // bits after the last byte
      {"r=abcdef,s=QR==,i=4096", errc::invalid_base64, 12},
      {"r=abcdef,s=Q===,i=4096", errc::invalid_base64, 12},
      {"r=abcdef,s=QUJD", oid::mongo::errc::invalid_scram_message, 15},  // missing i
      {"r=abcdef,s=QUJD,s=QUJD,i=4096", oid::mongo::errc::invalid_scram_message, 16},
      {"r=abcdef,s=QUJD,i=", oid::mongo::errc::invalid_scram_message, 18},
      {"r=abcdef,s=QUJD,i=04096", oid::mongo::errc::invalid_scram_message, 18},  // leading zero
      {"r=abcdef,s=QUJD,i=+4096", oid::mongo::errc::invalid_scram_message, 18},
      {"r=abcdef,s=QUJD,i=4096x", oid::mongo::errc::invalid_scram_message, 18},
      {"r=abcdef,s=QUJD,i=4294967296", oid::mongo::errc::invalid_scram_message,
       18},  // beyond 32 bits
      {"r=abcdef,s=QUJD,i=99999999999", oid::mongo::errc::invalid_scram_message, 18},
      {"r=abcdef,s=QUJD,i=4095", oid::mongo::errc::authentication_failed,
       18},  // too few iterations
      {"r=abcdef,s=QUJD,i=1", oid::mongo::errc::authentication_failed, 18},
      {"r=abcdef,s=QUJD,i=4096,", oid::mongo::errc::invalid_scram_message, 22},  // trailing comma
      {"r=abcdef,s=QUJD,i=4096,i=4096", oid::mongo::errc::invalid_scram_message, 23},
      {"r=abcdef,s=QUJD,i=4096,r=abcdef", oid::mongo::errc::invalid_scram_message, 23},
      {"r=abcdef,s=QUJD,i=4096,m=x", oid::mongo::errc::invalid_scram_message, 23},
      {"r=abcdef,s=QUJD,i=4096,x=", oid::mongo::errc::invalid_scram_message, 25},
      {"r=abcdef,s=QUJD,i=4096,5=x", oid::mongo::errc::invalid_scram_message, 23},
      {"r=abcdef,s=QUJD,i=4096,,x=1", oid::mongo::errc::invalid_scram_message, 23},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.message);
    EXPECT_THAT(parse_scram_server_first(c.message, "abc"), HasErrorAt(c.code, c.offset));
  }
  // The specification's own example of a low count: vector 1 with i=4095.
  EXPECT_THAT(parse_scram_server_first("r=fyko+d2lbbFgONRv9qkxdawLHo+Vgk7qvUOKUwuWLIWg4l/9SraGMHEE,"
                                       "s=rQ9ZY3MntBeuP3E1TDVC4w==,i=4095",
                                       "fyko+d2lbbFgONRv9qkxdawL"),
              HasErrorAt(oid::mongo::errc::authentication_failed, 88));
}

TEST(ScramTest, ClientFinalReportsTheServerFirstError) {
  auto c =
      scram_conversation::start(scram_mechanism::sha256, "user", secret("pencil"), nullptr, "abc");
  ASSERT_TRUE(c);
  EXPECT_THAT(c->client_final("r=abcdef,s=QUJD,i=4095"),
              HasErrorAt(oid::mongo::errc::authentication_failed, 18));
  EXPECT_THAT(c->client_final("r=zzz,s=QUJD,i=4096"),
              HasErrorAt(oid::mongo::errc::authentication_failed, 2));
}

TEST(ScramTest, ParsesServerFinal) {
  const auto v = parse_scram_server_final("v=QUJD");
  ASSERT_TRUE(v);
  EXPECT_EQ(v->verifier, bytes("ABC"));
  EXPECT_EQ(v->error, "");
  EXPECT_EQ(v->to_string(), "v=QUJD");
  const auto e = parse_scram_server_final("e=invalid-proof,x=1");
  ASSERT_TRUE(e);
  EXPECT_TRUE(e->verifier.empty());
  EXPECT_EQ(e->error, "invalid-proof");
  EXPECT_EQ(e->extensions, "x=1");
  EXPECT_EQ(e->to_string(), "e=invalid-proof,x=1");
}

TEST(ScramTest, RefusesMalformedServerFinal) {
  const bad_message cases[] = {
      {"", oid::mongo::errc::invalid_scram_message, 0},
      {"v", oid::mongo::errc::invalid_scram_message, 0},
      {"x=QUJD", oid::mongo::errc::invalid_scram_message, 0},
      {"r=abc,v=QUJD", oid::mongo::errc::invalid_scram_message, 0},
      {"v=", oid::mongo::errc::invalid_scram_message, 2},
      {"e=", oid::mongo::errc::invalid_scram_message, 2},
      {"v=,e=x", oid::mongo::errc::invalid_scram_message, 2},
      {"v=QUJ", errc::invalid_base64, 5},
      {"v=Q!JD", errc::invalid_base64, 3},
      {"v=QUJD,", oid::mongo::errc::invalid_scram_message, 6},
      {"v=QUJD,v=QUJD", oid::mongo::errc::invalid_scram_message, 7},
      {"v=QUJD,e=oops", oid::mongo::errc::invalid_scram_message, 7},
      {"e=oops,v=QUJD", oid::mongo::errc::invalid_scram_message, 7},
      {"v=QUJD,m=x", oid::mongo::errc::invalid_scram_message, 7},
      {"v=QUJD,x=", oid::mongo::errc::invalid_scram_message, 9},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.message);
    EXPECT_THAT(parse_scram_server_final(c.message), HasErrorAt(c.code, c.offset));
  }
}

// A pool pays PBKDF2 once per (password, salt, iterations), not once per connection.
TEST(ScramTest, CacheComputesEachSaltedPasswordOnce) {
  scram_cache cache;
  const char* server_first =
      "r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096";
  for (int i = 0; i < 3; ++i) {
    auto c = scram_conversation::start(scram_mechanism::sha256, "user", secret("pencil"), &cache,
                                       "rOprNGfwEbeRWgbNEkqO");
    ASSERT_TRUE(c);
    const auto final = c->client_final(server_first);
    ASSERT_TRUE(final);
    EXPECT_NE(final->find(",p=dHzbZapWIk4jUhN+Ute9ytag9zjfMHgsqmmiz7AndVQ="), std::string::npos);
    EXPECT_TRUE(c->verify_server_final("v=6rriTRBi23WpRR/wtup+mMhUZUn/dB5nLTJRsjl95G4="));
  }
  EXPECT_EQ(cache.computed(), 1u);

  // Another password, salt, count or mechanism is another entry.
  const secret pw("pencil");
  const auto salt = bytes("0123456789abcdef");
  const secret s1 = cache.salted_password(scram_mechanism::sha256, pw, salt, 4096).value();
  EXPECT_EQ(cache.computed(), 2u);
  EXPECT_EQ(cache.salted_password(scram_mechanism::sha256, secret("pencil!"), salt, 4096)->size(),
            32u);
  EXPECT_EQ(cache.computed(), 3u);
  (void)cache.salted_password(scram_mechanism::sha256, pw, bytes("other salt"), 4096);
  (void)cache.salted_password(scram_mechanism::sha256, pw, salt, 4097);
  EXPECT_EQ(cache.salted_password(scram_mechanism::sha1, pw, salt, 4096)->size(), 20u);
  EXPECT_EQ(cache.computed(), 6u);
  EXPECT_EQ(cache.salted_password(scram_mechanism::sha256, pw, salt, 4096).value(), s1);
  EXPECT_EQ(cache.computed(), 6u);
  EXPECT_EQ(s1, scram_salt_password(scram_mechanism::sha256, pw, salt, 4096).value());
}

TEST(ScramTest, CacheIsThreadSafe) {
  scram_cache cache;
  const secret pw("pencil");
  const auto salt = bytes("salt");
  const secret want = scram_salt_password(scram_mechanism::sha256, pw, salt, 4096).value();
  std::vector<secret> got(8);
  std::vector<std::thread> threads;
  for (std::size_t t = 0; t < got.size(); ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 20; ++i)
        got[t] = cache.salted_password(scram_mechanism::sha256, pw, salt, 4096).value();
    });
  }
  for (auto& t : threads) t.join();
  for (const auto& g : got) EXPECT_EQ(g, want);
  // Threads that miss together may each compute it, but never more than once each.
  EXPECT_GE(cache.computed(), 1u);
  EXPECT_LE(cache.computed(), got.size());
}

TEST(ScramTest, CacheStartsAgainWhenFull) {
  scram_cache cache;
  const secret pw("pencil");
  for (std::size_t i = 0; i <= scram_cache::capacity; ++i) {
    (void)cache.salted_password(scram_mechanism::sha1, pw, bytes(std::to_string(i)), 4096);
  }
  EXPECT_EQ(cache.computed(), scram_cache::capacity + 1);
  // Entry 0 went when the cache was emptied; the last one stayed.
  (void)cache.salted_password(scram_mechanism::sha1, pw,
                              bytes(std::to_string(scram_cache::capacity)), 4096);
  EXPECT_EQ(cache.computed(), scram_cache::capacity + 1);
  (void)cache.salted_password(scram_mechanism::sha1, pw, bytes("0"), 4096);
  EXPECT_EQ(cache.computed(), scram_cache::capacity + 2);
}

// From 2^31 on, PKCS5_PBKDF2_HMAC's int count is negative and it writes nothing; a client that
// used its output anyway would hold an all-zero key that a fake server can sign with. Such counts,
// and any above scram_max_iterations (the CPU a server may make the client spend), are refused
// before PBKDF2 runs.
TEST(ScramTest, RefusesIterationCountsAboveTheMaximum) {
  for (const char* count : {"1000001", "2147483647", "2147483648", "4294967295"}) {
    SCOPED_TRACE(count);
    const std::string message = std::string("r=abcdef,s=QUJD,i=") + count;
    EXPECT_THAT(parse_scram_server_first(message, "abc"),
                HasErrorAt(oid::mongo::errc::authentication_failed, 18));
    scram_cache cache;
    auto c =
        scram_conversation::start(scram_mechanism::sha256, "user", secret("pencil"), &cache, "abc");
    ASSERT_TRUE(c);
    EXPECT_THAT(c->client_final(message), HasErrorAt(oid::mongo::errc::authentication_failed, 18));
    EXPECT_EQ(cache.computed(), 0u);
    // No signature to check against: whatever the server sends is refused.
    EXPECT_THAT(c->verify_server_final("v=AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA="),
                HasError(oid::mongo::errc::authentication_failed));
  }
  // Above 32 bits the count is not a number SCRAM allows at all.
  EXPECT_THAT(parse_scram_server_first("r=abcdef,s=QUJD,i=4294967296", "abc"),
              HasErrorAt(oid::mongo::errc::invalid_scram_message, 18));
}

// Called directly, PBKDF2 refuses what OpenSSL cannot take instead of returning zeros, and the
// cache keeps nothing from a failed derivation.
TEST(ScramTest, SaltingFailsInsteadOfGivingZeros) {
  const secret pw("pencil");
  const auto salt = bytes("salt");
  for (std::uint32_t count : {0u, 2147483648u, 4294967295u}) {
    SCOPED_TRACE(count);
    EXPECT_THAT(scram_salt_password(scram_mechanism::sha256, pw, salt, count),
                HasError(oid::mongo::errc::crypto_failed));
    scram_cache cache;
    EXPECT_THAT(cache.salted_password(scram_mechanism::sha256, pw, salt, count),
                HasError(oid::mongo::errc::crypto_failed));
    EXPECT_EQ(cache.computed(), 0u);
  }
  const auto fine = scram_salt_password(scram_mechanism::sha1, pw, salt, 4096);
  ASSERT_TRUE(fine);
  EXPECT_NE(*fine, secret::of_size(20));
}

}  // namespace
