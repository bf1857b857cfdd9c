//! Opening `up`'s database: a database that cannot be used stops baid with one line, except
//! for a manager that starts again after it lost the lead, which waits for it.

use crate::UpArgs;
use bai_store::Store;
use std::sync::Arc;

/// A database that cannot be used stops baid: one line, exit code 2.
pub fn database_failed(e: bai_store::StoreError) -> ! {
    match e {
        // It says itself that it cannot open the database, and which.
        e @ bai_store::StoreError::Open { .. } => eprintln!("Error: {e}"),
        e => eprintln!("Error: cannot open the database: {e}"),
    }
    std::process::exit(2)
}

/// The store `up` runs on. A database that cannot be used stops baid with one line; but a
/// manager that starts again after it lost the lead (its database may be what it lost)
/// answers `503 database-unavailable` on its addresses and tries again every second until it
/// can.
pub async fn store(args: &UpArgs, data_dir: &std::path::Path) -> Arc<Store> {
    let attempt = || {
        let database = args.database.clone();
        let file = data_dir.join("bai.db");
        async move {
            let opened = tokio::task::spawn_blocking(move || match &database {
                Some(url) => Store::open_database(url),
                None => Store::open(&file),
            })
            .await;
            opened.unwrap_or_else(|e| {
                eprintln!("Error: opening the database failed: {e}");
                std::process::exit(2)
            })
        }
    };
    let first = attempt().await;
    let e = match first {
        Ok(s) => return Arc::new(s),
        Err(e) if std::env::var_os(crate::lead::REJOINED).is_some() && e.is_unavailable() => e,
        Err(e) => database_failed(e),
    };
    eprintln!("bai: cannot reach the database ({e}); answering 503 until it can");
    let plain_http = args.tls_cert.is_none() && !args.tls_self_signed;
    let waiting = crate::standby::Standby::start(
        args.listen,
        args.app_ports,
        plain_http,
        crate::standby::Absent::Database,
    )
    .await;
    loop {
        tokio::time::sleep(std::time::Duration::from_secs(1)).await;
        match attempt().await {
            Ok(s) => {
                if let Ok(w) = waiting {
                    w.stop().await;
                }
                return Arc::new(s);
            }
            Err(e) if e.is_unavailable() => {}
            Err(e) => database_failed(e),
        }
    }
}
