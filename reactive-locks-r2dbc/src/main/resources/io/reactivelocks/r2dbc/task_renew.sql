-- Extends a live claim: owner AND token checked, and the claim must not have expired by the
-- server's clock (an expired claim is not revived: it may be recaptured at any moment).
--   $1 queue  $2 task id  $3 owner (stored forms)  $4 token  $5 claim time in microseconds
UPDATE ${task_table} t
SET claim_expires_at = now() + $5::bigint * interval '1 microsecond',
    ready_at         = now() + $5::bigint * interval '1 microsecond',
    updated_at       = now()
WHERE t.queue = $1 AND t.task_id = $2 AND t.status = 'in_progress'
  AND t.claim_owner = $3 AND t.claim_token = $4 AND t.claim_expires_at > now()
RETURNING t.claim_token
