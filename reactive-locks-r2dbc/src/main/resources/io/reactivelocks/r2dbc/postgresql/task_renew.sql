-- Extends live claims, in ONE statement: each owner AND token checked, and the claim must not have
-- expired by the server's clock (an expired claim is not revived: it may be recaptured at any moment).
--   $1 queue (stored form)  $2 task ids text[]  $3 owners text[] (stored forms)  $4 tokens bigint[]
--   $5 claim time in microseconds
-- Returns the renewed claims (task id and token); a claim not returned was not renewed.
UPDATE ${task_table} t
SET claim_expires_at = now() + $5::bigint * interval '1 microsecond',
    ready_at         = now() + $5::bigint * interval '1 microsecond',
    updated_at       = now()
FROM unnest($2::text[], $3::text[], $4::bigint[]) AS c(task_id, owner, token)
WHERE t.queue = $1 AND t.task_id = c.task_id AND t.status = 'in_progress'
  AND t.claim_owner = c.owner AND t.claim_token = c.token AND t.claim_expires_at > now()
RETURNING t.task_id, t.claim_token
