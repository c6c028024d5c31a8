#include <iostream>
#include <oid/oid.hpp>

int main() {
  const oid::object_id id = oid::generate();
  const auto back = oid::object_id::from_hex(id.to_hex());
  if (!back || *back != id) return 1;
  std::cout << id << '\n';
  return 0;
}
