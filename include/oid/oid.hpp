// oid/oid.hpp: everything the oid::oid target provides in one include: the three modules' own
// umbrellas, oid/objectid.hpp, oid/bson/bson.hpp and oid/mongo/mongo.hpp.
#pragma once

#include <oid/bson/bson.hpp>
#include <oid/mongo/mongo.hpp>
#include <oid/objectid.hpp>
