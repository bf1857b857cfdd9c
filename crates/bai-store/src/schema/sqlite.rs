//! SQLite's migrations, from an empty database to this build's schema: the baseline's
//! (1 to 21, in [`baseline`]), then those made after it (22 on, here; PostgreSQL walks the
//! same ones as `PG_MIGRATIONS`).

mod baseline;

pub(super) const MIGRATIONS: &[&str] = &concat::<
    { baseline::BASELINE.len() },
    { AFTER_BASELINE.len() },
    { baseline::BASELINE.len() + AFTER_BASELINE.len() },
>(baseline::BASELINE, AFTER_BASELINE);

/// `a` then `b`, at compile time.
const fn concat<const A: usize, const B: usize, const N: usize>(
    a: [&'static str; A],
    b: [&'static str; B],
) -> [&'static str; N] {
    assert!(A + B == N);
    let mut out = [""; N];
    let mut i = 0;
    while i < A {
        out[i] = a[i];
        i += 1;
    }
    while i < N {
        out[i] = b[i - A];
        i += 1;
    }
    out
}

/// The migrations after the baseline, from 22 on.
const AFTER_BASELINE: [&str; 7] = [
    // 22: history at scale. A listing's order (the last change first) comes from an index
    // that also holds what its filter reads, per owner and for everyone, so a page walks
    // index entries, never rows, and sorts nothing. The ended sessions (the many) are counted
    // per owner, status and type by triggers beside them, so a total reads a few rows; the
    // live ones (the few) are counted through the index by status. A change between live
    // statuses (every placement) fires no trigger body.
    r#"
    DROP INDEX sessions_by_owner;
    CREATE INDEX sessions_by_owner ON sessions(access_key, status_changed, created_at, id, status, type);
    CREATE INDEX sessions_by_change ON sessions(status_changed, created_at, id, status, type, access_key);
    CREATE TABLE ended_counts (
        access_key TEXT NOT NULL,
        status TEXT NOT NULL,
        type TEXT NOT NULL,
        n INTEGER NOT NULL,
        PRIMARY KEY (access_key, status, type)
    );
    INSERT INTO ended_counts(access_key, status, type, n)
        SELECT access_key, status, type, COUNT(*) FROM sessions
        WHERE status IN ('TERMINATED','CANCELLED') GROUP BY 1, 2, 3;
    CREATE TRIGGER ended_counts_insert AFTER INSERT ON sessions
        WHEN NEW.status IN ('TERMINATED','CANCELLED')
    BEGIN
        INSERT INTO ended_counts(access_key, status, type, n)
            VALUES (NEW.access_key, NEW.status, NEW.type, 1)
            ON CONFLICT(access_key, status, type) DO UPDATE SET n = n + 1;
    END;
    CREATE TRIGGER ended_counts_delete AFTER DELETE ON sessions
        WHEN OLD.status IN ('TERMINATED','CANCELLED')
    BEGIN
        UPDATE ended_counts SET n = n - 1 WHERE access_key = OLD.access_key
            AND status = OLD.status AND type = OLD.type;
    END;
    CREATE TRIGGER ended_counts_leave AFTER UPDATE OF status, access_key, type ON sessions
        WHEN OLD.status IN ('TERMINATED','CANCELLED') AND (OLD.status != NEW.status
            OR OLD.access_key != NEW.access_key OR OLD.type != NEW.type)
    BEGIN
        UPDATE ended_counts SET n = n - 1 WHERE access_key = OLD.access_key
            AND status = OLD.status AND type = OLD.type;
    END;
    CREATE TRIGGER ended_counts_enter AFTER UPDATE OF status, access_key, type ON sessions
        WHEN NEW.status IN ('TERMINATED','CANCELLED') AND (OLD.status != NEW.status
            OR OLD.access_key != NEW.access_key OR OLD.type != NEW.type)
    BEGIN
        INSERT INTO ended_counts(access_key, status, type, n)
            VALUES (NEW.access_key, NEW.status, NEW.type, 1)
            ON CONFLICT(access_key, status, type) DO UPDATE SET n = n + 1;
    END;
    "#,
    // 23: the leader's lease (several managers on one database; `lease.rs`). Its term
    // grows on every takeover and fences the leader's writes; times are the database's, in
    // milliseconds since the epoch.
    r#"
    CREATE TABLE leases (
        name TEXT PRIMARY KEY,
        holder TEXT NOT NULL,
        term INTEGER NOT NULL,
        expires_ms INTEGER NOT NULL,
        address TEXT NOT NULL,
        version TEXT NOT NULL
    );
    "#,
    // 24: a resource group's warm pools (JSON of bai_core::pool::WarmPoolPolicy; `{}` is the
    // default: the automatic mode with one kernel per recent shape).
    r#"
    ALTER TABLE resource_groups ADD COLUMN warm_pool TEXT NOT NULL DEFAULT '{}';
    "#,
    // 25: usage-decayed fair share (issue 58). Per resource group and account (domain,
    // project, user) the decayed weighted resource-seconds, as of `updated_ms` (one row per
    // account, updated in place as kernels run: no scan of ended sessions); when each group
    // was last charged; the shares administrators set; a group's fair-share policy (JSON of
    // bai_sched::fairshare::Policy; `{}`: the defaults).
    r#"
    ALTER TABLE resource_groups ADD COLUMN fairshare TEXT NOT NULL DEFAULT '{}';
    CREATE TABLE fairshare_usage (
        resource_group TEXT NOT NULL,
        domain_name TEXT NOT NULL,
        group_name TEXT NOT NULL,
        user_id TEXT NOT NULL,
        usage REAL NOT NULL,
        updated_ms INTEGER NOT NULL,
        PRIMARY KEY (resource_group, domain_name, group_name, user_id)
    );
    CREATE TABLE fairshare_ticks (
        resource_group TEXT PRIMARY KEY,
        at_ms INTEGER NOT NULL
    );
    CREATE TABLE fairshare_shares (
        level TEXT NOT NULL,
        name TEXT NOT NULL,
        shares REAL NOT NULL,
        PRIMARY KEY (level, name)
    );
    "#,
    // 26: preemption (issue 58). A resource group's preemption settings (JSON of
    // bai_core::preemption::PreemptionPolicy; `{}`: off); whether a session goes back to the
    // queue when preempted (`--requeue`); the session a preempted one made room for.
    r#"
    ALTER TABLE resource_groups ADD COLUMN preemption TEXT NOT NULL DEFAULT '{}';
    ALTER TABLE sessions ADD COLUMN requeue INTEGER NOT NULL DEFAULT 0;
    ALTER TABLE sessions ADD COLUMN preempted_by TEXT;
    "#,
    // 27: OpenID Connect logins under way (issue 60), kept in the store so that the
    // callback may land at another manager, or after a restart: the `state` (the key), the
    // SHA-256 of the browser binding, the nonce, the PKCE verifier, the redirect URI and
    // when it expires (ms since the epoch, by the database's clock). Taken once.
    r#"
    CREATE TABLE oidc_logins (
        state TEXT PRIMARY KEY,
        binding_hash TEXT NOT NULL,
        nonce TEXT NOT NULL,
        verifier TEXT NOT NULL,
        redirect_uri TEXT NOT NULL,
        expires_ms INTEGER NOT NULL
    );
    CREATE INDEX oidc_logins_by_expiry ON oidc_logins (expires_ms);
    "#,
    // 28: web sessions (issue 60), kept in the store so that a login outlives a restart or
    // a failover: the SHA-256 of the cookie's token (the key; the token itself is never
    // stored), the access key, when it was opened and last used (ms since the epoch, by the
    // database's clock), and the OpenID provider's login it came from, if one vouched for it
    // (issuer, `sub`, `sid`; a back-channel logout names them).
    r#"
    CREATE TABLE web_sessions (
        token_hash TEXT PRIMARY KEY,
        access_key TEXT NOT NULL,
        created_ms INTEGER NOT NULL,
        used_ms INTEGER NOT NULL,
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
