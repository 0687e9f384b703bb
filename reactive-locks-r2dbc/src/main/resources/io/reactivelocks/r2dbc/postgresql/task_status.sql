-- One task as the server sees it now. $1 queue  $2 task id (stored forms)
-- remaining_us: while in_progress, the time left on the claim by the server's clock (<= 0: expired).
SELECT t.status, t.retries_left, t.attempts, t.claim_owner, t.claim_token, t.payload,
       CASE WHEN t.status = 'in_progress'
            THEN floor(extract(epoch FROM t.claim_expires_at - now()) * 1000000)::bigint END AS remaining_us
FROM ${task_table} t
WHERE t.queue = $1 AND t.task_id = $2
