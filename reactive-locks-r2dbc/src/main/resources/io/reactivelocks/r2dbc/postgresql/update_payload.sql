-- Owner- and token-checked payload update of a live grant (its expiry is kept).
--   $1 name (stored form)  $2 owner (stored form)  $3 token  $4 the new payload (stored form) or NULL
--   $5 notification channel  $6 the notification payload after the token: "<owner length> <owner><name>"
-- Announced as 'A' (acquired, same holder) so that observers re-read the holder, while a client
-- observes the name (as acquire_row.sql announces a grant).
UPDATE ${table} AS l
SET payload = $4::text
WHERE l.name = $1 AND l.owner = $2 AND l.token = $3 AND l.expires_at > now()
RETURNING l.token,
          CASE WHEN l.watched_until > now() THEN ${notify_fn}($5, '\o' || $1, 'A ' || l.token || ' ' || $6)
               ELSE false END AS sent
