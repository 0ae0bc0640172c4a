-- Read replicas (memflow.db.replicas): where the primary's WAL ends after a write, and how far a
-- streaming standby has replayed it.

-- name: primary_write_lsn
-- Run on the primary after a write committed: the WAL insert position is at or past the commit
-- record (also with synchronous_commit = off, where the flushed position may still be behind).
-- When the last record ended on a page boundary the insert position already counts the next
-- page's header (24 bytes; 40 at a segment start), which no standby replays until another record
-- follows: that header is taken off, so an idle primary's replicas count as caught up.
WITH w AS (
  SELECT pg_current_wal_insert_lsn() AS lsn,
         (SELECT setting::numeric FROM pg_settings WHERE name = 'wal_block_size') AS block,
         (SELECT setting::numeric FROM pg_settings WHERE name = 'wal_segment_size') AS segment
)
SELECT (CASE WHEN (lsn - '0/0') % segment = 40 THEN lsn - 40
             WHEN (lsn - '0/0') % block = 24 THEN lsn - 24
             ELSE lsn END)::text AS lsn
FROM w;

-- name: replica_state
-- Run on a replica before it serves a read: still a standby (a promoted one has left the
-- primary's timeline), and the WAL position it has replayed (NULL: never replayed anything).
SELECT pg_is_in_recovery() AS standby, pg_last_wal_replay_lsn()::text AS replayed;
