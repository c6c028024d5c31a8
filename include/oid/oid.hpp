// oid/oid.hpp: everything the oid::oid target provides in one include: the three modules' own
// umbrellas, oid/objectid.hpp, oid/bson.hpp and oid/mongo.hpp.
#pragma once

#include <oid/bson.hpp>
#include <oid/mongo.hpp>
#include <oid/objectid.hpp>
