// oid/result.hpp: `oid::result<T>`, a value or an `oid::error`.
//
// The core API returns `result<T>` wherever input is untrusted. The member names follow
// `std::expected<T, oid::error>` (has_value, value, error, value_or, operator*, operator->) so the
// type can become an alias when the project moves to C++23. `value()` is the throwing convenience:
// it throws `oid::exception` when there is no value.
#pragma once

#include <oid/error.hpp>
#include <type_traits>
#include <utility>
#include <variant>

namespace oid {

namespace detail {
/// Throws `oid::exception(e)`; out of line so that `result<T>` stays small at every call site.
[[noreturn]] void throw_error(const error& e);
}  // namespace detail

/// Holds either a `T` or an `oid::error`. Must be checked: ignoring a returned result is a warning.
template <class T>
class [[nodiscard]] result {
  static_assert(!std::is_same_v<std::remove_cv_t<T>, oid::error>, "result<error> is ambiguous");

 public:
  using value_type = T;
  using error_type = oid::error;

  result(const T& v) : v_(std::in_place_index<0>, v) {}            // NOLINT: implicit
  result(T&& v) noexcept(std::is_nothrow_move_constructible_v<T>)  // NOLINT: implicit
      : v_(std::in_place_index<0>, std::move(v)) {}
  result(const oid::error& e) noexcept : v_(std::in_place_index<1>, e) {}  // NOLINT: implicit

  bool has_value() const noexcept { return v_.index() == 0; }
  explicit operator bool() const noexcept { return has_value(); }

  /// The value; throws `oid::exception` with the error when there is none.
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

  /// The error. Precondition: `!has_value()`.
  const oid::error& error() const noexcept { return *std::get_if<1>(&v_); }

  /// The value. Precondition: `has_value()`.
  T& operator*() & noexcept { return *std::get_if<0>(&v_); }
  const T& operator*() const& noexcept { return *std::get_if<0>(&v_); }
  T&& operator*() && noexcept { return std::move(*std::get_if<0>(&v_)); }
  T* operator->() noexcept { return std::get_if<0>(&v_); }
  const T* operator->() const noexcept { return std::get_if<0>(&v_); }

 private:
  void check() const {
    if (!has_value()) detail::throw_error(error());
  }
  std::variant<T, oid::error> v_;
};

/// `result<void>`: success, or an `oid::error`.
template <>
class [[nodiscard]] result<void> {
 public:
  using value_type = void;
  using error_type = oid::error;

  result() noexcept = default;
  result(const oid::error& e) noexcept : err_(e), ok_(false) {}  // NOLINT: implicit

  bool has_value() const noexcept { return ok_; }
  explicit operator bool() const noexcept { return ok_; }
  /// Throws `oid::exception` when this holds an error.
  void value() const {
    if (!ok_) detail::throw_error(err_);
  }
  /// The error. Precondition: `!has_value()`.
  const oid::error& error() const noexcept { return err_; }

 private:
  oid::error err_{};
  bool ok_ = true;
};

}  // namespace oid
