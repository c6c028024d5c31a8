#include <oid/error.hpp>

namespace oid {

constinit const errc_category errc_category_instance;

const char* errc_category::name() const noexcept { return "oid"; }

std::string errc_category::message(int value) const {
  switch (static_cast<errc>(value)) {
  case errc::invalid_length: return "invalid length";
  case errc::invalid_hex: return "invalid hex character";
  case errc::invalid_base64: return "invalid base64 character";
  case errc::invalid_time: return "invalid time";
  case errc::time_out_of_range:
    return "time out of range for the id (ObjectIds hold 1970-01-01T00:00:00Z to "
           "2106-02-07T06:28:15Z)";
  case errc::entropy_unavailable: return "the operating system gave no random bytes";
  case errc::truncated: return "truncated input";
  case errc::bad_length_prefix: return "bad length prefix";
  case errc::missing_terminator: return "missing NUL terminator";
  case errc::unknown_type: return "unknown BSON type";
  case errc::invalid_bool: return "boolean byte is neither 0 nor 1";
  case errc::invalid_utf8: return "invalid UTF-8";
  case errc::too_deep: return "nesting too deep";
  case errc::too_large: return "too large";
  case errc::trailing_bytes: return "unexpected bytes after the end";
  case errc::invalid_key: return "invalid key";
  case errc::invalid_binary: return "invalid binary value";
  case errc::invalid_value: return "invalid value";
  case errc::type_mismatch: return "type mismatch";
  case errc::key_not_found: return "key not found";
  case errc::invalid_decimal128: return "invalid decimal128";
  case errc::invalid_json: return "invalid JSON";
  case errc::invalid_extended_json: return "invalid Extended JSON";
  case errc::io_error: return "I/O error";
  case errc::invalid_decimal:
    return "invalid decimal id (digits only, no leading zero, at most 18446744073709551615)";
  case errc::machine_id_out_of_range: return "machine id too large for the id layout";
  case errc::forked_machine_id:
    return "a forked child cannot reuse its parent's machine id (give it its own)";
  case errc::end_marker: break;
  }
  return "unknown oid error " + std::to_string(value);
}

exception::exception(const error& e) : std::system_error(e.code), offset_(e.offset) {}

exception::exception(const error& e, const std::string& what)
    : std::system_error(e.code, what), offset_(e.offset) {}

void throw_exception(const error& e) { throw exception(e); }

}  // namespace oid
