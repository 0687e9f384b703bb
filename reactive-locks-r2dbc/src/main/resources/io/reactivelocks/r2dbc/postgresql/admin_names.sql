-- The names with live rows in one state table (lock, permits or read-write), for the admin's listing.
-- $1 the name prefix (stored form), compared literally: left(...) = $1, never LIKE (a name is data,
-- '%' and '_' in it are not wildcards). A name whose rows are all expired is left out; one whose
-- only live row is a waiting writer's intent is listed, and the admin finds no holder there.
SELECT DISTINCT name
FROM ${state_table}
WHERE left(name, length($1)) = $1 AND expires_at > now()
