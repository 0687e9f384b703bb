-- A fenced write (or delete: the value NULL) in ONE autocommit statement: the key's row is inserted
-- with the token as its fence when missing, else — under the row lock the statement holds — the value
-- and the fence are set only when the token is at least the fence (equal: the same grant writing
-- again). ON DUPLICATE KEY UPDATE assigns left to right: the value's condition reads the old fence.
-- RETURNING answers the fence as the statement left it: the token when written, a greater one when not.
--   ? key (stored form)  ? value or NULL  ? token
INSERT INTO ${fenced_table} (k, value, fence)
VALUES (?, ?, ?)
ON DUPLICATE KEY UPDATE value = IF(VALUES(fence) >= fence, VALUES(value), value),
                        fence = IF(VALUES(fence) >= fence, VALUES(fence), fence)
RETURNING fence
