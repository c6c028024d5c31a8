// oid/objectid.hpp: the whole oid::objectid module in one include: the id, making ids, inspecting
// them, times, errors. (oid/objectid/fmt.hpp, the {fmt} formatter, is separate: it needs fmt.)
#pragma once

#include <oid/error.hpp>
#include <oid/objectid/generator.hpp>
#include <oid/objectid/id64.hpp>
#include <oid/objectid/id64_generator.hpp>
#include <oid/objectid/inspect.hpp>
#include <oid/objectid/object_id.hpp>
#include <oid/objectid/time.hpp>
#include <oid/result.hpp>
