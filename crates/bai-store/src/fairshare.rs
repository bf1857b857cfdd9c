//! Fair share's records: per resource group and account (domain, project, user) the decayed
//! usage as of its last update, when each group was last charged, and the shares
//! administrators set. The decay itself is `bai_sched::fairshare`'s: the caller reads the
//! rows, decays and adds, and writes them back with [`Store::charge_fairshare`] (one row per
//! account, updated in place: no scan of ended sessions).

use crate::db::{OptionalExtension, params};
use crate::{Result, Store};

/// Rows per statement of [`Store::charge_fairshare`] (6 parameters each, far below either
/// engine's limit).
const CHARGE_BATCH: usize = 256;

/// One account's usage in one group, as of `updated_ms` (milliseconds since the epoch).
#[derive(Debug, Clone, PartialEq)]
pub struct UsageRow {
    pub resource_group: String,
    pub domain: String,
    pub project: String,
    pub user_id: String,
    pub usage: f64,
    pub updated_ms: i64,
}

/// Shares an administrator set: `level` is `domain`, `project` or `user`.
#[derive(Debug, Clone, PartialEq)]
pub struct ShareRow {
    pub level: String,
    pub name: String,
    pub shares: f64,
}

fn usage_row(r: &crate::db::Row<'_>) -> crate::db::Result<UsageRow> {
    Ok(UsageRow {
        resource_group: r.get(0)?,
        domain: r.get(1)?,
        project: r.get(2)?,
        user_id: r.get(3)?,
        usage: r.get(4)?,
        updated_ms: r.get(5)?,
    })
}

impl Store {
    /// The usage rows of one group (None: of every group), as stored (not decayed to now).
    pub fn fairshare_usage(&self, group: Option<&str>) -> Result<Vec<UsageRow>> {
        let conn = self.read();
        let cols = "resource_group, domain_name, group_name, user_id, usage, updated_ms";
        let rows = match group {
            Some(g) => {
                let mut st = conn.prepare(&format!(
                    "SELECT {cols} FROM fairshare_usage WHERE resource_group = ?1
                     ORDER BY domain_name, group_name, user_id"
                ))?;
                st.query_map([g], usage_row)?
                    .collect::<crate::db::Result<Vec<_>>>()?
            }
            None => {
                let mut st = conn.prepare(&format!(
                    "SELECT {cols} FROM fairshare_usage
                     ORDER BY resource_group, domain_name, group_name, user_id"
                ))?;
                st.query_map([], usage_row)?
                    .collect::<crate::db::Result<Vec<_>>>()?
            }
        };
        Ok(rows)
    }

    /// When `group` was last charged (milliseconds since the epoch), if ever.
    pub fn fairshare_tick(&self, group: &str) -> Result<Option<i64>> {
        Ok(self
            .read()
            .query_row(
                "SELECT at_ms FROM fairshare_ticks WHERE resource_group = ?1",
                [group],
                |r| r.get(0),
            )
            .optional()?)
    }

    /// Writes the rows given (each replaces its account's row) and `group`'s tick, in one
    /// transaction, [`CHARGE_BATCH`] rows to a statement (a charge of 10,000 accounts is 40
    /// statements, not 10,000 round trips to PostgreSQL).
    pub fn charge_fairshare(&self, group: &str, rows: &[UsageRow], tick_ms: i64) -> Result<()> {
        use crate::db::Value;
        let mut conn = self.conn();
        let tx = conn.transaction()?;
        for chunk in rows.chunks(CHARGE_BATCH) {
            let values: Vec<String> = (0..chunk.len())
                .map(|i| {
                    let b = i * 6;
                    format!(
                        "(?{}, ?{}, ?{}, ?{}, ?{}, ?{})",
                        b + 1,
                        b + 2,
                        b + 3,
                        b + 4,
                        b + 5,
                        b + 6
                    )
                })
                .collect();
            let mut params = Vec::with_capacity(chunk.len() * 6);
            for r in chunk {
                params.extend([
                    Value::Text(r.resource_group.clone()),
                    Value::Text(r.domain.clone()),
                    Value::Text(r.project.clone()),
                    Value::Text(r.user_id.clone()),
                    Value::Real(r.usage),
                    Value::Int(r.updated_ms),
                ]);
            }
            tx.execute(
                &format!(
                    "INSERT INTO fairshare_usage(resource_group, domain_name, group_name, user_id,
                        usage, updated_ms)
                     VALUES {}
                     ON CONFLICT(resource_group, domain_name, group_name, user_id)
                     DO UPDATE SET usage = excluded.usage, updated_ms = excluded.updated_ms",
                    values.join(", ")
                ),
                params,
            )?;
        }
        tx.execute(
            "INSERT INTO fairshare_ticks(resource_group, at_ms) VALUES (?1, ?2)
             ON CONFLICT(resource_group) DO UPDATE SET at_ms = excluded.at_ms",
            params![group, tick_ms],
        )?;
        tx.commit()?;
        Ok(())
    }

    /// Every share an administrator set.
    pub fn fairshare_shares(&self) -> Result<Vec<ShareRow>> {
        let conn = self.read();
        let mut st =
            conn.prepare("SELECT level, name, shares FROM fairshare_shares ORDER BY level, name")?;
        let rows = st.query_map([], |r| {
            Ok(ShareRow {
                level: r.get(0)?,
                name: r.get(1)?,
                shares: r.get(2)?,
            })
        })?;
        Ok(rows.collect::<crate::db::Result<Vec<_>>>()?)
    }

    /// Sets the shares of a domain, project or user (None: back to the default, 1).
    pub fn set_fairshare_share(&self, level: &str, name: &str, shares: Option<f64>) -> Result<()> {
        let conn = self.conn();
        match shares {
            Some(s) => conn.execute(
                "INSERT INTO fairshare_shares(level, name, shares) VALUES (?1, ?2, ?3)
                 ON CONFLICT(level, name) DO UPDATE SET shares = excluded.shares",
                params![level, name, s],
            )?,
            None => conn.execute(
                "DELETE FROM fairshare_shares WHERE level = ?1 AND name = ?2",
                [level, name],
            )?,
        };
        Ok(())
    }
}
