#include <gtest/gtest.h>

#include <cstdint>
#include <iterator>
#include <oid/bson/builder.hpp>
#include <oid/bson/ensure_id.hpp>
#include <oid/bson/validate.hpp>
#include <oid/bson/view.hpp>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "support/matchers.hpp"

namespace {

using namespace std::string_view_literals;
using oid::errc;
using oid::bson::builder;
using oid::bson::document_view;
using oid::bson::element;
using oid::bson::type;
using oid::testing::HasError;
using oid::testing::HasErrorAt;
using oid::testing::HasValue;

static_assert(std::is_trivially_copyable_v<document_view>);
static_assert(std::is_trivially_copyable_v<element>);
static_assert(std::forward_iterator<document_view::iterator>);
static_assert(noexcept(std::declval<document_view>().begin()));
static_assert(noexcept(++std::declval<document_view::iterator&>()));

TEST(BsonViewTest, DefaultViewIsTheEmptyDocument) {
  const document_view v;
  EXPECT_EQ(v.size(), 5u);
  EXPECT_TRUE(v.empty());
  EXPECT_EQ(v.begin(), v.end());
  EXPECT_THAT(v.find("a"), HasError(errc::key_not_found));
  EXPECT_EQ(v, oid::bson::empty_document);
}

TEST(BsonViewTest, IteratesInDocumentOrderAndFindsTheFirstMatch) {
  builder b;
  b.append_int32("b", 1).append_string("a", "x").append_int32("b", 2).append_null("c");
  const document_view v = b.view();
  std::vector<std::string_view> keys;
  std::vector<type> types;
  for (const element& e : v) {
    keys.push_back(e.key());
    types.push_back(e.type());
  }
  EXPECT_EQ(keys, (std::vector<std::string_view>{"b", "a", "b", "c"}));
  EXPECT_EQ(types, (std::vector<type>{type::int32, type::string, type::int32, type::null}));
  EXPECT_EQ(std::distance(v.begin(), v.end()), 4);
  EXPECT_THAT(v.find("b")->get_int32(), HasValue(1));  // duplicates: the first wins
  EXPECT_TRUE(v.contains("c"));
  EXPECT_FALSE(v.contains("d"));
  EXPECT_FALSE(v.contains("b\0"sv));
  EXPECT_TRUE(v.find("c")->raw_value().empty());
  EXPECT_EQ(v.find("a")->raw_value().size(), 6u);  // int32 length, "x", NUL
}

TEST(BsonViewTest, UncheckedViewOfShortBytesIsEmpty) {
  const std::uint8_t three[] = {1, 2, 3};
  EXPECT_TRUE(document_view::unchecked(three).empty());
  EXPECT_EQ(document_view::unchecked(three).begin(), document_view::unchecked(three).end());
}

const oid::object_id id1(oid::object_id::bytes_type{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12});
const oid::object_id id2(oid::object_id::bytes_type{12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1});

// One element of each type, in type-byte order; built, then validated.
struct every_type {
  std::vector<std::uint8_t> scope_bytes, bytes;
  document_view view;

  every_type() {
    builder scope;
    scope.append_int32("x", 1);
    scope_bytes.assign(scope.view().data(), scope.view().data() + scope.view().size());
    const std::uint8_t bin[] = {0xde, 0xad};
    builder b;
    b.append_double("double", -0.5)
        .append_string("string", "s\0t"sv)
        .open_document("document")
        .append_int32("n", 3)
        .close()
        .open_array("array")
        .append_string("0", "zero")
        .close()
        .append_binary("binary", 0x80, bin)
        .append_undefined("undefined")
        .append_object_id("object_id", id1)
        .append_bool("boolean", true)
        .append_date_time("date_time", -62135596800000)
        .append_null("null")
        .append_regex("regex", "^a", "i")
        .append_db_pointer("db_pointer", "db.c", id2)
        .append_javascript("javascript", "f()")
        .append_symbol("symbol", "sym")
        .append_javascript_with_scope("javascript_with_scope", "x",
                                      document_view::unchecked(scope_bytes))
        .append_int32("int32", INT32_MIN)
        .append_timestamp("timestamp", {0xFFFFFFFF, 1})
        .append_int64("int64", INT64_MAX)
        .append_decimal128("decimal128", {0x1234, 0x3040000000000000})
        .append_min_key("min_key")
        .append_max_key("max_key");
    bytes.assign(b.view().data(), b.view().data() + b.view().size());
    view = oid::bson::validate(bytes).value();
  }
};

TEST(BsonViewTest, TypedGettersReturnTheBuiltValues) {
  const every_type doc;
  const document_view v = doc.view;
  EXPECT_THAT(v.find("double")->get_double(), HasValue(-0.5));
  EXPECT_THAT(v.find("string")->get_string(), HasValue("s\0t"sv));
  EXPECT_THAT(v.find("document")->get_document()->find("n")->get_int32(), HasValue(3));
  EXPECT_THAT(v.find("array")->get_array()->find("0")->get_string(), HasValue("zero"sv));
  const auto bin = v.find("binary")->get_binary();
  ASSERT_TRUE(bin.has_value());
  EXPECT_EQ(bin->subtype, 0x80);
  EXPECT_EQ(std::vector<std::uint8_t>(bin->bytes.begin(), bin->bytes.end()),
            (std::vector<std::uint8_t>{0xde, 0xad}));
  EXPECT_EQ(v.find("undefined")->type(), type::undefined);
  EXPECT_THAT(v.find("object_id")->get_object_id(), HasValue(id1));
  EXPECT_THAT(v.find("boolean")->get_bool(), HasValue(true));
  EXPECT_THAT(v.find("date_time")->get_date_time(), HasValue(-62135596800000));
  EXPECT_EQ(oid::bson::to_sys_time(*v.find("date_time")->get_date_time()),
            std::chrono::sys_days(std::chrono::year(1) / 1 / 1));
  EXPECT_EQ(oid::bson::to_date_time(oid::bson::to_sys_time(-5)), -5);
  EXPECT_EQ(v.find("null")->type(), type::null);
  const auto re = v.find("regex")->get_regex();
  ASSERT_TRUE(re.has_value());
  EXPECT_EQ(re->pattern, "^a");
  EXPECT_EQ(re->options, "i");
  const auto dbp = v.find("db_pointer")->get_db_pointer();
  ASSERT_TRUE(dbp.has_value());
  EXPECT_EQ(dbp->ref, "db.c");
  EXPECT_EQ(dbp->id, id2);
  EXPECT_THAT(v.find("javascript")->get_javascript(), HasValue("f()"sv));
  EXPECT_THAT(v.find("symbol")->get_symbol(), HasValue("sym"sv));
  const auto cws = v.find("javascript_with_scope")->get_javascript_with_scope();
  ASSERT_TRUE(cws.has_value());
  EXPECT_EQ(cws->code, "x");
  EXPECT_EQ(cws->scope, document_view::unchecked(doc.scope_bytes));
  EXPECT_THAT(v.find("int32")->get_int32(), HasValue(INT32_MIN));
  EXPECT_THAT(v.find("timestamp")->get_timestamp(),
              HasValue(oid::bson::timestamp_value{0xFFFFFFFF, 1}));
  EXPECT_THAT(v.find("int64")->get_int64(), HasValue(INT64_MAX));
  EXPECT_THAT(v.find("decimal128")->get_decimal128(),
              HasValue(oid::bson::decimal128{0x1234, 0x3040000000000000}));
  EXPECT_EQ(v.find("min_key")->type(), type::min_key);
  EXPECT_EQ(v.find("max_key")->type(), type::max_key);
}

TEST(BsonViewTest, TimestampStoresIncrementLowAndTimeHigh) {
  builder b;
  b.append_timestamp("ts", {0x01020304, 0x0A0B0C0D});
  const auto raw = b.view().begin()->raw_value();
  EXPECT_EQ(std::vector<std::uint8_t>(raw.begin(), raw.end()),
            (std::vector<std::uint8_t>{0x0D, 0x0C, 0x0B, 0x0A, 0x04, 0x03, 0x02, 0x01}));
}

TEST(BsonViewTest, OldBinarySubtypeExposesThePayloadWithoutItsInnerLength) {
  const std::uint8_t payload[] = {9, 8, 7};
  builder b;
  b.append_binary("old", oid::bson::binary_subtype::old_binary, payload);
  b.append_binary("empty", oid::bson::binary_subtype::old_binary, {});
  const auto v = oid::bson::validate(b.view().bytes());
  ASSERT_TRUE(v.has_value());
  const auto old = v->find("old")->get_binary();
  ASSERT_TRUE(old.has_value());
  EXPECT_EQ(old->subtype, 0x02);
  EXPECT_EQ(std::vector<std::uint8_t>(old->bytes.begin(), old->bytes.end()),
            (std::vector<std::uint8_t>{9, 8, 7}));
  EXPECT_EQ(v->find("old")->raw_value().size(), 4u + 1 + 4 + 3);
  EXPECT_TRUE(v->find("empty")->get_binary()->bytes.empty());
}

// Every getter on every type: only the matching one has a value.
TEST(BsonViewTest, TypedGettersReportTypeMismatch) {
  const every_type doc;
  using getter = bool (*)(const element&, oid::error&);
#define OID_GETTER(name)                  \
  [](const element& e, oid::error& err) { \
    auto r = e.name();                    \
    if (!r) err = r.error();              \
    return r.has_value();                 \
  }
  const std::pair<type, getter> getters[] = {
      {type::double_, OID_GETTER(get_double)},
      {type::string, OID_GETTER(get_string)},
      {type::document, OID_GETTER(get_document)},
      {type::array, OID_GETTER(get_array)},
      {type::binary, OID_GETTER(get_binary)},
      {type::object_id, OID_GETTER(get_object_id)},
      {type::boolean, OID_GETTER(get_bool)},
      {type::date_time, OID_GETTER(get_date_time)},
      {type::regex, OID_GETTER(get_regex)},
      {type::db_pointer, OID_GETTER(get_db_pointer)},
      {type::javascript, OID_GETTER(get_javascript)},
      {type::symbol, OID_GETTER(get_symbol)},
      {type::javascript_with_scope, OID_GETTER(get_javascript_with_scope)},
      {type::int32, OID_GETTER(get_int32)},
      {type::timestamp, OID_GETTER(get_timestamp)},
      {type::int64, OID_GETTER(get_int64)},
      {type::decimal128, OID_GETTER(get_decimal128)},
  };
#undef OID_GETTER
  int elements = 0;
  for (const element& e : doc.view) {
    ++elements;
    SCOPED_TRACE(std::string(e.key()));
    EXPECT_EQ(oid::bson::to_string(e.type()), oid::bson::to_string(e.type()));
    for (const auto& [t, get] : getters) {
      oid::error err;
      const bool ok = get(e, err);
      EXPECT_EQ(ok, t == e.type()) << oid::bson::to_string(t);
      if (!ok) {
        EXPECT_EQ(err, (oid::error{oid::errc::type_mismatch, 0}));
      }
    }
  }
  EXPECT_EQ(elements, 21);
}

TEST(BsonViewTest, ElementsCopyUnderANewKey) {
  const every_type doc;
  builder b;
  for (const element& e : doc.view) b.append_element(e);
  EXPECT_EQ(b.view(), doc.view);
  builder renamed;
  renamed.append_element("k", *doc.view.find("regex"));
  EXPECT_EQ(renamed.view().begin()->get_regex()->options, "i");
  EXPECT_EQ(renamed.view().begin()->key(), "k");
}

// Bytes that never went through validate(): iteration stops early instead of reading past them.
TEST(BsonViewTest, UncheckedIterationStaysInsideTheBytes) {
  const every_type doc;
  for (std::size_t k = 5; k <= doc.bytes.size(); ++k) {
    SCOPED_TRACE(k);
    // A heap copy of exactly k bytes, so AddressSanitizer sees any read past them.
    const std::vector<std::uint8_t> cut(doc.bytes.begin(),
                                        doc.bytes.begin() + static_cast<long>(k));
    std::size_t n = 0;
    for (const element& e : document_view::unchecked(cut)) {
      EXPECT_LE(e.raw().data() + e.raw().size(), cut.data() + cut.size() - 1);
      ++n;
    }
    EXPECT_LE(n, 21u);
    if (k == doc.bytes.size()) {
      EXPECT_EQ(n, 21u);
    }
  }
}

TEST(BsonEnsureIdTest, AddsAnIdFirstWhenThereIsNone) {
  builder b;
  b.append_string("name", "x").append_int32("n", 1);
  const auto out = oid::bson::ensure_id(b.view(), id1);
  builder want;
  want.append_object_id("_id", id1).append_string("name", "x").append_int32("n", 1);
  EXPECT_EQ(out.view(), want.view());
  const auto empty = oid::bson::ensure_id(document_view{}, id2);
  builder only;
  only.append_object_id("_id", id2);
  EXPECT_EQ(empty.view(), only.view());
}

TEST(BsonEnsureIdTest, MovesAnExistingIdFirstAndKeepsTheOrder) {
  struct test_case {
    std::string_view name;
    void (*input)(builder&);
    void (*want)(builder&);
  };
  const test_case cases[] = {
      {"already first", [](builder& b) { b.append_string("_id", "me").append_int32("a", 1); },
       [](builder& b) { b.append_string("_id", "me").append_int32("a", 1); }},
      {"in the middle",
       [](builder& b) { b.append_int32("a", 1).append_int64("_id", 9).append_int32("b", 2); },
       [](builder& b) { b.append_int64("_id", 9).append_int32("a", 1).append_int32("b", 2); }},
      {"last, a document",
       [](builder& b) { b.append_int32("a", 1).open_document("_id").append_int32("k", 1).close(); },
       [](builder& b) {
         b.open_document("_id").append_int32("k", 1).close().append_int32("a", 1);
       }},
      {"twice: the first moves, the second stays",
       [](builder& b) { b.append_int32("a", 1).append_int32("_id", 1).append_int32("_id", 2); },
       [](builder& b) { b.append_int32("_id", 1).append_int32("a", 1).append_int32("_id", 2); }},
      {"a nested _id does not count",
       [](builder& b) { b.open_document("d").append_int32("_id", 1).close(); },
       [](builder& b) {
         b.append_object_id("_id", id1).open_document("d").append_int32("_id", 1).close();
       }},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    builder in, want;
    c.input(in);
    c.want(want);
    const auto out = oid::bson::ensure_id(in.view(), id1);
    EXPECT_EQ(out.view(), want.view());
  }
}

TEST(BsonEnsureIdTest, TakesNewIdsFromTheGenerator) {
  oid::object_id_generator gen([] { return std::uint32_t{0x5f000000}; },
                               [](std::span<std::uint8_t> out) {
                                 for (auto& x : out) x = 0x11;
                               });
  builder b;
  b.append_int32("a", 1);
  const auto first = oid::bson::ensure_id(b.view(), gen);
  const auto second = oid::bson::ensure_id(b.view(), gen);
  const auto id_a = first.view().begin()->get_object_id();
  const auto id_b = second.view().begin()->get_object_id();
  ASSERT_TRUE(id_a.has_value());
  ASSERT_TRUE(id_b.has_value());
  EXPECT_EQ(id_a->timestamp(), 0x5f000000u);
  EXPECT_NE(*id_a, *id_b);
  EXPECT_EQ(first.view().begin()->key(), "_id");
  const auto process_wide = oid::bson::ensure_id(b.view());
  EXPECT_EQ(process_wide.view().begin()->type(), type::object_id);
  EXPECT_TRUE(oid::bson::validate(process_wide.bytes()).has_value());
}

TEST(BsonViewTest, TypeNames) {
  EXPECT_EQ(oid::bson::to_string(type::double_), "double");
  EXPECT_EQ(oid::bson::to_string(type::javascript_with_scope), "javascriptWithScope");
  EXPECT_EQ(oid::bson::to_string(type::min_key), "minKey");
  EXPECT_EQ(oid::bson::to_string(static_cast<type>(0x14)), "unknown");
}

}  // namespace
