-- The rocpd tables (rocprofiler-sdk's schema version 3, `rocpd_tables.sql`) that rocprof-reader's
-- tests and `cargo xtask fixtures` create, with `{uuid}` for the per-database suffix.
CREATE TABLE "rocpd_metadata{uuid}" ("id" INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT,
    "tag" TEXT NOT NULL, "value" TEXT NOT NULL);
CREATE TABLE "rocpd_string{uuid}" ("id" INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT,
    "guid" TEXT DEFAULT 'g' NOT NULL, "string" TEXT NOT NULL UNIQUE ON CONFLICT ABORT);
CREATE TABLE "rocpd_info_node{uuid}" ("id" INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT,
    "guid" TEXT DEFAULT 'g' NOT NULL, "hash" BIGINT NOT NULL UNIQUE,
    "machine_id" TEXT NOT NULL UNIQUE, "name" TEXT, "system_name" TEXT, "hostname" TEXT,
    "release" TEXT, "version" TEXT, "hardware_name" TEXT, "domain_name" TEXT);
CREATE TABLE "rocpd_info_process{uuid}" ("id" INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT,
    "guid" TEXT DEFAULT 'g' NOT NULL, "nid" INTEGER NOT NULL, "ppid" INTEGER,
    "pid" INTEGER NOT NULL, "name" TEXT, "init" BIGINT, "fini" BIGINT, "start" BIGINT,
    "end" BIGINT, "command" TEXT, "environment" JSONB DEFAULT '{}' NOT NULL,
    "extdata" JSONB DEFAULT '{}' NOT NULL);
CREATE TABLE "rocpd_info_thread{uuid}" ("id" INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT,
    "guid" TEXT DEFAULT 'g' NOT NULL, "nid" INTEGER NOT NULL, "ppid" INTEGER,
    "pid" INTEGER NOT NULL, "tid" INTEGER NOT NULL, "name" TEXT, "start" BIGINT,
    "end" BIGINT, "extdata" JSONB DEFAULT '{}' NOT NULL);
CREATE TABLE "rocpd_info_agent{uuid}" ("id" INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT,
    "guid" TEXT DEFAULT 'g' NOT NULL, "nid" INTEGER NOT NULL, "pid" INTEGER NOT NULL,
    "type" TEXT CHECK ("type" IN ('CPU', 'GPU')), "absolute_index" INTEGER,
    "logical_index" INTEGER, "type_index" INTEGER, "uuid" INTEGER, "name" TEXT,
    "generic_name" TEXT, "model_name" TEXT, "vendor_name" TEXT, "product_name" TEXT,
    "extdata" JSONB DEFAULT '{}' NOT NULL);
CREATE TABLE "rocpd_info_queue{uuid}" ("id" INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT,
    "guid" TEXT DEFAULT 'g' NOT NULL, "nid" INTEGER NOT NULL, "pid" INTEGER NOT NULL,
    "name" TEXT, "extdata" JSONB DEFAULT '{}' NOT NULL);
CREATE TABLE "rocpd_info_stream{uuid}" ("id" INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT,
    "guid" TEXT DEFAULT 'g' NOT NULL, "nid" INTEGER NOT NULL, "pid" INTEGER NOT NULL,
    "name" TEXT, "extdata" JSONB DEFAULT '{}' NOT NULL);
CREATE TABLE "rocpd_info_code_object{uuid}" ("id" INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT,
    "guid" TEXT DEFAULT 'g' NOT NULL, "nid" INTEGER NOT NULL, "pid" INTEGER NOT NULL,
    "agent_id" INTEGER, "uri" TEXT, "load_base" BIGINT, "load_size" BIGINT,
    "load_delta" BIGINT, "storage_type" TEXT CHECK ("storage_type" IN ('FILE', 'MEMORY')),
    "extdata" JSONB DEFAULT '{}' NOT NULL);
CREATE TABLE "rocpd_info_kernel_symbol{uuid}" ("id" INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT,
    "guid" TEXT DEFAULT 'g' NOT NULL, "nid" INTEGER NOT NULL, "pid" INTEGER NOT NULL,
    "code_object_id" INTEGER NOT NULL, "kernel_name" TEXT, "display_name" TEXT,
    "kernel_object" INTEGER, "kernarg_segment_size" INTEGER,
    "kernarg_segment_alignment" INTEGER, "group_segment_size" INTEGER,
    "private_segment_size" INTEGER, "sgpr_count" INTEGER, "arch_vgpr_count" INTEGER,
    "accum_vgpr_count" INTEGER, "extdata" JSONB DEFAULT '{}' NOT NULL);
CREATE TABLE "rocpd_track{uuid}" ("id" INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT,
    "guid" TEXT DEFAULT 'g' NOT NULL, "nid" INTEGER NOT NULL, "ppid" INTEGER, "pid" INTEGER,
    "tid" INTEGER, "agent_id" INTEGER, "queue_id" INTEGER, "stream_id" INTEGER,
    "name_id" INTEGER, "extdata" JSONB DEFAULT '{}' NOT NULL);
CREATE TABLE "rocpd_timestamp{uuid}" ("id" INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT,
    "guid" TEXT DEFAULT 'g' NOT NULL, "value" BIGINT NOT NULL,
    "phase" INTEGER CHECK ("phase" IN (0, 1, 2)), "track_id" INTEGER);
CREATE TABLE "rocpd_event{uuid}" ("id" INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT,
    "guid" TEXT DEFAULT 'g' NOT NULL, "category_id" INTEGER, "stack_id" INTEGER,
    "parent_stack_id" INTEGER, "correlation_id" INTEGER, "call_stack" JSONB DEFAULT '{}' NOT NULL,
    "line_info" JSONB DEFAULT '{}' NOT NULL, "extdata" JSONB DEFAULT '{}' NOT NULL);
CREATE TABLE "rocpd_region{uuid}" ("id" INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT,
    "guid" TEXT DEFAULT 'g' NOT NULL, "track_id" INTEGER NOT NULL, "name_id" INTEGER NOT NULL,
    "start_id" INTEGER NOT NULL, "end_id" INTEGER NOT NULL, "event_id" INTEGER,
    "extdata" JSONB DEFAULT '{}' NOT NULL);
CREATE TABLE "rocpd_kernel_dispatch{uuid}" ("id" INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT,
    "guid" TEXT DEFAULT 'g' NOT NULL, "track_id" INTEGER NOT NULL, "kernel_id" INTEGER NOT NULL,
    "dispatch_id" INTEGER NOT NULL, "start_id" INTEGER NOT NULL, "end_id" INTEGER NOT NULL,
    "private_segment_size" INTEGER, "group_segment_size" INTEGER,
    "workgroup_size_x" INTEGER NOT NULL, "workgroup_size_y" INTEGER NOT NULL,
    "workgroup_size_z" INTEGER NOT NULL, "grid_size_x" INTEGER NOT NULL,
    "grid_size_y" INTEGER NOT NULL, "grid_size_z" INTEGER NOT NULL, "region_name_id" INTEGER,
    "event_id" INTEGER, "extdata" JSONB DEFAULT '{}' NOT NULL);
CREATE TABLE "rocpd_memory_copy{uuid}" ("id" INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT,
    "guid" TEXT DEFAULT 'g' NOT NULL, "track_id" INTEGER NOT NULL, "start_id" INTEGER NOT NULL,
    "end_id" INTEGER NOT NULL, "name_id" INTEGER NOT NULL, "dst_agent_id" INTEGER,
    "dst_address" INTEGER, "src_agent_id" INTEGER, "src_address" INTEGER,
    "size" INTEGER NOT NULL, "region_name_id" INTEGER, "event_id" INTEGER,
    "extdata" JSONB DEFAULT '{}' NOT NULL);
