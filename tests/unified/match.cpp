// The matching rules of the unified test format (see match.hpp).
#include "unified/match.hpp"

#include <algorithm>
#include <cmath>
#include <compare>
#include <cstdint>
#include <oid/bson/builder.hpp>
#include <oid/bson/json_reader.hpp>
#include <oid/bson/json_writer.hpp>
#include <span>
#include <string>
#include <variant>
#include <vector>

#include "support/hex.hpp"

namespace oid::unified {
namespace {

using bson::document_view;
using bson::element;
using bson::type;

// How the document an expected value describes is taken (see match.hpp).
enum class level {
  nested,         // no extra fields
  root,           // extra fields allowed at this document's top level
  root_elements,  // an array whose documents are root-level (a cursor's documents)
};

// The names of the $type query operator, which $$type takes and messages use.
struct type_name {
  std::string_view name;
  type t;
};
constexpr type_name type_names[] = {
    {"double", type::double_},
    {"string", type::string},
    {"object", type::document},
    {"array", type::array},
    {"binData", type::binary},
    {"undefined", type::undefined},
    {"objectId", type::object_id},
    {"bool", type::boolean},
    {"date", type::date_time},
    {"null", type::null},
    {"regex", type::regex},
    {"dbPointer", type::db_pointer},
    {"javascript", type::javascript},
    {"symbol", type::symbol},
    {"javascriptWithScope", type::javascript_with_scope},
    {"int", type::int32},
    {"timestamp", type::timestamp},
    {"long", type::int64},
    {"decimal", type::decimal128},
    {"minKey", type::min_key},
    {"maxKey", type::max_key},
};

std::string_view name_of(type t) {
  for (const auto& n : type_names) {
    if (n.t == t) return n.name;
  }
  return "unknown";  // validated BSON holds no other type byte
}

// "number" is the $type alias of the four numeric types (decimal128 included).
bool has_type_name(type t, std::string_view name) {
  if (name == "number") {
    return t == type::int32 || t == type::int64 || t == type::double_ || t == type::decimal128;
  }
  return name_of(t) == name;
}

bool known_type_name(std::string_view name) {
  if (name == "number") return true;
  for (const auto& n : type_names) {
    if (n.name == name) return true;
  }
  return false;
}

// A value for a message: relaxed Extended JSON and the type, e.g. `3 (long)`.
std::string describe(const element& e) {
  bson::builder b;
  b.append_element("", e);
  std::string json = bson::to_json(b.view());
  // {"":<value>} -> <value>
  std::string text = json.substr(4, json.size() - 5);
  constexpr std::size_t max_text = 100;
  if (text.size() > max_text) {
    // Cut before a character, not inside one: back off over UTF-8 continuation bytes.
    std::size_t cut = max_text;
    while (cut > 0 && (static_cast<unsigned char>(text[cut]) & 0xC0) == 0x80) --cut;
    text.resize(cut);
    text += "...";
  }
  return text + " (" + std::string(name_of(e.type())) + ")";
}

// One document holding `value` under key "v", so that a document can be matched as an element.
bson::document box_document(document_view value) {
  bson::builder b;
  b.append_document("v", value);
  return std::move(b).extract();
}

// The first element of a document made by box_document (or an entity's {"v": value}).
std::optional<element> first(document_view d) {
  if (d.begin() == d.end()) return std::nullopt;
  return *d.begin();
}

// int32, int64 and double as one of two exact representations (decimal128 is not flexible).
using number = std::variant<std::int64_t, double>;

std::optional<number> as_number(const element& e) {
  switch (e.type()) {
  case type::int32: return number{std::int64_t{*e.get_int32()}};
  case type::int64: return number{*e.get_int64()};
  case type::double_: return number{*e.get_double()};
  default: return std::nullopt;
  }
}

// An integer against a double, exactly (no rounding of the integer to a double).
std::partial_ordering compare(std::int64_t i, double d) {
  if (std::isnan(d)) return std::partial_ordering::unordered;
  constexpr double two63 = 9223372036854775808.0;  // 2^63, exact in a double
  if (d >= two63) return std::partial_ordering::less;
  if (d < -two63) return std::partial_ordering::greater;
  const double whole = std::trunc(d);  // in [-2^63, 2^63): converts exactly
  const auto w = static_cast<std::int64_t>(whole);
  if (i != w) return i <=> w;
  return 0.0 <=> d - whole;  // i == whole: the fraction decides
}

std::partial_ordering compare(const number& a, const number& b) {
  if (const auto* ai = std::get_if<std::int64_t>(&a)) {
    if (const auto* bi = std::get_if<std::int64_t>(&b)) return *ai <=> *bi;
    return compare(*ai, std::get<double>(b));
  }
  const double ad = std::get<double>(a);
  if (const auto* bi = std::get_if<std::int64_t>(&b)) {
    const auto o = compare(*bi, ad);
    return o == std::partial_ordering::less      ? std::partial_ordering::greater
           : o == std::partial_ordering::greater ? std::partial_ordering::less
                                                 : o;
  }
  return ad <=> std::get<double>(b);
}

bool same_numbers(const number& a, const number& b) {
  const auto* ad = std::get_if<double>(&a);
  const auto* bd = std::get_if<double>(&b);
  if (ad != nullptr && bd != nullptr && std::isnan(*ad) && std::isnan(*bd)) return true;
  return compare(a, b) == std::partial_ordering::equivalent;
}

bool exactly_equal(const element& a, const element& b);

// Two documents with the same keys and exactly equal values, keys in any order (the rule for
// documents inside other types, such as a code-with-scope's scope). Arrays compare in order since
// their keys are their positions.
bool exactly_equal(document_view a, document_view b) {
  std::size_t na = 0, nb = 0;
  for (auto it = a.begin(); it != a.end(); ++it) ++na;
  for (auto it = b.begin(); it != b.end(); ++it) ++nb;
  if (na != nb) return false;
  for (const element& ea : a) {
    const auto eb = b.find(ea.key());
    if (!eb || !exactly_equal(ea, *eb)) return false;
  }
  return true;
}

bool exactly_equal(const element& a, const element& b) {
  if (a.type() != b.type()) return false;
  switch (a.type()) {
  case type::document: return exactly_equal(*a.get_document(), *b.get_document());
  case type::array: return exactly_equal(*a.get_array(), *b.get_array());
  case type::javascript_with_scope: {
    const auto ca = *a.get_javascript_with_scope(), cb = *b.get_javascript_with_scope();
    return ca.code == cb.code && exactly_equal(ca.scope, cb.scope);
  }
  default: {
    const auto ra = a.raw_value(), rb = b.raw_value();
    return ra.size() == rb.size() && std::equal(ra.begin(), ra.end(), rb.begin());
  }
  }
}

// The bytes `hex` spells (an even number of hex digits, either case, possibly none), or nullopt.
std::optional<std::vector<std::uint8_t>> decode_hex(std::string_view hex) {
  if (hex.size() % 2 != 0) return std::nullopt;
  std::vector<std::uint8_t> out;
  out.reserve(hex.size() / 2);
  for (std::size_t i = 0; i < hex.size(); i += 2) {
    const int hi = testing::hex_digit(hex[i]), lo = testing::hex_digit(hex[i + 1]);
    if (hi < 0 || lo < 0) return std::nullopt;
    out.push_back(static_cast<std::uint8_t>(hi << 4 | lo));
  }
  return out;
}

class matcher {
 public:
  matcher(const match_context& ctx, std::string_view path) : ctx_(ctx), path_(path) {}

  std::string value(const element& expected, const std::optional<element>& actual, level lv) {
    if (expected.type() == type::document) {
      const document_view want = *expected.get_document();
      if (is_special_operator(want)) return special(*want.begin(), actual, lv);
      if (!actual) return fail("expected a document, got no value");
      if (actual->type() != type::document)
        return fail("expected a document, got " + describe(*actual));
      return document(want, *actual->get_document(), lv != level::nested);
    }
    if (!actual) return fail("expected " + describe(expected) + ", got no value");
    if (expected.type() == type::array) {
      if (actual->type() != type::array) return fail("expected an array, got " + describe(*actual));
      return array(*expected.get_array(), *actual->get_array(), lv);
    }
    if (!scalar_equal(expected, *actual)) {
      return fail("expected " + describe(expected) + ", got " + describe(*actual));
    }
    return {};
  }

 private:
  std::string fail(std::string_view why) const {
    return path_.empty() ? std::string(why) : path_ + ": " + std::string(why);
  }
  std::string invalid(std::string_view why) const {
    return fail("invalid test: " + std::string(why));
  }

  // Appends ".key" or "[i]" to the path while a nested value is matched.
  class scope {
   public:
    scope(std::string& path, std::string_view key) : path_(path), size_(path.size()) {
      if (!path_.empty()) path_ += '.';
      path_ += key;
    }
    scope(std::string& path, std::size_t index) : path_(path), size_(path.size()) {
      path_ += '[' + std::to_string(index) + ']';
    }
    scope(const scope&) = delete;
    scope& operator=(const scope&) = delete;
    ~scope() { path_.resize(size_); }

   private:
    std::string& path_;
    std::size_t size_;
  };

  std::string document(document_view want, document_view got, bool root) {
    for (const element& w : want) {
      std::optional<element> g;
      if (auto found = got.find(w.key())) g = *found;
      scope s(path_, w.key());
      if (std::string why = value(w, g, level::nested); !why.empty()) return why;
    }
    if (root) return {};
    for (const element& g : got) {
      if (!want.contains(g.key())) {
        scope s(path_, g.key());
        return fail("unexpected field, got " + describe(g));
      }
    }
    return {};
  }

  std::string array(document_view want, document_view got, level lv) {
    const level inner = lv == level::root_elements ? level::root : level::nested;
    std::size_t nw = 0, ng = 0;
    for (auto it = want.begin(); it != want.end(); ++it) ++nw;
    for (auto it = got.begin(); it != got.end(); ++it) ++ng;
    if (nw != ng) {
      return fail("expected an array of " + std::to_string(nw) + " elements, got " +
                  std::to_string(ng));
    }
    std::size_t i = 0;
    for (auto w = want.begin(), g = got.begin(); w != want.end(); ++w, ++g, ++i) {
      scope s(path_, i);
      if (std::string why = value(*w, *g, inner); !why.empty()) return why;
    }
    return {};
  }

  static bool scalar_equal(const element& want, const element& got) {
    const auto wn = as_number(want), gn = as_number(got);
    if (wn || gn) return wn && gn && same_numbers(*wn, *gn);
    return exactly_equal(want, got);
  }

  // `op` is the one element of a special operator document.
  std::string special(const element& op, const std::optional<element>& actual, level lv) {
    const std::string_view name = op.key();
    if (name == "$$exists") return exists(op, actual);
    if (name == "$$type") return type_of(op, actual);
    if (name == "$$unsetOrMatches") return actual ? value(op, actual, lv) : std::string();
    if (name == "$$matchesEntity") return matches_entity(op, actual, lv);
    if (name == "$$matchesHexBytes") return matches_hex_bytes(op, actual);
    if (name == "$$sessionLsid") return session_lsid(op, actual);
    if (name == "$$lte") return lte(op, actual);
    if (name == "$$matchAsDocument") return match_as_document(op, actual);
    if (name == "$$matchAsRoot") {
      if (op.type() != type::document) return invalid("$$matchAsRoot takes a document");
      return value(op, actual, level::root);
    }
    return invalid("unknown special operator " + std::string(name));
  }

  std::string exists(const element& op, const std::optional<element>& actual) {
    const auto want = op.get_bool();
    if (!want) return invalid("$$exists takes a boolean, got " + describe(op));
    if (*want && !actual) return fail("expected a field, got no value");
    if (!*want && actual) return fail("expected no field, got " + describe(*actual));
    return {};
  }

  std::string type_of(const element& op, const std::optional<element>& actual) {
    std::vector<std::string_view> names;
    if (const auto s = op.get_string()) {
      names.push_back(*s);
    } else if (const auto list = op.get_array()) {
      for (const element& e : *list) {
        const auto n = e.get_string();
        if (!n) return invalid("$$type takes type names, got " + describe(e));
        names.push_back(*n);
      }
      if (names.empty()) return invalid("$$type takes at least one type name");
    } else {
      return invalid("$$type takes a type name or an array of them, got " + describe(op));
    }
    std::string wanted;
    for (const auto n : names) {
      if (!known_type_name(n))
        return invalid("$$type: unknown type name \"" + std::string(n) + '"');
      if (!wanted.empty()) wanted += " or ";
      wanted += '"' + std::string(n) + '"';
    }
    if (!actual) return fail("expected type " + wanted + ", got no value");
    for (const auto n : names) {
      if (has_type_name(actual->type(), n)) return {};
    }
    return fail("expected type " + wanted + ", got " + describe(*actual));
  }

  std::string matches_entity(const element& op, const std::optional<element>& actual, level lv) {
    const auto id = op.get_string();
    if (!id) return invalid("$$matchesEntity takes an entity name, got " + describe(op));
    std::optional<bson::document> held;
    if (ctx_.entity) held = ctx_.entity(*id);
    if (!held) return invalid("$$matchesEntity: no entity \"" + std::string(*id) + '"');
    const auto v = held->view().find("v");
    if (!v) return invalid("$$matchesEntity: entity \"" + std::string(*id) + "\" holds no value");
    return value(*v, actual, lv);
  }

  std::string matches_hex_bytes(const element& op, const std::optional<element>& actual) {
    const auto hex = op.get_string();
    if (!hex) return invalid("$$matchesHexBytes takes a hex string, got " + describe(op));
    const auto want = decode_hex(*hex);
    if (!want) {
      return invalid("$$matchesHexBytes: \"" + std::string(*hex) +
                     "\" is not an even number of hex digits");
    }
    if (!actual) return fail("expected bytes " + std::string(*hex) + ", got no value");
    // The GridFS download operations give their bytes as a string or as binary data.
    std::span<const std::uint8_t> got;
    if (const auto s = actual->get_string()) {
      got = {reinterpret_cast<const std::uint8_t*>(s->data()), s->size()};
    } else if (const auto b = actual->get_binary()) {
      got = b->bytes;
    } else {
      return fail("expected bytes " + std::string(*hex) + ", got " + describe(*actual));
    }
    if (!std::equal(got.begin(), got.end(), want->begin(), want->end())) {
      return fail("expected bytes " + std::string(*hex) + ", got " + describe(*actual));
    }
    return {};
  }

  std::string session_lsid(const element& op, const std::optional<element>& actual) {
    const auto id = op.get_string();
    if (!id) return invalid("$$sessionLsid takes a session entity name, got " + describe(op));
    std::optional<bson::document> lsid;
    if (ctx_.session_lsid) lsid = ctx_.session_lsid(*id);
    if (!lsid) return invalid("$$sessionLsid: no session entity \"" + std::string(*id) + '"');
    const bson::document boxed = box_document(lsid->view());
    if (std::string why = value(*first(boxed.view()), actual, level::nested); !why.empty()) {
      return why + " (the lsid of session \"" + std::string(*id) + "\")";
    }
    return {};
  }

  std::string lte(const element& op, const std::optional<element>& actual) {
    const auto limit = as_number(op);
    if (!limit) return invalid("$$lte takes an int, a long or a double, got " + describe(op));
    const std::string wanted = "expected a number <= " + describe(op);
    if (!actual) return fail(wanted + ", got no value");
    const auto got = as_number(*actual);
    if (got) {
      const auto o = compare(*got, *limit);
      if (o == std::partial_ordering::less || o == std::partial_ordering::equivalent) return {};
    }
    return fail(wanted + ", got " + describe(*actual));
  }

  std::string match_as_document(const element& op, const std::optional<element>& actual) {
    if (!actual) return fail("expected an Extended JSON string, got no value");
    const auto text = actual->get_string();
    if (!text) return fail("expected an Extended JSON string, got " + describe(*actual));
    const auto doc = bson::from_json(*text);
    if (!doc) {
      return fail("expected an Extended JSON document, got " + describe(*actual) +
                  " (not one at byte " + std::to_string(doc.error().offset) + ")");
    }
    const bson::document boxed = box_document(doc->view());
    return value(op, *first(boxed.view()), level::nested);
  }

  const match_context& ctx_;
  std::string path_;
};

}  // namespace

bool is_special_operator(bson::document_view doc) noexcept {
  auto it = doc.begin();
  if (it == doc.end() || !it->key().starts_with("$$")) return false;
  return ++it == doc.end();
}

std::string match(const bson::element& expected, const std::optional<bson::element>& actual,
                  const match_context& ctx, bool root, std::string_view path) {
  return matcher(ctx, path).value(expected, actual, root ? level::root : level::nested);
}

std::string match_document(bson::document_view expected, bson::document_view actual,
                           const match_context& ctx, std::string_view path) {
  const bson::document want = box_document(expected), got = box_document(actual);
  return matcher(ctx, path).value(*first(want.view()), first(got.view()), level::root);
}

std::string match_root_array(const bson::element& expected,
                             const std::optional<bson::element>& actual, const match_context& ctx,
                             std::string_view path) {
  return matcher(ctx, path).value(expected, actual, level::root_elements);
}

}  // namespace oid::unified
