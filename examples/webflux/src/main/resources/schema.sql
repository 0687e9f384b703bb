-- The shared entity of the example; run at startup (spring.sql.init.mode=always), idempotent.
-- No CHECK (available >= 0) on purpose: the tests prove that the lock, not a constraint, prevents oversell.
CREATE TABLE IF NOT EXISTS stock (
    sku       text   PRIMARY KEY,
    available bigint NOT NULL,
    fence     bigint            -- fencing token of the last accepted write (NULL: never written under a lock)
);
