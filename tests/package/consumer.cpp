// A consumer of oid that needs every module's library to link: an ObjectId (oid::objectid), a BSON
// document written as Extended JSON (oid::bson), an OP_MSG encoded and decoded back, a URI with a
// password and a TLS client (oid::mongo; no server). Exits 0 and prints the JSON when all work.
#include <iostream>
#include <oid/oid.hpp>
#include <string>

int main(int argc, char**) {
  const oid::object_id id = oid::generate();
  const auto back = oid::object_id::from_hex(id.to_hex());
  if (!back || *back != id) return 1;

  oid::bson::builder b;
  b.append_object_id("_id", id).append_string("ping", "pong").append_int32("n", 1);
  const std::string json = oid::bson::to_json(b.view());
  if (json != R"({"_id":{"$oid":")" + id.to_hex() + R"("},"ping":"pong","n":1})") return 2;

  oid::mongo::op_msg msg;
  msg.request_id = 7;
  msg.body = b.view();
  const auto wire = oid::mongo::encode_op_msg(msg);
  if (!wire) return 3;
  const auto decoded = oid::mongo::decode_op_msg(*wire);
  if (!decoded || decoded->request_id != 7 || oid::bson::to_json(decoded->body) != json) return 4;

  // The client's heavy parts: a URI with a password (kept in a secret, which OpenSSL clears),
  // a client with TLS (OpenSSL's SSL library; SCRAM's SASLprep from libidn comes with it), and
  // the SRV lookup (libresolv), referenced but not run: no DNS is needed.
  const auto u =
      oid::mongo::uri::parse("mongodb://ann:s3cret@127.0.0.1:1/?tls=true&connectTimeoutMS=100");
  if (!u || !u->password()) return 5;
  auto client = oid::mongo::client::create(*u);
  if (!client) return 6;
  volatile bool never = argc > 100;
  if (never) (void)oid::mongo::resolve_srv(*u);

  std::cout << json << '\n';
  return 0;
}
