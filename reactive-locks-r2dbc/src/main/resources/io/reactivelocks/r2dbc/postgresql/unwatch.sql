-- Deletes this client's watcher rows of the keys $1 (text[]) for its listener id $2 (nobody here
-- waits for them any more), and lowers the watch of their lock rows (${unwatch_fn}).
SELECT ${unwatch_fn}($1::text[], $2) AS unwatched
