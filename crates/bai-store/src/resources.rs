//! Resource groups, resource presets and keypair resource policies.

use crate::db::{OptionalExtension, params};
use crate::sessions::corrupt;
use crate::{Result, Store, now_str};
use bai_core::resources::ResourceSlots;

/// A resource group: a set of agents with one scheduling configuration.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResourceGroupRow {
    pub name: String,
    pub description: String,
    /// Public groups are open to every keypair; others only to those allowed.
    pub is_public: bool,
    /// `fifo`, `lifo` or `drf`.
    pub scheduler: String,
    /// `dispersed`, `concentrated` or `round-robin`.
    pub selector: String,
    /// Seconds a session may be passed over by smaller ones before it holds the queue.
    pub starvation_secs: i64,
    /// A session PENDING longer than this is cancelled (0 = never).
    pub pending_timeout_secs: i64,
    pub created_at: String,
    /// An inactive group takes no new sessions.
    pub is_active: bool,
    /// Backend.AI's agent driver name (`static`: agents are not provisioned by bai).
    pub driver: String,
    /// JSON text of the driver's options, kept as given.
    pub driver_opts: String,
    pub use_host_network: bool,
    pub wsproxy_addr: Option<String>,
    /// Session types the group takes (`interactive`, `batch`, `inference`).
    pub allowed_session_types: Vec<String>,
    /// Where its sessions' kernels may open connections.
    pub egress: bai_core::egress::EgressPolicy,
    /// The kernels its agents keep started.
    pub warm_pool: bai_core::pool::WarmPoolPolicy,
    /// Its fair-share policy as JSON (bai_sched::fairshare::Policy; `{}`: the defaults),
    /// kept as given.
    pub fairshare: String,
    /// Whether its pending sessions may end running ones.
    pub preemption: bai_core::preemption::PreemptionPolicy,
}

impl ResourceGroupRow {
    pub fn new(name: &str) -> ResourceGroupRow {
        ResourceGroupRow {
            name: name.to_string(),
            description: String::new(),
            is_public: true,
            scheduler: "fifo".into(),
            selector: "dispersed".into(),
            starvation_secs: 300,
            pending_timeout_secs: 0,
            created_at: String::new(),
            is_active: true,
            driver: "static".into(),
            driver_opts: "{}".into(),
            use_host_network: false,
            wsproxy_addr: None,
            allowed_session_types: ["interactive", "batch", "inference"]
                .map(String::from)
                .to_vec(),
            egress: Default::default(),
            warm_pool: Default::default(),
            fairshare: "{}".into(),
            preemption: Default::default(),
        }
    }
}

/// A named set of resources a launch can ask for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PresetRow {
    pub name: String,
    pub slots: ResourceSlots,
    pub shmem: Option<u64>,
}

/// A keypair resource policy.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct PolicyRow {
    pub name: String,
    pub max_concurrent_sessions: Option<i64>,
    pub max_pending_sessions: Option<i64>,
    /// Cap on the sum of a keypair's occupied slots (zero fields are not limited).
    pub total_slots: Option<ResourceSlots>,
    /// Seconds a session may live (0 = no limit).
    pub max_session_lifetime: i64,
    /// Seconds without activity before a session is reclaimed (0 = never).
    pub idle_timeout: i64,
    /// Most kernels (containers) one session may have (None: no limit but bai's own).
    pub max_containers_per_session: Option<i64>,
    /// JSON text: folder host → permissions (Backend.AI's `allowed_vfolder_hosts`).
    pub allowed_vfolder_hosts: String,
    /// Backend.AI's SFTP-session limit, kept as given (bai has no SFTP sessions).
    pub max_concurrent_sftp_sessions: i64,
    /// `LIMITED` or `UNLIMITED`: Backend.AI's reading of slots the policy does not name.
    pub default_for_unspecified: String,
    pub created_at: String,
}

const GROUP_COLUMNS: &str = "name, description, is_public, scheduler, selector, starvation_secs, \
    pending_timeout_secs, created_at, is_active, driver, driver_opts, use_host_network, \
    wsproxy_addr, allowed_session_types, egress, warm_pool, fairshare, preemption";

fn group_row(r: &crate::db::Row<'_>) -> crate::db::Result<ResourceGroupRow> {
    Ok(ResourceGroupRow {
        name: r.get(0)?,
        description: r.get(1)?,
        is_public: r.get(2)?,
        scheduler: r.get(3)?,
        selector: r.get(4)?,
        starvation_secs: r.get(5)?,
        pending_timeout_secs: r.get(6)?,
        created_at: r.get(7)?,
        is_active: r.get(8)?,
        driver: r.get(9)?,
        driver_opts: r.get(10)?,
        use_host_network: r.get(11)?,
        wsproxy_addr: r.get(12)?,
        allowed_session_types: serde_json::from_str(&r.get::<_, String>(13)?).unwrap_or_default(),
        // An unreadable policy is read as the default one, never as open.
        egress: serde_json::from_str(&r.get::<_, String>(14)?).unwrap_or_default(),
        warm_pool: serde_json::from_str(&r.get::<_, String>(15)?).unwrap_or_default(),
        fairshare: r.get(16)?,
        // An unreadable policy is read as off.
        preemption: serde_json::from_str(&r.get::<_, String>(17)?).unwrap_or_default(),
    })
}

fn slots_json(s: &ResourceSlots) -> Result<String> {
    serde_json::to_string(s).map_err(|e| corrupt("slots", e))
}

fn parse_slots(column: &'static str, s: &str) -> Result<ResourceSlots> {
    serde_json::from_str(s).map_err(|e| corrupt(column, e))
}

impl Store {
    pub fn resource_groups(&self) -> Result<Vec<ResourceGroupRow>> {
        let conn = self.read();
        let mut st = conn.prepare(&format!(
            "SELECT {GROUP_COLUMNS} FROM resource_groups ORDER BY name"
        ))?;
        let rows = st.query_map([], group_row)?;
        Ok(rows.collect::<crate::db::Result<Vec<_>>>()?)
    }

    pub fn resource_group(&self, name: &str) -> Result<Option<ResourceGroupRow>> {
        Ok(self
            .read()
            .query_row(
                &format!("SELECT {GROUP_COLUMNS} FROM resource_groups WHERE name = ?1"),
                [name],
                group_row,
            )
            .optional()?)
    }

    /// Inserts or replaces a group's configuration. Returns true when it was new.
    pub fn put_resource_group(&self, g: &ResourceGroupRow) -> Result<bool> {
        let conn = self.conn();
        let existed: bool = conn
            .query_row(
                "SELECT 1 FROM resource_groups WHERE name = ?1",
                [&g.name],
                |_| Ok(true),
            )
            .optional()?
            .unwrap_or(false);
        conn.execute(
            "INSERT INTO resource_groups(name, description, is_public, scheduler, selector,
                starvation_secs, pending_timeout_secs, created_at, is_active, driver,
                driver_opts, use_host_network, wsproxy_addr, allowed_session_types, egress,
                warm_pool, fairshare, preemption)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17,
                ?18)
             ON CONFLICT(name) DO UPDATE SET description = excluded.description,
                is_public = excluded.is_public, scheduler = excluded.scheduler,
                selector = excluded.selector, starvation_secs = excluded.starvation_secs,
                pending_timeout_secs = excluded.pending_timeout_secs,
                is_active = excluded.is_active, driver = excluded.driver,
                driver_opts = excluded.driver_opts,
                use_host_network = excluded.use_host_network,
                wsproxy_addr = excluded.wsproxy_addr,
                allowed_session_types = excluded.allowed_session_types,
                egress = excluded.egress, warm_pool = excluded.warm_pool,
                fairshare = excluded.fairshare, preemption = excluded.preemption",
            params![
                g.name,
                g.description,
                g.is_public,
                g.scheduler,
                g.selector,
                g.starvation_secs,
                g.pending_timeout_secs,
                now_str(),
                g.is_active,
                g.driver,
                g.driver_opts,
                g.use_host_network,
                g.wsproxy_addr,
                serde_json::to_string(&g.allowed_session_types)
                    .map_err(|e| corrupt("allowed_session_types", e))?,
                serde_json::to_string(&g.egress).map_err(|e| corrupt("egress", e))?,
                serde_json::to_string(&g.warm_pool).map_err(|e| corrupt("warm_pool", e))?,
                g.fairshare,
                serde_json::to_string(&g.preemption).map_err(|e| corrupt("preemption", e))?,
            ],
        )?;
        Ok(!existed)
    }

    /// The shapes of the group's single-kernel sessions without accelerators created since
    /// `since`, the most launched first (`limit` of them): what the warm pool's automatic
    /// mode keeps. Reads only sessions whose status changed since then (the index by change).
    pub fn recent_shapes(
        &self,
        group: &str,
        since: &str,
        limit: usize,
    ) -> Result<Vec<bai_core::pool::PoolShape>> {
        let conn = self.read();
        let mut st = conn.prepare(
            "SELECT image, requested_slots, shmem, COUNT(*) AS n FROM sessions
             WHERE status_changed >= ?2 AND created_at >= ?2 AND scaling_group = ?1
               AND cluster_size = 1
               AND type IN ('interactive', 'batch')
             GROUP BY image, requested_slots, shmem
             ORDER BY n DESC, image LIMIT 16",
        )?;
        let rows = st.query_map(params![group, since], |r| {
            Ok((
                r.get::<_, String>(0)?,
                r.get::<_, String>(1)?,
                r.get::<_, i64>(2)?,
            ))
        })?;
        let mut out = Vec::new();
        for row in rows {
            let (image, slots, shmem) = row?;
            let Ok(slots) = parse_slots("requested_slots", &slots) else {
                continue;
            };
            if slots.accel.values().any(|v| *v > 0) || out.len() >= limit {
                continue;
            }
            out.push(bai_core::pool::PoolShape {
                image,
                cpu_milli: slots.cpu_milli,
                mem: slots.mem,
                shmem: u64::try_from(shmem).unwrap_or(0),
            });
        }
        Ok(out)
    }

    pub fn delete_resource_group(&self, name: &str) -> Result<bool> {
        Ok(self
            .conn()
            .execute("DELETE FROM resource_groups WHERE name = ?1", [name])?
            == 1)
    }

    /// Allows (or stops allowing) a keypair to use a non-public group.
    pub fn set_group_access(&self, group: &str, access_key: &str, allow: bool) -> Result<()> {
        let conn = self.conn();
        if allow {
            conn.execute(
                "INSERT INTO resource_group_access(group_name, access_key) VALUES (?1, ?2) ON CONFLICT DO NOTHING",
                [group, access_key],
            )?;
        } else {
            conn.execute(
                "DELETE FROM resource_group_access WHERE group_name = ?1 AND access_key = ?2",
                [group, access_key],
            )?;
        }
        Ok(())
    }

    /// The active groups a keypair may launch in: the public ones, those its keypair was allowed,
    /// and those opened to `project` (None: to any project its user is a member of).
    pub fn groups_for(&self, access_key: &str) -> Result<Vec<ResourceGroupRow>> {
        self.groups_for_project(access_key, None)
    }

    pub fn groups_for_project(
        &self,
        access_key: &str,
        project: Option<&str>,
    ) -> Result<Vec<ResourceGroupRow>> {
        let conn = self.read();
        let mut st = conn.prepare(&format!(
            "SELECT {GROUP_COLUMNS} FROM resource_groups
             WHERE is_active = 1 AND (is_public = 1
                OR name IN (SELECT group_name FROM resource_group_access WHERE access_key = ?1)
                OR name IN (SELECT rp.group_name FROM resource_group_projects rp
                    JOIN project_members pm ON pm.project = rp.project
                    JOIN keypairs k ON k.user_id = pm.user_id
                    WHERE k.access_key = ?1 AND (?2 IS NULL OR rp.project = ?2)))
             ORDER BY name"
        ))?;
        let rows = st.query_map(params![access_key, project], group_row)?;
        Ok(rows.collect::<crate::db::Result<Vec<_>>>()?)
    }

    /// Opens (or closes) a non-public group to every member of a project.
    pub fn set_group_project_access(&self, group: &str, project: &str, allow: bool) -> Result<()> {
        let conn = self.conn();
        if allow {
            conn.execute(
                "INSERT INTO resource_group_projects(group_name, project) VALUES (?1, ?2) ON CONFLICT DO NOTHING",
                [group, project],
            )?;
        } else {
            conn.execute(
                "DELETE FROM resource_group_projects WHERE group_name = ?1 AND project = ?2",
                [group, project],
            )?;
        }
        Ok(())
    }

    pub fn presets(&self) -> Result<Vec<PresetRow>> {
        let conn = self.read();
        let mut st =
            conn.prepare("SELECT name, slots, shmem FROM resource_presets ORDER BY name")?;
        let rows = st.query_map([], |r| {
            Ok((
                r.get::<_, String>(0)?,
                r.get::<_, String>(1)?,
                r.get::<_, Option<i64>>(2)?,
            ))
        })?;
        let mut out = Vec::new();
        for row in rows {
            let (name, slots, shmem) = row?;
            out.push(PresetRow {
                name,
                slots: parse_slots("resource_presets.slots", &slots)?,
                shmem: shmem.map(|v| v.max(0) as u64),
            });
        }
        Ok(out)
    }

    pub fn put_preset(&self, p: &PresetRow) -> Result<()> {
        self.conn().execute(
            "INSERT INTO resource_presets(name, slots, shmem, created_at) VALUES (?1, ?2, ?3, ?4)
             ON CONFLICT(name) DO UPDATE SET slots = excluded.slots, shmem = excluded.shmem",
            params![
                p.name,
                slots_json(&p.slots)?,
                p.shmem.map(|v| v as i64),
                now_str()
            ],
        )?;
        Ok(())
    }

    pub fn delete_preset(&self, name: &str) -> Result<bool> {
        Ok(self
            .conn()
            .execute("DELETE FROM resource_presets WHERE name = ?1", [name])?
            == 1)
    }

    pub fn policies(&self) -> Result<Vec<PolicyRow>> {
        let conn = self.read();
        let mut st = conn.prepare(
            "SELECT name, max_concurrent_sessions, max_pending_sessions, total_slots,
                max_session_lifetime, idle_timeout, max_containers_per_session,
                allowed_vfolder_hosts, max_concurrent_sftp_sessions, default_for_unspecified,
                created_at
             FROM resource_policies ORDER BY name",
        )?;
        let rows = st.query_map([], |r| {
            Ok((
                r.get::<_, String>(0)?,
                r.get::<_, Option<i64>>(1)?,
                r.get::<_, Option<i64>>(2)?,
                r.get::<_, Option<String>>(3)?,
                r.get::<_, i64>(4)?,
                r.get::<_, i64>(5)?,
                r.get::<_, Option<i64>>(6)?,
                (
                    r.get::<_, String>(7)?,
                    r.get::<_, i64>(8)?,
                    r.get::<_, String>(9)?,
                    r.get::<_, String>(10)?,
                ),
            ))
        })?;
        let mut out = Vec::new();
        for row in rows {
            let (name, mc, mp, total, life, idle, containers, (hosts, sftp, unspecified, at)) =
                row?;
            out.push(PolicyRow {
                name,
                max_concurrent_sessions: mc,
                max_pending_sessions: mp,
                total_slots: total
                    .map(|t| parse_slots("resource_policies.total_slots", &t))
                    .transpose()?,
                max_session_lifetime: life,
                idle_timeout: idle,
                max_containers_per_session: containers,
                allowed_vfolder_hosts: hosts,
                max_concurrent_sftp_sessions: sftp,
                default_for_unspecified: unspecified,
                created_at: at,
            });
        }
        Ok(out)
    }

    pub fn put_policy(&self, p: &PolicyRow) -> Result<()> {
        let total = p.total_slots.as_ref().map(slots_json).transpose()?;
        self.conn().execute(
            "INSERT INTO resource_policies(name, max_concurrent_sessions, max_pending_sessions,
                total_slots, max_session_lifetime, idle_timeout, created_at,
                max_containers_per_session, allowed_vfolder_hosts, max_concurrent_sftp_sessions,
                default_for_unspecified)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)
             ON CONFLICT(name) DO UPDATE SET
                max_concurrent_sessions = excluded.max_concurrent_sessions,
                max_pending_sessions = excluded.max_pending_sessions,
                total_slots = excluded.total_slots,
                max_session_lifetime = excluded.max_session_lifetime,
                idle_timeout = excluded.idle_timeout,
                max_containers_per_session = excluded.max_containers_per_session,
                allowed_vfolder_hosts = excluded.allowed_vfolder_hosts,
                max_concurrent_sftp_sessions = excluded.max_concurrent_sftp_sessions,
                default_for_unspecified = excluded.default_for_unspecified",
            params![
                p.name,
                p.max_concurrent_sessions,
                p.max_pending_sessions,
                total,
                p.max_session_lifetime,
                p.idle_timeout,
                now_str(),
                p.max_containers_per_session,
                if p.allowed_vfolder_hosts.is_empty() {
                    "{}"
                } else {
                    &p.allowed_vfolder_hosts
                },
                p.max_concurrent_sftp_sessions,
                if p.default_for_unspecified.is_empty() {
                    "UNLIMITED"
                } else {
                    &p.default_for_unspecified
                }
            ],
        )?;
        Ok(())
    }

    /// Deletes a policy no keypair uses. Returns false when it does not exist.
    pub fn delete_policy(&self, name: &str) -> Result<bool> {
        Ok(self.conn().execute(
            "DELETE FROM resource_policies WHERE name = ?1
                 AND NOT EXISTS (SELECT 1 FROM keypairs WHERE resource_policy = ?1)",
            [name],
        )? == 1)
    }

    pub fn set_keypair_policy(&self, access_key: &str, policy: &str) -> Result<bool> {
        Ok(self.conn().execute(
            "UPDATE keypairs SET resource_policy = ?2 WHERE access_key = ?1",
            [access_key, policy],
        )? == 1)
    }

    /// Every keypair's policy name.
    pub fn keypair_policies(&self) -> Result<Vec<(String, String)>> {
        let conn = self.read();
        let mut st = conn.prepare("SELECT access_key, resource_policy FROM keypairs")?;
        let rows = st.query_map([], |r| Ok((r.get(0)?, r.get(1)?)))?;
        Ok(rows.collect::<crate::db::Result<Vec<_>>>()?)
    }

    /// The policy that applies to a keypair (the default one when its own is gone).
    pub fn policy_of(&self, access_key: &str) -> Result<PolicyRow> {
        let name: Option<String> = self
            .read()
            .query_row(
                "SELECT resource_policy FROM keypairs WHERE access_key = ?1",
                [access_key],
                |r| r.get(0),
            )
            .optional()?;
        let all = self.policies()?;
        let name = name.unwrap_or_else(|| "default".into());
        Ok(all
            .iter()
            .find(|p| p.name == name)
            .or_else(|| all.iter().find(|p| p.name == "default"))
            .cloned()
            .unwrap_or_else(|| PolicyRow {
                name: "default".into(),
                ..Default::default()
            }))
    }

    /// How many PENDING sessions a keypair has.
    pub fn pending_count(&self, access_key: &str) -> Result<i64> {
        let conn = self.read();
        Ok(conn.query_row(
            &format!(
                "SELECT COUNT(*) FROM sessions {} WHERE status = 'PENDING' AND access_key = ?1",
                crate::sessions::by_status(conn.engine())
            ),
            [access_key],
            |r| r.get(0),
        )?)
    }
}
