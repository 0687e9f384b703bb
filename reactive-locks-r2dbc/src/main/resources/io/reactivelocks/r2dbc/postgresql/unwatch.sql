-- Deletes this client's watcher rows of the keys $1 (text[]) for its listener id $2 (nobody here
-- waits for them any more).
DELETE FROM ${watcher_table} w WHERE w.listener = $2 AND w.key = ANY ($1::text[])
