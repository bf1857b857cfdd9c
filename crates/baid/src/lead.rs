//! Leading: `baid up` takes the manager lease before it starts the manager, and keeps it.
//!
//! One lease row (`manager`) in the database, taken only once it expired by the database's
//! clock, its term raised on every takeover. While another manager holds it, this one
//! stands by ([`crate::standby`]: it relays its addresses to the leader) and claims it again
//! every [`POLL`]. Having won, it fences the store by the term (a write of a deposed
//! leader is refused in its own transaction), hands the term to the manager (every call to
//! an agent carries it) and renews the lease every [`RENEW`]. A renewal that finds the
//! lease taken over, or no renewal for [`TTL`], means another manager may lead: this
//! process then starts again from the beginning (`exec` of itself), and stands by.

use crate::lease::{LEASE, TTL};
use crate::standby::{Absent, Leader, Standby};
use anyhow::Result;
use bai_store::{Claim, LeaseBid, LeaseRow, Store};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// How often the leader renews.
const RENEW: Duration = Duration::from_secs(1);
/// How often a standby tries to take over.
const POLL: Duration = Duration::from_millis(500);
/// Set in the environment of a manager that starts itself again after it lost the lease.
pub const REJOINED: &str = "BAI_REJOINED";

/// This process's bid: a holder name no other process has, its address, its build.
pub fn bid(address: String) -> LeaseBid {
    let host = std::fs::read_to_string("/etc/hostname").unwrap_or_else(|_| "manager".into());
    LeaseBid {
        holder: format!(
            "{}-{}-{}",
            host.trim(),
            std::process::id(),
            hex::encode(rand::random::<[u8; 3]>())
        ),
        address,
        version: version(),
    }
}

/// What managers compare before sharing a lease: the release and the schema it speaks.
pub fn version() -> String {
    format!(
        "{} (schema {})",
        env!("CARGO_PKG_VERSION"),
        bai_store::SCHEMA_VERSION
    )
}

/// Why this manager cannot share the lease with the one holding it (a different build). A
/// lease held at this manager's own address is an earlier run of it (killed, or the build
/// it replaces): nothing shares anything with it, so its build does not matter.
pub fn incompatible(held: &LeaseRow, mine: &LeaseBid) -> Option<String> {
    (held.version != mine.version && held.address != mine.address).then(|| {
        format!(
            "the manager at {} runs bai {}, this is bai {}: managers sharing a database must run one version (stop it, or start this one's version)",
            held.address, held.version, mine.version
        )
    })
}

/// How standing by is set up, when it comes to that.
pub struct StandbyPlan {
    pub api: std::net::SocketAddr,
    pub app_ports: (u16, u16),
    pub plain_http: bool,
}

/// Takes the lease, standing by while another manager holds it. Returns the won lease once
/// the relay (if there was one) has given its addresses back.
pub async fn take(store: &Arc<Store>, bid: &LeaseBid, plan: StandbyPlan) -> Result<LeaseRow> {
    let mut standby: Option<Standby> = None;
    let mut said = String::new();
    loop {
        let claim = {
            let (store, bid) = (store.clone(), bid.clone());
            tokio::task::spawn_blocking(move || store.lease_claim(LEASE, &bid, TTL)).await?
        };
        match claim {
            Ok(Claim::Won(lease)) => {
                if let Some(s) = standby.take() {
                    s.stop().await;
                }
                return Ok(lease);
            }
            Ok(Claim::Held(held)) => {
                if let Some(why) = incompatible(&held, bid) {
                    anyhow::bail!(why);
                }
                if standby.is_none() {
                    standby = Some(
                        Standby::start(plan.api, plan.app_ports, plan.plain_http, Absent::Leader)
                            .await?,
                    );
                }
                if said != held.holder {
                    println!(
                        "bai stands by: the manager at {} leads (term {}); this one relays {} to it and takes over if it stops",
                        held.address, held.term, plan.api
                    );
                    said = held.holder.clone();
                }
                // A lease this very address held is an earlier run of this manager's (killed:
                // it left its lease to expire): nothing to relay to meanwhile.
                if let Some(s) = &standby {
                    s.lead_by(Some(Leader::of(&held)).filter(|l| l.address != bid.address));
                }
            }
            Err(e) => {
                tracing::warn!(error = %e, "cannot read the manager lease; trying again");
                if let Some(s) = &standby {
                    s.lead_by(None);
                }
            }
        }
        tokio::time::sleep(POLL).await;
    }
}

/// Renews the lease until it is lost, then starts this process again (it stands by). The
/// lease is held until [`TTL`] after the last renewal that succeeded was *sent* (the
/// database extended it later than that): past that moment another manager may lead, so
/// this one steps down then even while a renewal still hangs (a cut link to the database).
///
/// It runs on threads of its own, not the runtime's: on a cut link every worker of the
/// runtime may be stuck in a store call, and the step down must happen all the same.
pub fn keep(store: Arc<Store>, bid: LeaseBid, term: i64) {
    let spawned = std::thread::Builder::new()
        .name("bai-lease".into())
        .spawn(move || {
            let mut held_until = Instant::now() + TTL;
            loop {
                std::thread::sleep(RENEW);
                let sent = Instant::now();
                let (tx, rx) = std::sync::mpsc::channel();
                let (store, holder) = (store.clone(), bid.holder.clone());
                let renewal = std::thread::Builder::new()
                    .name("bai-lease-renew".into())
                    .spawn(move || {
                        let _ = tx.send(store.lease_renew(LEASE, &holder, term, TTL));
                    });
                if let Err(e) = renewal {
                    tracing::error!(error = %e, "cannot start a renewal of the lease");
                    continue;
                }
                // Woken past the lease (the process was stopped): ask once more, so the
                // answer says what happened meanwhile (a takeover refuses the renewal). Its
                // writes are fenced meanwhile, and agents that met the new leader refuse it.
                let wait = match held_until.saturating_duration_since(Instant::now()) {
                    d if d.is_zero() => TTL,
                    d => d,
                };
                match rx.recv_timeout(wait) {
                    Ok(Ok(true)) => held_until = sent + TTL,
                    Ok(Ok(false)) => {
                        return restart(&format!(
                            "another manager took over the lead (this one led under term {term})"
                        ));
                    }
                    // Its own renewal fenced: the term moved on.
                    Ok(Err(e)) if e.is_fenced() => {
                        return restart(&format!(
                            "another manager took over the lead (this one led under term {term}; {e})"
                        ));
                    }
                    Ok(Err(e)) if Instant::now() >= held_until => {
                        return restart(&format!(
                            "the lease could not be renewed for {} s ({e}); another manager may lead now",
                            TTL.as_secs()
                        ));
                    }
                    Ok(Err(e)) => {
                        tracing::warn!(error = %e, "renewing the manager lease failed; trying again")
                    }
                    Err(_) => {
                        return restart(&format!(
                            "the database did not answer the lease's renewal within {} s; another manager may lead now",
                            TTL.as_secs()
                        ));
                    }
                }
            }
        });
    if let Err(e) = spawned {
        tracing::error!(error = %e, "cannot start the lease keeper");
        restart("the lease keeper did not start");
    }
}

/// Gives the lease back (a manager stopping on purpose): a standby takes over at once.
pub fn release(store: &Store, bid: &LeaseBid, term: i64) {
    if let Err(e) = store.lease_release(LEASE, &bid.holder, term) {
        tracing::warn!(error = %e, "could not give the manager lease back; it expires by itself");
    }
}

/// Starts this process again from the beginning, with the same arguments: everything of
/// the lost term (loops, links, the local agent's handles) is gone at once, and the new
/// process stands by, or waits for its database.
fn restart(why: &str) {
    tracing::error!("{why}: this manager stops leading and starts again as a standby");
    eprintln!("bai: {why}; starting again as a standby");
    let err = crate::again::exec_again((REJOINED, "1"));
    // exec returns only when it failed: stop, so a supervisor starts it again.
    eprintln!("bai: cannot start again ({err}); stopping");
    std::process::exit(3);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn managers_of_another_version_do_not_share_the_lease() {
        let mine = bid("10.0.0.3:8090".into());
        let mut held = LeaseRow {
            name: LEASE.into(),
            holder: "other".into(),
            term: 3,
            address: "10.0.0.2:8090".into(),
            version: mine.version.clone(),
            left_ms: 4000,
        };
        assert_eq!(incompatible(&held, &mine), None);
        held.version = "0.9.0 (schema 22)".into();
        let why = incompatible(&held, &mine).unwrap();
        assert!(
            why.contains("10.0.0.2:8090 runs bai 0.9.0 (schema 22)"),
            "{why}"
        );
        assert!(why.contains(&mine.version), "{why}");
        // An earlier run at this very address, of another build: an upgrade in place waits
        // out its lease instead of refusing to start.
        held.address = mine.address.clone();
        assert_eq!(incompatible(&held, &mine), None);
    }

    #[test]
    fn two_processes_never_bid_as_one() {
        assert_ne!(bid("a:1".into()).holder, bid("a:1".into()).holder);
    }
}
