-- The claims held now on one queue, for the admin's list: in progress with an expiry still ahead by
-- the server's clock. $1 the queue (stored form).
SELECT task_id, claim_owner, claim_token,
       (EXTRACT(EPOCH FROM (claim_expires_at - now())) * 1000)::bigint AS remaining_ms
FROM ${task_table}
WHERE queue = $1 AND status = 'in_progress' AND claim_expires_at > now()
