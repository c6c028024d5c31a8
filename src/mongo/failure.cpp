#include <oid/mongo/failure.hpp>

namespace oid::mongo {

void throw_exception(const failure& f) { throw operation_error(f); }

}  // namespace oid::mongo
