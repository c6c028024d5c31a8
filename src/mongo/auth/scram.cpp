#include "mongo/auth/scram.hpp"

#include <idn-free.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/rand.h>
#include <stringprep.h>

#include <algorithm>
#include <cstring>
#include <limits>

#include "detail/base64.hpp"
#include "detail/hex.hpp"

namespace oid::mongo::detail {
namespace {

constexpr std::size_t max_digest = 32;  // SHA-256; SHA-1 is 20

/// A fixed buffer for a key or digest, cleared when it goes out of scope.
struct key_buffer {
  std::array<std::uint8_t, max_digest> bytes{};
  unsigned size = 0;
  key_buffer() = default;
  key_buffer(const key_buffer&) = delete;
  key_buffer& operator=(const key_buffer&) = delete;
  ~key_buffer() { OPENSSL_cleanse(bytes.data(), bytes.size()); }
  const std::uint8_t* data() const noexcept { return bytes.data(); }
};

const EVP_MD* digest(scram_mechanism m) noexcept {
  return m == scram_mechanism::sha1 ? EVP_sha1() : EVP_sha256();
}

unsigned digest_size(scram_mechanism m) noexcept { return m == scram_mechanism::sha1 ? 20 : 32; }

// Each primitive says whether it gave a whole digest; on failure `out` is cleared, so nothing
// half-made is used by mistake.
[[nodiscard]] bool hash(scram_mechanism m, const std::uint8_t* data, std::size_t size,
                        key_buffer& out) {
  if (EVP_Digest(data, size, out.bytes.data(), &out.size, digest(m), nullptr) == 1 &&
      out.size == digest_size(m)) {
    return true;
  }
  OPENSSL_cleanse(out.bytes.data(), out.bytes.size());
  out.size = 0;
  return false;
}

[[nodiscard]] bool hmac(scram_mechanism m, const std::uint8_t* key, std::size_t key_size,
                        std::string_view data, key_buffer& out) {
  if (key_size <= static_cast<std::size_t>(std::numeric_limits<int>::max()) &&
      HMAC(digest(m), key, static_cast<int>(key_size),
           reinterpret_cast<const unsigned char*>(data.data()), data.size(), out.bytes.data(),
           &out.size) != nullptr &&
      out.size == digest_size(m)) {
    return true;
  }
  OPENSSL_cleanse(out.bytes.data(), out.bytes.size());
  out.size = 0;
  return false;
}

std::string base64_encode(const std::uint8_t* data, std::size_t size) {
  std::string out(oid::detail::base64_size(size), '\0');
  oid::detail::encode_base64(data, size, out.data());
  return out;
}

/// Strict, canonical padded base64 (RFC 4648 §4 alphabet, length a multiple of 4, at most two `=`
/// at the end, zero bits after the last byte), decoded. On error, `bad` is the offset in `text`.
std::optional<std::vector<std::uint8_t>> base64_decode(std::string_view text, std::size_t& bad) {
  if (text.size() % 4 != 0) {
    bad = text.size();
    return std::nullopt;
  }
  std::size_t pad = 0;
  if (!text.empty() && text.back() == '=') pad = text[text.size() - 2] == '=' ? 2 : 1;
  const std::size_t digits = text.size() - pad;
  for (std::size_t i = 0; i < digits; ++i) {
    if (oid::detail::base64_value(text[i]) < 0) {
      bad = i;
      return std::nullopt;
    }
  }
  // The last digit before padding may only carry bits that belong to a byte.
  if (pad != 0) {
    const int last = oid::detail::base64_value(text[digits - 1]);
    if ((pad == 1 && (last & 0x03) != 0) || (pad == 2 && (last & 0x0F) != 0)) {
      bad = digits - 1;
      return std::nullopt;
    }
  }
  std::vector<std::uint8_t> out(text.size() / 4 * 3);
  const std::ptrdiff_t n = oid::detail::decode_base64(text.data(), text.size(), out.data());
  if (n < 0) {  // '=' inside the text: the digit checks above let only that through
    bad = text.find('=');
    return std::nullopt;
  }
  out.resize(static_cast<std::size_t>(n));
  return out;
}

/// `printable` in RFC 5802: %x21-2B / %x2D-7E.
bool printable(std::string_view s) noexcept {
  return std::all_of(s.begin(), s.end(), [](char c) { return c >= 0x21 && c <= 0x7E && c != ','; });
}

bool is_alpha(char c) noexcept { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }

/// One `a=value` attribute of a message, as split at commas.
struct attribute {
  char name = 0;
  std::string_view value;
  std::size_t offset = 0;  // of the value in the message
};

/// The next attribute at `pos`, which must start with `name` (any letter when 0) and `=`.
/// Advances `pos` past the comma that ends it, or to the end.
result<attribute> next_attribute(std::string_view msg, std::size_t& pos, char name) {
  if (pos + 2 > msg.size() || msg[pos + 1] != '=' || !is_alpha(msg[pos]) ||
      (name != 0 && msg[pos] != name)) {
    return error{errc::invalid_scram_message, pos};
  }
  attribute a;
  a.name = msg[pos];
  a.offset = pos + 2;
  const std::size_t comma = msg.find(',', a.offset);
  const std::size_t end = comma == std::string_view::npos ? msg.size() : comma;
  a.value = msg.substr(a.offset, end - a.offset);
  pos = comma == std::string_view::npos ? msg.size() : comma + 1;
  if (comma != std::string_view::npos && pos == msg.size()) {
    return error{errc::invalid_scram_message, comma};  // a trailing comma
  }
  return a;
}

/// Optional extensions after the attributes: `,x=value` each, none named in `taken` or `m`.
result<std::string> read_extensions(std::string_view msg, std::size_t pos, std::string_view taken) {
  const std::size_t start = pos;
  while (pos < msg.size()) {
    const std::size_t at = pos;
    auto a = next_attribute(msg, pos, 0);
    if (!a) return a.error();
    if (a->name == 'm' || taken.find(a->name) != std::string_view::npos) {
      return error{errc::invalid_scram_message, at};
    }
    if (a->value.empty()) return error{errc::invalid_scram_message, a->offset};
  }
  return std::string(msg.substr(start));
}

/// `posit-number`: %x31-39 *DIGIT, within 32 bits.
std::optional<std::uint32_t> parse_count(std::string_view s) noexcept {
  if (s.empty() || s[0] < '1' || s[0] > '9' || s.size() > 10) return std::nullopt;
  std::uint64_t v = 0;
  for (char c : s) {
    if (c < '0' || c > '9') return std::nullopt;
    v = v * 10 + static_cast<unsigned>(c - '0');
  }
  if (v > 0xFFFFFFFFu) return std::nullopt;
  return static_cast<std::uint32_t>(v);
}

/// `saslname` in RFC 5802: `,` as `=2C` and `=` as `=3D`.
std::string escape_user(std::string_view user) {
  std::string out;
  out.reserve(user.size());
  for (char c : user) {
    if (c == ',') {
      out += "=2C";
    } else if (c == '=') {
      out += "=3D";
    } else {
      out += c;
    }
  }
  return out;
}

}  // namespace

std::string_view scram_mechanism_name(scram_mechanism m) noexcept {
  return m == scram_mechanism::sha1 ? "SCRAM-SHA-1" : "SCRAM-SHA-256";
}

result<secret> saslprep(std::string_view text) {
  // stringprep wants a C string: a cleared copy with a NUL; a NUL inside is prohibited (C.2.1).
  if (text.find('\0') != std::string_view::npos) {
    return error{errc::invalid_password, text.find('\0')};
  }
  secret input = secret::of_size(text.size() + 1);
  std::memcpy(input.bytes().data(), text.data(), text.size());
  char* out = nullptr;
  const int rc = stringprep_profile(reinterpret_cast<const char*>(input.bytes().data()), &out,
                                    "SASLprep", STRINGPREP_NO_UNASSIGNED);
  if (rc != STRINGPREP_OK) {
    if (out != nullptr) idn_free(out);
    if (rc == STRINGPREP_ICONV_ERROR) return error{oid::errc::invalid_utf8, 0};
    return error{errc::invalid_password, 0};
  }
  const std::size_t n = std::strlen(out);
  secret prepared(std::string_view(out, n));
  OPENSSL_cleanse(out, n);
  idn_free(out);
  return prepared;
}

result<secret> scram_prepare_password(scram_mechanism m, std::string_view user,
                                      const secret& password) {
  if (m == scram_mechanism::sha256) return saslprep(password.reveal());
  // MongoDB's SCRAM-SHA-1 password: hex(md5(user ":mongo:" password)), lowercase.
  static constexpr std::string_view middle = ":mongo:";
  secret text = secret::of_size(user.size() + middle.size() + password.size());
  std::uint8_t* p = text.bytes().data();
  std::memcpy(p, user.data(), user.size());
  std::memcpy(p + user.size(), middle.data(), middle.size());
  if (!password.empty()) {
    std::memcpy(p + user.size() + middle.size(), password.bytes().data(), password.size());
  }
  key_buffer md5;
  if (EVP_Digest(text.bytes().data(), text.size(), md5.bytes.data(), &md5.size, EVP_md5(),
                 nullptr) != 1 ||
      md5.size != 16) {
    return error{errc::crypto_failed, 0};  // an empty or short "password" would still log in
  }
  secret hex = secret::of_size(2 * std::size_t{md5.size});
  for (unsigned i = 0; i < md5.size; ++i) {
    std::memcpy(hex.bytes().data() + 2 * i, &oid::detail::hex_pairs[2 * std::size_t{md5.bytes[i]}],
                2);
  }
  return hex;
}

result<std::string> scram_client_nonce() {
  std::array<std::uint8_t, 24> raw{};
  if (RAND_bytes(raw.data(), static_cast<int>(raw.size())) != 1) {
    return error{oid::errc::entropy_unavailable, 0};
  }
  return base64_encode(raw.data(), raw.size());
}

std::string scram_server_first::to_string() const {
  std::string s = "r=" + nonce + ",s=" + base64_encode(salt.data(), salt.size()) +
                  ",i=" + std::to_string(iterations);
  if (!extensions.empty()) s += "," + extensions;
  return s;
}

result<scram_server_first> parse_scram_server_first(std::string_view message,
                                                    std::string_view client_nonce) {
  std::size_t pos = 0;
  scram_server_first out;

  auto r = next_attribute(message, pos, 'r');
  if (!r) return r.error();
  if (r->value.empty() || !printable(r->value)) {
    return error{errc::invalid_scram_message, r->offset};
  }
  if (r->value.size() <= client_nonce.size() ||
      r->value.substr(0, client_nonce.size()) != client_nonce) {
    return error{errc::authentication_failed, r->offset};
  }

  auto s = next_attribute(message, pos, 's');
  if (!s) return s.error();
  if (s->value.empty()) return error{errc::invalid_scram_message, s->offset};
  std::size_t bad = 0;
  auto salt = base64_decode(s->value, bad);
  if (!salt) return error{oid::errc::invalid_base64, s->offset + bad};

  auto i = next_attribute(message, pos, 'i');
  if (!i) return i.error();
  const auto count = parse_count(i->value);
  if (!count) return error{errc::invalid_scram_message, i->offset};
  // Too few is weak; too many is the server choosing how long the client burns CPU, and from 2^31
  // on more than PBKDF2 takes (scram_max_iterations).
  if (*count < scram_min_iterations || *count > scram_max_iterations) {
    return error{errc::authentication_failed, i->offset};
  }

  auto ext = read_extensions(message, pos, "rsi");
  if (!ext) return ext.error();

  out.nonce = std::string(r->value);
  out.salt = std::move(*salt);
  out.iterations = *count;
  out.extensions = std::move(*ext);
  return out;
}

std::string scram_server_final::to_string() const {
  std::string s =
      error.empty() ? "v=" + base64_encode(verifier.data(), verifier.size()) : "e=" + error;
  if (!extensions.empty()) s += "," + extensions;
  return s;
}

result<scram_server_final> parse_scram_server_final(std::string_view message) {
  std::size_t pos = 0;
  scram_server_final out;
  auto a = next_attribute(message, pos, 0);
  if (!a) return a.error();
  if ((a->name != 'v' && a->name != 'e') || a->value.empty()) {
    return error{errc::invalid_scram_message, a->name == 'v' || a->name == 'e' ? a->offset : 0};
  }
  if (a->name == 'e') {
    out.error = std::string(a->value);
  } else {
    std::size_t bad = 0;
    auto v = base64_decode(a->value, bad);
    if (!v) return error{oid::errc::invalid_base64, a->offset + bad};
    out.verifier = std::move(*v);
  }
  auto ext = read_extensions(message, pos, "ve");
  if (!ext) return ext.error();
  out.extensions = std::move(*ext);
  return out;
}

scram_cache::key::~key() { OPENSSL_cleanse(password_hash.data(), password_hash.size()); }

result<secret> scram_salt_password(scram_mechanism m, const secret& prepared_password,
                                   const std::vector<std::uint8_t>& salt,
                                   std::uint32_t iterations) {
  // PKCS5_PBKDF2_HMAC takes ints: a count from 2^31 on would turn negative, and OpenSSL then
  // returns 0 without writing its output. Refuse what it cannot take rather than cast.
  constexpr auto int_max = static_cast<std::size_t>(std::numeric_limits<int>::max());
  if (iterations == 0 || iterations > int_max || prepared_password.size() > int_max ||
      salt.size() > int_max) {
    return error{errc::crypto_failed, 0};
  }
  secret out = secret::of_size(digest_size(m));
  if (PKCS5_PBKDF2_HMAC(prepared_password.reveal().data(),
                        static_cast<int>(prepared_password.size()), salt.data(),
                        static_cast<int>(salt.size()), static_cast<int>(iterations), digest(m),
                        static_cast<int>(out.size()), out.bytes().data()) != 1) {
    return error{errc::crypto_failed, 0};  // `out` is cleared as it goes
  }
  return out;
}

result<secret> scram_cache::salted_password(scram_mechanism m, const secret& prepared_password,
                                            const std::vector<std::uint8_t>& salt,
                                            std::uint32_t iterations) {
  key k;
  unsigned size = 0;
  if (EVP_Digest(prepared_password.bytes().data(), prepared_password.size(), k.password_hash.data(),
                 &size, EVP_sha256(), nullptr) != 1 ||
      size != k.password_hash.size()) {
    return error{errc::crypto_failed, 0};  // an all-zero hash would share one cache entry
  }
  k.mechanism = m;
  k.salt = salt;
  k.iterations = iterations;
  {
    const std::lock_guard lock(mutex_);
    if (auto it = entries_.find(k); it != entries_.end()) return it->second;
  }
  // PBKDF2 outside the lock: two connections that race compute the same value twice, but no
  // connection waits for another's PBKDF2 of other inputs.
  auto salted = scram_salt_password(m, prepared_password, salt, iterations);
  if (!salted) return salted.error();  // never cached
  const std::lock_guard lock(mutex_);
  ++computed_;
  if (entries_.size() >= capacity) entries_.clear();
  entries_.insert_or_assign(std::move(k), *salted);
  return salted;
}

std::size_t scram_cache::computed() const {
  const std::lock_guard lock(mutex_);
  return computed_;
}

result<scram_conversation> scram_conversation::start(scram_mechanism m, std::string_view user,
                                                     const secret& password, scram_cache* cache,
                                                     std::optional<std::string> nonce) {
  scram_conversation c;
  c.mechanism_ = m;
  c.user_ = escape_user(user);
  c.cache_ = cache;
  auto prepared = scram_prepare_password(m, user, password);
  if (!prepared) return prepared.error();
  c.password_ = std::move(*prepared);
  if (nonce) {
    c.nonce_ = std::move(*nonce);
  } else {
    auto fresh = scram_client_nonce();
    if (!fresh) return fresh.error();
    c.nonce_ = std::move(*fresh);
  }
  return c;
}

std::string scram_conversation::client_first() const { return "n,,n=" + user_ + ",r=" + nonce_; }

result<std::string> scram_conversation::client_final(std::string_view server_first) {
  server_signature_.clear();  // a failure below leaves nothing to verify against
  auto first = parse_scram_server_first(server_first, nonce_);
  if (!first) return first.error();

  const auto salted =
      cache_ != nullptr
          ? cache_->salted_password(mechanism_, password_, first->salt, first->iterations)
          : scram_salt_password(mechanism_, password_, first->salt, first->iterations);
  if (!salted) return salted.error();

  // c=biws: base64 of the GS2 header "n,," (no channel binding, no authzid).
  std::string final = "c=biws,r=" + first->nonce;
  const std::string client_first_bare = "n=" + user_ + ",r=" + nonce_;
  std::string auth_message;
  auth_message.reserve(client_first_bare.size() + server_first.size() + final.size() + 2);
  auth_message.append(client_first_bare).append(",").append(server_first).append(",").append(final);

  key_buffer client_key, stored_key, client_signature, server_key, server_signature;
  if (!hmac(mechanism_, salted->bytes().data(), salted->size(), "Client Key", client_key) ||
      !hash(mechanism_, client_key.data(), client_key.size, stored_key) ||
      !hmac(mechanism_, stored_key.data(), stored_key.size, auth_message, client_signature) ||
      !hmac(mechanism_, salted->bytes().data(), salted->size(), "Server Key", server_key) ||
      !hmac(mechanism_, server_key.data(), server_key.size, auth_message, server_signature)) {
    return error{errc::crypto_failed, 0};
  }
  key_buffer proof;
  proof.size = client_key.size;
  for (unsigned i = 0; i < proof.size; ++i) {
    proof.bytes[i] = client_key.bytes[i] ^ client_signature.bytes[i];
  }

  server_signature_ = secret(std::string_view(
      reinterpret_cast<const char*>(server_signature.data()), server_signature.size));
  final += ",p=" + base64_encode(proof.data(), proof.size);
  return final;
}

result<void> scram_conversation::verify_server_final(std::string_view server_final) const {
  auto parsed = parse_scram_server_final(server_final);
  if (!parsed) return parsed.error();
  if (!parsed->error.empty() || server_signature_.empty() ||
      parsed->verifier.size() != server_signature_.size() ||
      CRYPTO_memcmp(parsed->verifier.data(), server_signature_.bytes().data(),
                    server_signature_.size()) != 0) {
    return error{errc::authentication_failed, 2};
  }
  return {};
}

}  // namespace oid::mongo::detail
