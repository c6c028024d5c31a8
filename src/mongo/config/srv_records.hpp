// mongodb+srv:// between the two files that make it: srv.cpp reads the DNS records, uri.cpp's
// parser applies what they say to the uri.
#pragma once

#include <oid/mongo/outcome.hpp>
#include <oid/mongo/uri.hpp>
#include <string_view>
#include <vector>

namespace oid::mongo::detail {

/// mongodb+srv:// `u` resolved: the TXT record's options (`txt`, "" when there is none) where the
/// connection string did not set them, `hosts` (from the SRV records) as its hosts, checked as a
/// mongodb:// string that lists them all would be (loadBalanced with several hosts, srvMaxHosts
/// with replicaSet, ...).
outcome<uri> with_srv_records(const uri& u, std::string_view txt, std::vector<host> hosts);

}  // namespace oid::mongo::detail
