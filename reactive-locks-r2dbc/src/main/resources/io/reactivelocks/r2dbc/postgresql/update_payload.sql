-- Owner- and token-checked payload update of a live grant (its expiry is kept).
--   $1 name (stored form)  $2 owner (stored form)  $3 token  $4 the new payload (stored form) or NULL
--   $5 notification channel  $6 the notification payload after the token: "<owner length> <owner><name>"
-- Announced as 'A' (acquired, same holder) so that observers re-read the holder.
WITH updated AS (
    UPDATE ${table}
    SET payload = $4::text
    WHERE name = $1 AND owner = $2 AND token = $3 AND expires_at > now()
    RETURNING token
), notified AS MATERIALIZED (
    SELECT u.token, ${notify_fn}($5, $1, 'A ' || u.token || ' ' || $6) AS sent FROM updated u
)
SELECT n.token FROM notified n
