// oid/result.hpp: `oid::result<T, E>`, a value or an error; the one result type of the library.
//
// Every fallible function returns a `result`: the codecs `result<T>` (error type `oid::error`, a
// code and an offset: small, no allocation), the client `oid::mongo::outcome<T>`, an alias for
// `result<T, mongo::failure>` (a code, a message and the server's words). The member names follow
// `std::expected<T, E>` (has_value, value, error, value_or, operator*, operator->) so that the
// type can become an alias when the project moves to C++23.
//
// `value()` is the throwing convenience: when there is no value it calls
// `throw_exception(error())`, found by argument-dependent lookup in the namespace of `E`. Each
// error type declares that function, `[[noreturn]]`, next to itself:
//   - `oid::throw_exception(const oid::error&)` (oid/error.hpp) throws `oid::exception`;
//   - `oid::mongo::throw_exception(const mongo::failure&)` (oid/mongo/failure.hpp) throws
//     `oid::mongo::operation_error`.
// A new error type needs only its own `throw_exception` to be usable as `E`.
#pragma once

#include <oid/error.hpp>
#include <optional>
#include <type_traits>
#include <utility>
#include <variant>

namespace oid {

/// Holds either a `T` or an `E`. Must be checked: ignoring a returned result is a warning.
template <class T, class E = oid::error>
class [[nodiscard]] result {
  static_assert(!std::is_same_v<std::remove_cv_t<T>, E>, "result<E, E> is ambiguous");

 public:
  using value_type = T;
  using error_type = E;

  result(const T& v) : v_(std::in_place_index<0>, v) {}            // NOLINT: implicit
  result(T&& v) noexcept(std::is_nothrow_move_constructible_v<T>)  // NOLINT: implicit
      : v_(std::in_place_index<0>, std::move(v)) {}
  result(const E& e) noexcept(std::is_nothrow_copy_constructible_v<E>)  // NOLINT: implicit
      : v_(std::in_place_index<1>, e) {}
  result(E&& e) noexcept(std::is_nothrow_move_constructible_v<E>)  // NOLINT: implicit
      : v_(std::in_place_index<1>, std::move(e)) {}

  bool has_value() const noexcept { return v_.index() == 0; }
  explicit operator bool() const noexcept { return has_value(); }

  /// The value; throws (see `throw_exception` above) when there is none.
  T& value() & {
    check();
    return *std::get_if<0>(&v_);
  }
  const T& value() const& {
    check();
    return *std::get_if<0>(&v_);
  }
  T&& value() && {
    check();
    return std::move(*std::get_if<0>(&v_));
  }

  /// The value, or `fallback` when there is none.
  template <class U>
  T value_or(U&& fallback) const& {
    return has_value() ? **this : static_cast<T>(std::forward<U>(fallback));
  }
  template <class U>
  T value_or(U&& fallback) && {
    return has_value() ? std::move(**this) : static_cast<T>(std::forward<U>(fallback));
  }

  /// The error. Precondition: `!has_value()`.
  const E& error() const& noexcept { return *std::get_if<1>(&v_); }
  E& error() & noexcept { return *std::get_if<1>(&v_); }
  E&& error() && noexcept { return std::move(*std::get_if<1>(&v_)); }

  /// The value. Precondition: `has_value()`.
  T& operator*() & noexcept { return *std::get_if<0>(&v_); }
  const T& operator*() const& noexcept { return *std::get_if<0>(&v_); }
  T&& operator*() && noexcept { return std::move(*std::get_if<0>(&v_)); }
  T* operator->() noexcept { return std::get_if<0>(&v_); }
  const T* operator->() const noexcept { return std::get_if<0>(&v_); }

 private:
  void check() const {
    if (!has_value()) throw_exception(error());  // found by ADL in E's namespace
  }
  std::variant<T, E> v_;
};

/// `result<void, E>`: success, or an `E`.
template <class E>
class [[nodiscard]] result<void, E> {
 public:
  using value_type = void;
  using error_type = E;

  result() noexcept = default;
  result(const E& e) noexcept(std::is_nothrow_copy_constructible_v<E>)  // NOLINT: implicit
      : err_(e) {}
  result(E&& e) noexcept(std::is_nothrow_move_constructible_v<E>)  // NOLINT: implicit
      : err_(std::move(e)) {}

  bool has_value() const noexcept { return !err_.has_value(); }
  explicit operator bool() const noexcept { return has_value(); }
  /// Throws (see `throw_exception` above) when this holds an error.
  void value() const {
    if (err_) throw_exception(*err_);  // found by ADL in E's namespace
  }
  /// The error. Precondition: `!has_value()`.
  const E& error() const& noexcept { return *err_; }
  E& error() & noexcept { return *err_; }
  E&& error() && noexcept { return std::move(*err_); }

 private:
  std::optional<E> err_;
};

}  // namespace oid
