-- On close: deletes every watcher row of this client's listener id $1 (${unwatch_fn}).
SELECT ${unwatch_fn}(ARRAY(SELECT w.key FROM ${watcher_table} w WHERE w.listener = $1), $1) AS unwatched
