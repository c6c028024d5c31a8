// CSV and TSV for `oid mongo export` and `import`, with mongoexport's and mongoimport's meanings.
// CSV follows RFC 4180: a field with a separator, a quote or a line break is quoted, quotes
// doubled inside; TSV is plain tab-separated lines. Columns are named by dotted paths ("a.b" is
// field b of subdocument a) and, with mongoimport's --columnsHaveTypes, typed: NAME.TYPE(ARGUMENT)
// with the types auto, binary(base64|base32|hex), boolean, date/date_go(Go layout),
// date_ms(Microsoft layout), date_oracle(Oracle layout), decimal, double, int32, int64, string.
//
// Pure text and BSON: no I/O beyond the stream it is given, no server. Every error says where
// (line and column) and what.
#pragma once

#include <cstddef>
#include <cstdint>
#include <istream>
#include <oid/bson/builder.hpp>
#include <oid/bson/view.hpp>
#include <oid/result.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace oid::cli {

// ---- writing ----------------------------------------------------------------------------------

/// The value at a dotted path ("a.b.c"; an array's elements by index, "d.1.e") of `doc`.
std::optional<bson::element> at_path(bson::document_view doc, std::string_view path);

/// Appends `text` to `line` as one CSV field: as it is, or quoted when RFC 4180 asks.
void append_csv_text(const std::string& text, std::string& line);

/// Appends the value `e` (none: an empty field) as one CSV field: strings as they are, ObjectIds
/// as ObjectId(hex) (as mongoexport writes them), other values as relaxed Extended JSON.
void append_csv_value(std::optional<bson::element> e, std::string& line);

// ---- reading ----------------------------------------------------------------------------------

/// Reads RFC 4180 records (or, with `quotes` false, plain TSV lines) from a stream, keeping the
/// line and column of every field for the error messages.
class csv_reader {
 public:
  csv_reader(std::istream& in, char separator, bool quotes)
      : in_(in), separator_(separator), quotes_(quotes) {}

  /// The next record into `fields`: true, or false at the end of the input. A malformed record
  /// (a quote never closed, text after a closing quote, a quote inside an unquoted field) is an
  /// error saying where ("line L, column C: ..."), with the fields read so far in `fields`; the
  /// next call reads on from the next record.
  result<bool, std::string> next(std::vector<std::string>& fields);
  /// The line the last record started on.
  std::size_t record_line() const noexcept { return record_line_; }
  /// "line L, column C": where field `i` of the last record starts.
  std::string field_position(std::size_t i) const;
  /// Bytes consumed from the stream so far.
  std::uint64_t bytes_read() const noexcept { return bytes_; }

 private:
  int get();
  std::istream& in_;
  char separator_;
  bool quotes_;
  std::size_t line_ = 1, column_ = 0, record_line_ = 1;
  std::uint64_t bytes_ = 0;
  std::vector<std::pair<std::size_t, std::size_t>> starts_;  // line and column of each field
};

/// Appends the CSV value `v` as mongoimport types it without --columnsHaveTypes: a whole number
/// as int32 (int64 when larger), a decimal number as double, anything else a string.
void append_csv_field(bson::builder& b, const std::string& key, const std::string& v);

/// The types of mongoimport's --columnsHaveTypes, NAME.TYPE(ARGUMENT).
enum class column_type {
  automatic,
  binary,
  boolean,
  date_go,
  date_ms,
  date_oracle,
  decimal,
  double_,
  int32,
  int64,
  string
};

/// One piece of a date layout: a number of fixed digits, the month's abbreviation, fractional
/// seconds, a UTC offset, or a character that must be there as it is.
struct date_piece {
  enum kind_t { literal, year, month, month_name, day, hour, minute, second, fraction, offset };
  kind_t kind;
  char c = 0;          ///< literal: the character
  bool colon = false;  ///< offset: hh:mm (else hhmm)
  bool z = false;      ///< offset: "Z" stands for +00:00
};

/// One column of a CSV or TSV input.
struct column {
  std::vector<std::string> path;  ///< the field name split at its dots
  std::string name;               ///< as given (with its type)
  std::string type_text;          ///< "int32()", "date(2006-01-02)", ...; empty when untyped
  column_type type = column_type::automatic;
  std::string argument;  ///< binary: the encoding; a date: its layout
  std::vector<date_piece> layout;
};

/// The most dotted parts a column name may have ("a.b" has 2): MongoDB's documents nest at most
/// 100 deep (bson::validate_options::max_depth).
inline constexpr std::size_t max_column_parts = 100;

/// A bad column name: what is wrong, and which name (0-based).
struct column_error {
  std::string message;
  std::size_t index = 0;
};

/// The columns of a CSV or TSV input: their names (dotted for nested fields) and, with
/// --columnsHaveTypes, their types; and how a record becomes a document (nested fields grouped
/// into one subdocument each, in the order of their first column).
class csv_columns {
 public:
  /// Reads the names (each NAME.TYPE(ARGUMENT) when `typed`). Errors: a name without a type
  /// (typed), an unknown type or a wrong argument, an empty field name, a NUL byte in a name, a
  /// name of more than max_column_parts parts, a field named twice or made both a value and a
  /// document.
  result<void, column_error> parse(const std::vector<std::string>& names, bool typed);

  std::size_t size() const noexcept { return columns_.size(); }
  const column& operator[](std::size_t i) const { return columns_[i]; }

  /// mongoimport's --parseGrace: what a field that cannot be read as its column's type does.
  enum class grace {
    fail,        ///< build() fails with the field's index (skipRow and stop, for the caller)
    skip_field,  ///< the field is left out
    auto_cast,   ///< the field is read as an `auto` column would read it
  };

  /// Appends the document of `record` (at most size() fields) to `b`; the error is the index of
  /// the field that cannot be read as its column's type (with grace::fail). `ignore_blanks`
  /// (mongoimport's --ignoreBlanks): empty fields are left out rather than stored as "".
  result<void, std::size_t> build(const std::vector<std::string>& record, bson::builder& b,
                                  bool ignore_blanks = false, grace on_bad = grace::fail) const;

 private:
  struct step {
    enum kind_t { value, open, close } kind;
    std::size_t column = 0;  // value: its column; open: the first column of the subdocument
    std::string key;         // value, open
    std::size_t end = 0;     // open: the index of its close in program_
  };
  static result<void, std::string> parse_type(column& c, std::string& field);
  void plan(const std::vector<std::size_t>& members, std::size_t depth);

  std::vector<column> columns_;
  std::vector<step> program_;
};

}  // namespace oid::cli
