// oid/oid.hpp: everything of oid's id layer (ObjectIds and 64-bit ids) in one include.
#pragma once

#include <oid/error.hpp>
#include <oid/generator.hpp>
#include <oid/id64.hpp>
#include <oid/id64_generator.hpp>
#include <oid/inspect.hpp>
#include <oid/object_id.hpp>
#include <oid/result.hpp>
#include <oid/time.hpp>
