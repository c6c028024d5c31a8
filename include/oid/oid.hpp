// oid/oid.hpp: everything of oid's ObjectId layer in one include.
#pragma once

#include <oid/error.hpp>
#include <oid/generator.hpp>
#include <oid/inspect.hpp>
#include <oid/object_id.hpp>
#include <oid/result.hpp>
#include <oid/time.hpp>
