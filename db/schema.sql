-- schema.sql - redtune's database, the single source of its schema.
--
-- tools/embed.c builds this text into the binary; runtime/store.c runs it, whole and in one
-- transaction, on a new file, so a killed process never leaves half a schema behind. A file
-- made by an older redtune is brought here by the migration steps in store.c, never by
-- editing this text in place: change it together with a new step and STORE_SCHEMA_VERSION.
--
-- Times are UTC text, "2025-01-31T12:00:00Z". Durations are microseconds, bandwidths GB/s
-- (1e9 bytes a second). NULL means unknown.

PRAGMA user_version = 3;

-- One row per GPU seen. Keyed by its UUID; a device whose driver gives no UUID is keyed by
-- name and ordinal instead.
CREATE TABLE devices (
    id                    INTEGER PRIMARY KEY,
    name                  TEXT    NOT NULL,
    uuid                  TEXT    UNIQUE,               -- hex, no dashes; NULL when unknown
    ordinal               INTEGER NOT NULL,
    cc_major              INTEGER NOT NULL,
    cc_minor              INTEGER NOT NULL,
    sm_count              INTEGER NOT NULL,
    warp_size             INTEGER NOT NULL,
    max_threads_per_block INTEGER NOT NULL,
    max_threads_per_sm    INTEGER NOT NULL,
    max_blocks_per_sm     INTEGER NOT NULL,
    smem_per_block        INTEGER NOT NULL,             -- bytes without opt-in
    smem_per_block_optin  INTEGER NOT NULL,
    smem_per_sm           INTEGER NOT NULL,
    regs_per_block        INTEGER NOT NULL,
    regs_per_sm           INTEGER NOT NULL,
    l2_bytes              INTEGER NOT NULL,
    mem_clock_khz         INTEGER NOT NULL,
    bus_width_bits        INTEGER NOT NULL,
    driver_version        INTEGER NOT NULL,             -- 13000 for 13.0
    total_mem             INTEGER NOT NULL,             -- bytes
    read_gbps             REAL,                         -- measured read GB/s; NULL until measured
    first_seen            TEXT    NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%SZ', 'now')),
    last_seen             TEXT    NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%SZ', 'now')),
    CHECK (uuid IS NULL OR uuid <> '')
);
CREATE UNIQUE INDEX devices_name_ordinal ON devices (name, ordinal) WHERE uuid IS NULL;

-- One row per tuning run (one tuner process on one device).
CREATE TABLE runs (
    id                    INTEGER PRIMARY KEY,
    device_id             INTEGER NOT NULL REFERENCES devices (id),
    cmdline               TEXT    NOT NULL,
    redtune_version       TEXT    NOT NULL,             -- RT_VERSION_STRING
    nvrtc_version         INTEGER NOT NULL,             -- 12040 for 12.4
    started_at            TEXT    NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%SZ', 'now')),
    ended_at              TEXT                          -- NULL while running, or when killed
);
CREATE INDEX runs_device ON runs (device_id);

-- Every generated kernel, keyed by the content hash of its full source.
CREATE TABLE kernels (
    hash                  TEXT    PRIMARY KEY NOT NULL,
    family                TEXT    NOT NULL,
    params                TEXT    NOT NULL,             -- "B=256 V=4"
    source                TEXT    NOT NULL,
    created_at            TEXT    NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%SZ', 'now'))
);
CREATE INDEX kernels_family ON kernels (family);

-- Compiled CUBINs, a cache: the same source compiles to the same binary for one arch and
-- one NVRTC version.
CREATE TABLE binaries (
    hash                  TEXT    NOT NULL REFERENCES kernels (hash),
    arch                  TEXT    NOT NULL,             -- "sm_90"
    nvrtc_version         INTEGER NOT NULL,
    cubin                 BLOB    NOT NULL,
    registers             INTEGER,                      -- per thread
    smem_bytes            INTEGER,                      -- static shared memory
    log                   TEXT,                         -- the compile log
    created_at            TEXT    NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%SZ', 'now')),
    PRIMARY KEY (hash, arch, nvrtc_version)
);

-- One timing of one kernel on one case. A re-measurement replaces the row (UNIQUE below),
-- so a resumed run overwrites what it measures again.
CREATE TABLE measurements (
    id                    INTEGER PRIMARY KEY,
    device_id             INTEGER NOT NULL REFERENCES devices (id),
    run_id                INTEGER REFERENCES runs (id),  -- NULL when made outside a run
    kernel_hash           TEXT    NOT NULL REFERENCES kernels (hash),
    op                    TEXT    NOT NULL,             -- "min"
    type                  TEXT    NOT NULL,             -- "f32": the element type
    -- The type spec resolved (version 3): the accumulator's and the result's scalar types
    -- ("bf16" summed in "f32" into an "f32" result); both equal type for the original six
    -- operators on 32/64-bit types, for min/max/argmin/argmax/amax, and in rows migrated
    -- from version 2.
    acc                   TEXT    NOT NULL,             -- "f32"
    result                TEXT    NOT NULL,             -- "f32"
    layout                TEXT    NOT NULL,             -- "flat", or "keys:PROFILE" /
                                                        -- "offsets:PROFILE" (segmented)
    n                     INTEGER NOT NULL CHECK (n > 0),
    hot                   INTEGER NOT NULL CHECK (hot IN (0, 1)),  -- 1: L2 not flushed
    status                TEXT    NOT NULL CONSTRAINT status_valid
                          CHECK (status IN ('ok', 'wrong', 'fault', 'timeout', 'error')),
    message               TEXT    NOT NULL DEFAULT '',  -- why it failed
    median_us             REAL    NOT NULL,             -- 0 unless status is 'ok'
    min_us                REAL    NOT NULL,
    max_us                REAL    NOT NULL,
    reps                  INTEGER NOT NULL CHECK (reps >= 0),
    gbps                  REAL    NOT NULL,
    frac_bw               REAL    NOT NULL,             -- gbps / devices.read_gbps
    verified              INTEGER NOT NULL CHECK (verified IN (0, 1)),
    deterministic         INTEGER NOT NULL CHECK (deterministic IN (-1, 0, 1)),  -- -1: not checked
    measured_at           TEXT    NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%SZ', 'now')),
    -- Segmented layouts (version 2): the segmentation measured. 0 for flat.
    nseg                  INTEGER NOT NULL DEFAULT 0,   -- segments
    seg_mean              REAL    NOT NULL DEFAULT 0,   -- mean segment length, n / nseg
    seg_spread            REAL    NOT NULL DEFAULT 0,   -- standard deviation of the lengths
    UNIQUE (device_id, kernel_hash, op, type, acc, result, layout, n, hot)
);
-- The candidates of one case, fastest first: what store_update_best reads.
CREATE INDEX measurements_case ON measurements (device_id, op, type, acc, result, layout, n, hot,
                                               median_us)
    WHERE status = 'ok' AND verified = 1;
CREATE INDEX measurements_kernel ON measurements (kernel_hash);
CREATE INDEX measurements_run ON measurements (run_id);

-- The winner of each case, with its numbers copied from its measurement.
CREATE TABLE best (
    device_id             INTEGER NOT NULL REFERENCES devices (id),
    op                    TEXT    NOT NULL,
    type                  TEXT    NOT NULL,
    acc                   TEXT    NOT NULL,             -- as in measurements (version 3)
    result                TEXT    NOT NULL,
    layout                TEXT    NOT NULL,
    n                     INTEGER NOT NULL CHECK (n > 0),
    hot                   INTEGER NOT NULL CHECK (hot IN (0, 1)),
    kernel_hash           TEXT    NOT NULL REFERENCES kernels (hash),
    median_us             REAL    NOT NULL,
    min_us                REAL    NOT NULL,
    max_us                REAL    NOT NULL,
    reps                  INTEGER NOT NULL,
    gbps                  REAL    NOT NULL,
    frac_bw               REAL    NOT NULL,
    deterministic         INTEGER NOT NULL CHECK (deterministic IN (-1, 0, 1)),
    updated_at            TEXT    NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%SZ', 'now')),
    nseg                  INTEGER NOT NULL DEFAULT 0,   -- as in measurements (version 2)
    seg_mean              REAL    NOT NULL DEFAULT 0,
    seg_spread            REAL    NOT NULL DEFAULT 0,
    PRIMARY KEY (device_id, op, type, acc, result, layout, n, hot)
);
CREATE INDEX best_kernel ON best (kernel_hash);
