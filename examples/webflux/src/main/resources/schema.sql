-- The shared entity of the example; run at startup (spring.sql.init.mode=always), idempotent.
-- No CHECK (available >= 0) on purpose: the tests prove that the lock, not a constraint, prevents oversell.
CREATE TABLE IF NOT EXISTS stock (
    sku       text   PRIMARY KEY,
    available bigint NOT NULL,
    fence     bigint            -- fencing token of the last accepted write (NULL: never written under a lock)
);

-- One row per run of the scheduled audit (StockAudit): at most one run per window across all instances.
CREATE TABLE IF NOT EXISTS stock_audit (
    id           bigserial PRIMARY KEY,
    job          text   NOT NULL,  -- the job's lock name
    window_index bigint NOT NULL,  -- the window claimed by the run
    token        bigint NOT NULL,  -- the fencing token of the run's lease
    instance     text   NOT NULL,  -- which instance ran it
    skus         bigint NOT NULL,  -- what it saw: rows in stock ...
    units        bigint NOT NULL   -- ... and units available in total
);
