-- Deletes every watcher row of the listener id $1 (the backend closes).
DELETE FROM ${watcher_table} w WHERE w.listener = $1
