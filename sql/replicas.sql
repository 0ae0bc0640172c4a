-- Read replicas (memflow.db.replicas): where the primary's WAL ends after a write, and how far a
-- streaming standby has replayed it.

-- name: primary_write_lsn
-- Run on the primary after a write committed: the WAL insert position is at or past the commit
-- record (also with synchronous_commit = off, where the flushed position may still be behind).
SELECT pg_current_wal_insert_lsn()::text AS lsn;

-- name: replica_state
-- Run on a replica before it serves a read: still a standby (a promoted one has left the
-- primary's timeline), and the WAL position it has replayed (NULL: never replayed anything).
SELECT pg_is_in_recovery() AS standby, pg_last_wal_replay_lsn()::text AS replayed;
