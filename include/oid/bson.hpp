// oid/bson.hpp: the whole oid::bson module in one include: types, validation, views, the
// builder, the owning document, decimal128, ensure_id, Extended JSON (reader and writer) and the
// stream readers (BSON and Extended JSON), binary vectors.
#pragma once

#include <oid/bson/builder.hpp>
#include <oid/bson/decimal128.hpp>
#include <oid/bson/document.hpp>
#include <oid/bson/ensure_id.hpp>
#include <oid/bson/json_reader.hpp>
#include <oid/bson/json_stream_reader.hpp>
#include <oid/bson/json_writer.hpp>
#include <oid/bson/stream_reader.hpp>
#include <oid/bson/type.hpp>
#include <oid/bson/validate.hpp>
#include <oid/bson/vector.hpp>
#include <oid/bson/view.hpp>
