// oid/objectid.hpp: the whole oid::objectid module in one include: the id, making ids, inspecting
// them, times, errors. (oid/fmt.hpp, the {fmt} formatter, is separate: it needs fmt.)
#pragma once

#include <oid/error.hpp>
#include <oid/generator.hpp>
#include <oid/id64.hpp>
#include <oid/id64_generator.hpp>
#include <oid/inspect.hpp>
#include <oid/object_id.hpp>
#include <oid/result.hpp>
#include <oid/time.hpp>
