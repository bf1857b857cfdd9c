//! PostgreSQL's schema: the baseline (`postgres.sql`, what SQLite's migrations up to
//! [`super::PG_BASELINE`] make), its default rows and the migrations after it.

/// PostgreSQL's migrations after the baseline; version `PG_BASELINE + 1` first.
pub(super) const PG_MIGRATIONS: &[&str] = &[
    // 22: as SQLite's 22 (history at scale): the listing's indexes, the ended sessions'
    // counts and their triggers.
    r#"
    DROP INDEX sessions_by_owner;
    CREATE INDEX sessions_by_owner ON sessions (access_key, status_changed, created_at, id, status, type);
    CREATE INDEX sessions_by_change ON sessions (status_changed, created_at, id, status, type, access_key);
    CREATE TABLE ended_counts (
        access_key TEXT NOT NULL,
        status TEXT NOT NULL,
        type TEXT NOT NULL,
        n BIGINT NOT NULL,
        PRIMARY KEY (access_key, status, type)
    );
    INSERT INTO ended_counts(access_key, status, type, n)
        SELECT access_key, status, type, COUNT(*) FROM sessions
        WHERE status IN ('TERMINATED', 'CANCELLED') GROUP BY 1, 2, 3;
    CREATE FUNCTION ended_counts_keep() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
        IF TG_OP IN ('UPDATE', 'DELETE') AND OLD.status IN ('TERMINATED', 'CANCELLED') THEN
            UPDATE ended_counts SET n = n - 1 WHERE access_key = OLD.access_key
                AND status = OLD.status AND type = OLD.type;
        END IF;
        IF TG_OP IN ('UPDATE', 'INSERT') AND NEW.status IN ('TERMINATED', 'CANCELLED') THEN
            INSERT INTO ended_counts(access_key, status, type, n)
                VALUES (NEW.access_key, NEW.status, NEW.type, 1)
                ON CONFLICT (access_key, status, type) DO UPDATE SET n = ended_counts.n + 1;
        END IF;
        RETURN NULL;
    END $$;
    CREATE TRIGGER ended_counts_insert AFTER INSERT ON sessions
        FOR EACH ROW WHEN (NEW.status IN ('TERMINATED', 'CANCELLED'))
        EXECUTE FUNCTION ended_counts_keep();
    CREATE TRIGGER ended_counts_delete AFTER DELETE ON sessions
        FOR EACH ROW WHEN (OLD.status IN ('TERMINATED', 'CANCELLED'))
        EXECUTE FUNCTION ended_counts_keep();
    CREATE TRIGGER ended_counts_update AFTER UPDATE OF status, access_key, type ON sessions
        FOR EACH ROW WHEN ((OLD.status IN ('TERMINATED', 'CANCELLED')
                OR NEW.status IN ('TERMINATED', 'CANCELLED'))
            AND (OLD.status, OLD.access_key, OLD.type) IS DISTINCT FROM
                (NEW.status, NEW.access_key, NEW.type))
        EXECUTE FUNCTION ended_counts_keep();
    "#,
    // 23: as SQLite's 23 (the leader's lease), and the check every write of a leader
    // makes first (`Store::fence`): the lease row still has its term, and stays so (a share
    // lock) until the write commits, so a takeover waits for a write in flight and no write
    // of a deposed leader commits after it.
    r#"
    CREATE TABLE leases (
        name TEXT PRIMARY KEY,
        holder TEXT NOT NULL,
        term BIGINT NOT NULL,
        expires_ms BIGINT NOT NULL,
        address TEXT NOT NULL,
        version TEXT NOT NULL
    );
    CREATE FUNCTION bai_fence(lease TEXT, expected BIGINT) RETURNS void LANGUAGE plpgsql AS $$
    BEGIN
        PERFORM 1 FROM leases WHERE name = lease AND term = expected FOR SHARE;
        IF NOT FOUND THEN
            RAISE EXCEPTION 'fenced: term % of lease % is over: another manager leads', expected, lease
                USING ERRCODE = 'BAIFN';
        END IF;
    END $$;
    "#,
    // 24: as SQLite's 24: a resource group's warm pools.
    r#"
    ALTER TABLE resource_groups ADD COLUMN warm_pool TEXT NOT NULL DEFAULT '{}';
    "#,
    // 25: as SQLite's 25: usage-decayed fair share.
    r#"
    ALTER TABLE resource_groups ADD COLUMN fairshare TEXT NOT NULL DEFAULT '{}';
    CREATE TABLE fairshare_usage (
        resource_group TEXT NOT NULL,
        domain_name TEXT NOT NULL,
        group_name TEXT NOT NULL,
        user_id TEXT NOT NULL,
        usage DOUBLE PRECISION NOT NULL,
        updated_ms BIGINT NOT NULL,
        PRIMARY KEY (resource_group, domain_name, group_name, user_id)
    );
    CREATE TABLE fairshare_ticks (
        resource_group TEXT PRIMARY KEY,
        at_ms BIGINT NOT NULL
    );
    CREATE TABLE fairshare_shares (
        level TEXT NOT NULL,
        name TEXT NOT NULL,
        shares DOUBLE PRECISION NOT NULL,
        PRIMARY KEY (level, name)
    );
    "#,
    // 26: as SQLite's 26: preemption.
    r#"
    ALTER TABLE resource_groups ADD COLUMN preemption TEXT NOT NULL DEFAULT '{}';
    ALTER TABLE sessions ADD COLUMN requeue BIGINT NOT NULL DEFAULT 0;
    ALTER TABLE sessions ADD COLUMN preempted_by TEXT;
    "#,
    // 27: as SQLite's 27: OpenID Connect logins under way.
    r#"
    CREATE TABLE oidc_logins (
        state TEXT PRIMARY KEY,
        binding_hash TEXT NOT NULL,
        nonce TEXT NOT NULL,
        verifier TEXT NOT NULL,
        redirect_uri TEXT NOT NULL,
        expires_ms BIGINT NOT NULL
    );
    CREATE INDEX oidc_logins_by_expiry ON oidc_logins (expires_ms);
    "#,
    // 28: as SQLite's 28: web sessions.
    r#"
    CREATE TABLE web_sessions (
        token_hash TEXT PRIMARY KEY,
        access_key TEXT NOT NULL,
        created_ms BIGINT NOT NULL,
        used_ms BIGINT NOT NULL,
        issuer TEXT,
        sub TEXT,
        sid TEXT
    );
    CREATE INDEX web_sessions_by_use ON web_sessions (used_ms);
    CREATE INDEX web_sessions_by_keypair ON web_sessions (access_key, used_ms);
    CREATE INDEX web_sessions_by_sid ON web_sessions (issuer, sid);
    CREATE INDEX web_sessions_by_sub ON web_sessions (issuer, sub);
    "#,
];

pub(super) const PG_SCHEMA: &str = include_str!("postgres.sql");

/// The rows the SQLite migrations put in a new database, for a new PostgreSQL one.
pub(super) const PG_DEFAULT_ROWS: &str = r#"
    INSERT INTO resource_groups(name, description, created_at)
        VALUES ('default', 'the default resource group', to_char(now() AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'));
    INSERT INTO resource_policies(name, created_at)
        VALUES ('default', to_char(now() AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'));
    INSERT INTO projects(name, description, created_at)
        VALUES ('default', 'the default project', to_char(now() AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'));
    INSERT INTO user_resource_policies(name, created_at) VALUES ('default', '1970-01-01T00:00:00Z');
    INSERT INTO domains(name, description, created_at)
        VALUES ('default', 'the default domain', to_char(now() AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'));
"#;
