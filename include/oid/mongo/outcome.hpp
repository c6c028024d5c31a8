// oid/mongo/outcome.hpp: what a client operation returns.
//
// `outcome<T>` is `oid::result<T, failure>` (oid/result.hpp): a `T`, or a `failure`
// (oid/mongo/failure.hpp) with an `oid::errc` (duplicate_key for server code 11000,
// write_concern_failed, server_error for any other refusal, a transport code, or invalid_uri and
// unsupported for a connection string the client refuses), a message and the server's words.
// `value()` throws `oid::mongo::operation_error`.
//
//     auto n = coll.count_documents(filter);          // outcome<std::int64_t>
//     if (!n) return report(n.error().message);
#pragma once

#include <oid/mongo/failure.hpp>
#include <oid/result.hpp>

namespace oid::mongo {

/// A `T` or a `failure`. Must be checked: ignoring a returned outcome is a warning.
template <class T>
using outcome = oid::result<T, failure>;

/// The value of an operation that returns nothing.
struct done {};

}  // namespace oid::mongo
