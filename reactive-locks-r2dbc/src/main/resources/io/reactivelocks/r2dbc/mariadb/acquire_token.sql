-- Step 3 of a grant to a new holder: draw the fencing token while the name's row is locked. The
-- previous grant of the name drew its token before it committed and released the lock, and the
-- sequence only grows, so this token is greater than every token ever granted for the name.
SELECT NEXTVAL(${sequence}) AS token
