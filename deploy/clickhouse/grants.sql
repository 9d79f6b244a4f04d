-- The ClickHouse users of the gateway on current releases (24.8+: RBAC), least privilege each
-- (docs/security.md §ClickHouse). Replace `gateway` with CLICKHOUSE_DATABASE and the passwords with
-- your own (or IDENTIFIED WITH sha256_hash BY '<hex>'), and restrict HOST to the processes' hosts.
-- ClickHouse 18.16 has no GRANT: users-18.16.xml is the same three users for it.
-- Not tested here: the only current ClickHouse the tests run is chdb, which has no access control.

-- The schema's owner: `npm run worker -- --migrate` (CREATE DATABASE/TABLE, ALTER for the TTL).
CREATE ROLE IF NOT EXISTS gateway_migrator;
GRANT CREATE DATABASE ON gateway.*, CREATE TABLE, ALTER, DROP TABLE, SELECT, INSERT ON gateway.* TO gateway_migrator;

-- The worker: inserts the events and arrivals, reads the schema version and the highest stored id.
-- No DDL: it starts only once the migrator applied every migration.
CREATE ROLE IF NOT EXISTS gateway_worker;
GRANT SELECT, INSERT ON gateway.* TO gateway_worker;

-- Analysts and the gateways' admin API (event lists, the map, the id floor): read only.
CREATE ROLE IF NOT EXISTS gateway_analyst;
GRANT SELECT ON gateway.* TO gateway_analyst;

CREATE USER IF NOT EXISTS migrator IDENTIFIED WITH sha256_password BY 'change-me' HOST ANY DEFAULT ROLE gateway_migrator;
CREATE USER IF NOT EXISTS worker IDENTIFIED WITH sha256_password BY 'change-me' HOST ANY DEFAULT ROLE gateway_worker;
CREATE USER IF NOT EXISTS analyst IDENTIFIED WITH sha256_password BY 'change-me' HOST ANY DEFAULT ROLE gateway_analyst
  SETTINGS readonly = 1;
GRANT gateway_migrator TO migrator;
GRANT gateway_worker TO worker;
GRANT gateway_analyst TO analyst;
