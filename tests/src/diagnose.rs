//! What a test prints when a manager does not do what it waited for: each process's state
//! and the database's.

/// What a manager process is doing, for a failure's message: its state, and where each of
/// its threads waits in the kernel.
pub fn process_state(pid: u32) -> String {
    let read = |p: String| std::fs::read_to_string(p).unwrap_or_default();
    let status = read(format!("/proc/{pid}/status"));
    let state = status
        .lines()
        .find(|l| l.starts_with("State:"))
        .unwrap_or("State: gone");
    let mut tasks = Vec::new();
    if let Ok(dir) = std::fs::read_dir(format!("/proc/{pid}/task")) {
        for t in dir.flatten() {
            let comm = read(t.path().join("comm").display().to_string());
            let wchan = read(t.path().join("wchan").display().to_string());
            tasks.push(format!("{}:{wchan}", comm.trim()));
        }
    }
    let cmd = read(format!("/proc/{pid}/cmdline")).replace('\0', " ");
    format!("pid {pid} {state} [{cmd}] threads: {}", tasks.join(", "))
}

/// The lease row as it is (expired or not), the database's connections and advisory locks.
pub fn database_state(url: &str) -> String {
    let Ok(mut db) = postgres::Client::connect(url, postgres::NoTls) else {
        return "the database does not answer".into();
    };
    let mut out = Vec::new();
    for q in [
        "SELECT holder || ' term ' || term || ' at ' || address || ' expires in ' ||
            (expires_ms - CAST(extract(epoch FROM clock_timestamp()) * 1000 AS BIGINT)) || ' ms'
         FROM leases",
        "SELECT pid || ' ' || COALESCE(state, '') || ' ' || COALESCE(wait_event_type, '') || '/' ||
            COALESCE(wait_event, '') || ' ' || left(COALESCE(query, ''), 100)
         FROM pg_stat_activity WHERE datname = current_database()",
        "SELECT pid || ' advisory ' || objid || ' granted ' || granted FROM pg_locks
         WHERE locktype = 'advisory'",
    ] {
        match db.query(q, &[]) {
            Ok(rows) => out.extend(rows.iter().map(|r| r.get::<_, String>(0))),
            Err(e) => out.push(format!("{q}: {e}")),
        }
    }
    out.join("\n")
}
