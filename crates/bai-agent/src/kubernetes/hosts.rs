//! Cluster sessions on pods: a cluster without DNS for pods gives a kernel no way to find
//! its siblings by name, so each kernel of a session of several kernels gets the session's
//! host table as its `/etc/hosts` (a file in its run directory, mounted read-only; the
//! kubelet leaves `/etc/hosts` alone in a container that mounts its own). A kernel's address
//! is known once its pod runs; the tables of all the session's kernels on this agent are
//! then rewritten in place. A multi-node session's kernels on other agents are told by the
//! manager once all run ([`Tables::told`]), before the session runs, so every kernel knows
//! every other by then.
//!
//! A detached kernel's table (`--runner-reach network`) is not on this agent's disk: its
//! runner writes it (a `put` into its run directory). Such a kernel's table is written once
//! its pod runs (its own address known), then at every change: the calls answer the
//! tables to send ([`Push`]), which the caller sends through the runners in the order the
//! tables were made (`super::handover`).

use crate::kernel_files::cluster::{hosts_text, write_hosts};
use bai_core::agent::AgentError;
use std::collections::HashMap;
use std::net::IpAddr;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use uuid::Uuid;

/// One kernel of a session on this agent, as its table lists it.
struct Member {
    kernel: Uuid,
    hostname: String,
    addr: Option<IpAddr>,
    /// Its run directory on this node; `None`: detached, written by its runner.
    run: Option<PathBuf>,
}

/// A detached kernel's table to send through its runner: the kernel and the table's text.
pub type Push = (Uuid, String);

/// A session's kernels on this agent, and the whole session as the manager told it.
#[derive(Default)]
struct Session {
    members: Vec<Member>,
    told: Vec<(String, IpAddr)>,
}

impl Session {
    /// Every kernel whose address is known, in the session's order (main1, sub1, …): this
    /// agent's as their pods run, the others' as told.
    fn known(&self) -> Vec<(String, IpAddr)> {
        let mut out: Vec<(String, IpAddr)> = self
            .members
            .iter()
            .filter_map(|m| Some((m.hostname.clone(), m.addr?)))
            .collect();
        for (host, addr) in &self.told {
            if !out.iter().any(|(h, _)| h == host) {
                out.push((host.clone(), *addr));
            }
        }
        out.sort_by_key(|(h, _)| (!h.starts_with("main"), h.len(), h.clone()));
        out
    }

    /// Writes every table on this node; answers the detached kernels' tables (those whose
    /// pods run) to send.
    fn write(&self) -> Result<Vec<Push>, AgentError> {
        let hosts = self.known();
        let mut push = Vec::new();
        for m in &self.members {
            match &m.run {
                Some(run) => drop(write_hosts(run, &hosts)?),
                None if m.addr.is_some() => push.push((m.kernel, hosts_text(&hosts))),
                None => {}
            }
        }
        Ok(push)
    }
}

/// The host tables of this agent's cluster sessions, by session.
#[derive(Default)]
pub struct Tables(Mutex<HashMap<Uuid, Session>>);

impl Tables {
    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<Uuid, Session>> {
        self.0.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// A kernel of `session` about to be made: its table is written with the siblings known
    /// so far (its own address comes when its pod runs). Returns the table's path on the node
    /// (none for a detached kernel, `run` `None`).
    pub fn join(
        &self,
        session: Uuid,
        kernel: Uuid,
        hostname: &str,
        run: Option<&Path>,
    ) -> Result<Option<PathBuf>, AgentError> {
        let mut all = self.lock();
        let s = all.entry(session).or_default();
        s.members.retain(|m| m.kernel != kernel);
        s.members.push(Member {
            kernel,
            hostname: hostname.to_string(),
            addr: None,
            run: run.map(Path::to_path_buf),
        });
        run.map(|run| write_hosts(run, &s.known())).transpose()
    }

    /// The kernel's pod runs at `addr`: every table of its session says so.
    pub fn up(&self, session: Uuid, kernel: Uuid, addr: IpAddr) -> Result<Vec<Push>, AgentError> {
        let mut all = self.lock();
        let Some(s) = all.get_mut(&session) else {
            return Ok(Vec::new());
        };
        if let Some(m) = s.members.iter_mut().find(|m| m.kernel == kernel) {
            m.addr = Some(addr);
        }
        s.write()
    }

    /// The manager tells every kernel of multi-node `session`, on every agent, by hostname
    /// and address: every table of the session on this agent lists them all.
    pub fn told(
        &self,
        session: Uuid,
        hosts: Vec<(String, IpAddr)>,
    ) -> Result<Vec<Push>, AgentError> {
        let mut all = self.lock();
        let Some(s) = all.get_mut(&session) else {
            return Err(AgentError::BadRequest(format!(
                "no kernel of session {session} runs on this agent, so it has no host table \
                 to write"
            )));
        };
        s.told = hosts;
        s.write()
    }

    /// The session's kernels on this agent, and the addresses of all its kernels known so
    /// far (what `--network-policies node` lets each of them reach and be reached by).
    pub fn peers(&self, session: Uuid) -> (Vec<Uuid>, std::collections::BTreeSet<IpAddr>) {
        let all = self.lock();
        let Some(s) = all.get(&session) else {
            return Default::default();
        };
        let kernels = s.members.iter().map(|m| m.kernel).collect();
        (kernels, s.known().into_iter().map(|(_, a)| a).collect())
    }

    /// The kernel is gone (its directory with its table goes with it).
    pub fn leave(&self, kernel: Uuid) {
        let mut all = self.lock();
        all.retain(|_, s| {
            s.members.retain(|m| m.kernel != kernel);
            !s.members.is_empty()
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn table(dir: &Path) -> Vec<String> {
        std::fs::read_to_string(dir.join("hosts"))
            .unwrap()
            .lines()
            .filter(|l| !l.starts_with('#') && !l.contains("localhost"))
            .map(str::to_string)
            .collect()
    }

    #[test]
    fn every_kernel_learns_each_sibling_as_its_pod_runs_and_forgets_none_too_early() {
        if !crate::kernel_files::running_as_root() {
            return; // the tables are handed to the work user (chown needs root)
        }
        let d = tempfile::tempdir().unwrap();
        let (s, k1, k2) = (Uuid::from_u128(1), Uuid::from_u128(2), Uuid::from_u128(3));
        let (r1, r2) = (d.path().join("k1"), d.path().join("k2"));
        std::fs::create_dir_all(&r1).unwrap();
        std::fs::create_dir_all(&r2).unwrap();
        let t = Tables::default();
        t.join(s, k1, "main1", Some(&r1)).unwrap();
        t.join(s, k2, "sub1", Some(&r2)).unwrap();
        assert!(table(&r1).is_empty());
        t.up(s, k2, "10.1.0.7".parse().unwrap()).unwrap();
        t.up(s, k1, "10.1.0.6".parse().unwrap()).unwrap();
        let want = vec!["10.1.0.6\tmain1".to_string(), "10.1.0.7\tsub1".to_string()];
        assert_eq!(table(&r1), want);
        assert_eq!(table(&r2), want);
        // Another session's kernels are not listed; a kernel that left is forgotten.
        t.join(Uuid::from_u128(9), Uuid::from_u128(10), "main1", Some(&r1))
            .unwrap();
        t.leave(Uuid::from_u128(10));
        t.leave(k2);
        t.up(s, k1, "10.1.0.6".parse().unwrap()).unwrap();
        assert_eq!(table(&r1), vec!["10.1.0.6\tmain1".to_string()]);
    }

    /// A multi-node session: this agent holds sub1 only; main1 and sub2 run on other agents
    /// and are known once the manager tells the whole table. This agent's own address of a
    /// kernel wins over a told one; a session with no kernel here is refused.
    #[test]
    fn kernels_on_other_agents_are_listed_once_told() {
        if !crate::kernel_files::running_as_root() {
            return;
        }
        let d = tempfile::tempdir().unwrap();
        let (s, k) = (Uuid::from_u128(1), Uuid::from_u128(2));
        let run = d.path().join("k");
        std::fs::create_dir_all(&run).unwrap();
        let t = Tables::default();
        t.join(s, k, "sub1", Some(&run)).unwrap();
        t.up(s, k, "10.1.0.7".parse().unwrap()).unwrap();
        assert_eq!(table(&run), vec!["10.1.0.7\tsub1".to_string()]);
        let told = vec![
            ("sub2".to_string(), "10.2.0.9".parse().unwrap()),
            ("main1".to_string(), "10.3.0.5".parse().unwrap()),
            ("sub1".to_string(), "10.9.9.9".parse().unwrap()),
        ];
        t.told(s, told.clone()).unwrap();
        assert_eq!(
            table(&run),
            vec![
                "10.3.0.5\tmain1".to_string(),
                "10.1.0.7\tsub1".to_string(),
                "10.2.0.9\tsub2".to_string()
            ]
        );
        let e = t.told(Uuid::from_u128(7), told).unwrap_err();
        assert!(e.to_string().contains("no kernel of session"), "{e}");
    }

    /// Detached kernels: nothing is written here; each table is answered to send once its
    /// kernel's pod runs, and again at every change after.
    #[test]
    fn a_detached_kernels_table_is_sent_once_its_pod_runs() {
        let (s, k1, k2) = (Uuid::from_u128(1), Uuid::from_u128(2), Uuid::from_u128(3));
        let t = Tables::default();
        assert_eq!(t.join(s, k1, "main1", None).unwrap(), None);
        assert_eq!(t.join(s, k2, "sub1", None).unwrap(), None);
        let first = t.up(s, k2, "10.1.0.7".parse().unwrap()).unwrap();
        assert_eq!(first.len(), 1, "main1's pod does not run yet: {first:?}");
        assert_eq!(first[0].0, k2);
        assert!(first[0].1.contains("10.1.0.7\tsub1"), "{first:?}");
        let both = t.up(s, k1, "10.1.0.6".parse().unwrap()).unwrap();
        assert_eq!(both.iter().map(|p| p.0).collect::<Vec<_>>(), vec![k1, k2]);
        for (_, text) in &both {
            assert!(text.contains("10.1.0.6\tmain1\n10.1.0.7\tsub1\n"), "{text}");
        }
        let told = t
            .told(s, vec![("sub2".to_string(), "10.2.0.9".parse().unwrap())])
            .unwrap();
        assert!(
            told.iter().all(|(_, t)| t.contains("10.2.0.9\tsub2")),
            "{told:?}"
        );
    }
}
