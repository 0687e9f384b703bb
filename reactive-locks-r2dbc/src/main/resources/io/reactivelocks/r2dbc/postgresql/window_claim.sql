-- Window lock: claims the current window of (name, period) — at most one claim per window.
--   $1 name (stored form)  $2 period in microseconds  $3 owner (stored form)
-- window = floor(server epoch in µs / period). The first writer of a window wins: insert, or
-- advance a row whose window is older (the row lock of ON CONFLICT serializes claimants; the
-- WHERE is re-checked on the latest version, so a second claimant of the same window gets
-- nothing). The same owner claiming again in the same window gets its claim back (a retry).
WITH w AS (
    SELECT floor(extract(epoch FROM now()) * 1000000 / $2::bigint)::bigint AS window_no
)
INSERT INTO ${window_table} AS c (name, period_us, window_no, owner, token, claimed_at)
SELECT $1, $2::bigint, w.window_no, $3, nextval('${sequence}'), now() FROM w
ON CONFLICT (name, period_us) DO UPDATE
    SET window_no  = excluded.window_no,
        owner      = excluded.owner,
        token      = CASE WHEN c.window_no = excluded.window_no THEN c.token ELSE nextval('${sequence}') END,
        claimed_at = CASE WHEN c.window_no = excluded.window_no THEN c.claimed_at ELSE excluded.claimed_at END
    WHERE c.window_no < excluded.window_no OR (c.window_no = excluded.window_no AND c.owner = excluded.owner)
RETURNING c.window_no, c.token,
          ((c.window_no + 1) * $2::bigint - floor(extract(epoch FROM now()) * 1000000))::bigint AS remaining_us
