// oid/mongo.hpp: the whole oid::mongo module in one include: connection strings, OP_MSG, the
// client, cursors, write concerns, what operations return and how they fail.
#pragma once

#include <oid/mongo/bulk_write.hpp>
#include <oid/mongo/client.hpp>
#include <oid/mongo/collection.hpp>
#include <oid/mongo/command_event.hpp>
#include <oid/mongo/cursor.hpp>
#include <oid/mongo/database.hpp>
#include <oid/mongo/error.hpp>
#include <oid/mongo/failure.hpp>
#include <oid/mongo/gridfs.hpp>
#include <oid/mongo/handshake.hpp>
#include <oid/mongo/op_msg.hpp>
#include <oid/mongo/operation_options.hpp>
#include <oid/mongo/outcome.hpp>
#include <oid/mongo/pool_event.hpp>
#include <oid/mongo/read_concern.hpp>
#include <oid/mongo/read_preference.hpp>
#include <oid/mongo/sdam_event.hpp>
#include <oid/mongo/secret.hpp>
#include <oid/mongo/server_api.hpp>
#include <oid/mongo/server_codes.hpp>
#include <oid/mongo/server_description.hpp>
#include <oid/mongo/server_selection.hpp>
#include <oid/mongo/session.hpp>
#include <oid/mongo/srv.hpp>
#include <oid/mongo/topology_description.hpp>
#include <oid/mongo/uri.hpp>
#include <oid/mongo/write_concern.hpp>
