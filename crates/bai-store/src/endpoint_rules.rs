//! Services' auto-scaling rules and the record of their decisions. The rule and the decision
//! are JSON documents of the manager's types; the store keeps them with their service, when
//! a rule was made and last fired, and when a decision was taken.

use crate::db::{OptionalExtension, params};
use crate::{Result, Store, now_str};
use uuid::Uuid;

/// A stored rule.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RuleRow {
    pub id: Uuid,
    pub endpoint_id: Uuid,
    /// The rule, JSON.
    pub rule: String,
    pub created_at: String,
    pub last_triggered_at: Option<String>,
}

fn rule_row(r: &crate::db::Row<'_>) -> crate::db::Result<(String, String, RuleRow)> {
    Ok((
        r.get(0)?,
        r.get(1)?,
        RuleRow {
            id: Uuid::nil(),
            endpoint_id: Uuid::nil(),
            rule: r.get(2)?,
            created_at: r.get(3)?,
            last_triggered_at: r.get(4)?,
        },
    ))
}

fn with_ids((id, ep, mut row): (String, String, RuleRow)) -> Result<RuleRow> {
    row.id = Uuid::parse_str(&id).map_err(|e| crate::sessions::corrupt("endpoint_rules.id", e))?;
    row.endpoint_id = Uuid::parse_str(&ep)
        .map_err(|e| crate::sessions::corrupt("endpoint_rules.endpoint_id", e))?;
    Ok(row)
}

const COLS: &str = "id, endpoint_id, rule, created_at, last_triggered_at";

impl Store {
    /// Stores a rule; returns its creation time.
    pub fn insert_rule(&self, id: Uuid, endpoint_id: Uuid, rule: &str) -> Result<String> {
        let now = now_str();
        self.conn().execute(
            &format!("INSERT INTO endpoint_rules({COLS}) VALUES (?1, ?2, ?3, ?4, NULL)"),
            params![id.to_string(), endpoint_id.to_string(), rule, now],
        )?;
        Ok(now)
    }

    pub fn rule(&self, id: Uuid) -> Result<Option<RuleRow>> {
        self.read()
            .query_row(
                &format!("SELECT {COLS} FROM endpoint_rules WHERE id = ?1"),
                [id.to_string()],
                rule_row,
            )
            .optional()?
            .map(with_ids)
            .transpose()
    }

    /// A service's rules, oldest first.
    pub fn rules_of(&self, endpoint_id: Uuid) -> Result<Vec<RuleRow>> {
        let conn = self.read();
        let mut st = conn.prepare(&format!(
            "SELECT {COLS} FROM endpoint_rules WHERE endpoint_id = ?1 ORDER BY created_at, id"
        ))?;
        let rows = st.query_map([endpoint_id.to_string()], rule_row)?;
        rows.map(|r| with_ids(r?)).collect()
    }

    pub fn update_rule(&self, id: Uuid, rule: &str) -> Result<bool> {
        Ok(self.conn().execute(
            "UPDATE endpoint_rules SET rule = ?2 WHERE id = ?1",
            params![id.to_string(), rule],
        )? == 1)
    }

    pub fn set_rule_triggered(&self, id: Uuid, at: &str) -> Result<()> {
        self.conn().execute(
            "UPDATE endpoint_rules SET last_triggered_at = ?2 WHERE id = ?1",
            params![id.to_string(), at],
        )?;
        Ok(())
    }

    pub fn delete_rule(&self, id: Uuid) -> Result<bool> {
        Ok(self
            .conn()
            .execute("DELETE FROM endpoint_rules WHERE id = ?1", [id.to_string()])?
            == 1)
    }

    /// Records a decision (JSON) of a service's autoscaler at `at`.
    pub fn insert_decision(&self, endpoint_id: Uuid, at: &str, decision: &str) -> Result<Uuid> {
        // Time-ordered, so it breaks a tie of `at` in the order they were made.
        let id = Uuid::now_v7();
        self.conn().execute(
            "INSERT INTO endpoint_decisions(id, endpoint_id, at, decision) VALUES (?1, ?2, ?3, ?4)",
            params![id.to_string(), endpoint_id.to_string(), at, decision],
        )?;
        Ok(id)
    }

    /// A service's decisions, newest first, at most `limit`: (id, at, decision JSON).
    pub fn decisions_of(
        &self,
        endpoint_id: Uuid,
        limit: u32,
    ) -> Result<Vec<(String, String, String)>> {
        let conn = self.read();
        let mut st = conn.prepare(
            "SELECT id, at, decision FROM endpoint_decisions WHERE endpoint_id = ?1
             ORDER BY at DESC, id DESC LIMIT ?2",
        )?;
        let rows = st.query_map(params![endpoint_id.to_string(), limit], |r| {
            Ok((r.get(0)?, r.get(1)?, r.get(2)?))
        })?;
        Ok(rows.collect::<crate::db::Result<Vec<_>>>()?)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rules_and_decisions_are_kept_per_service() {
        let s = Store::open_for_tests().unwrap();
        let (ep, other) = (Uuid::new_v4(), Uuid::new_v4());
        let r = Uuid::new_v4();
        s.insert_rule(r, ep, "{\"a\":1}").unwrap();
        s.insert_rule(Uuid::new_v4(), other, "{}").unwrap();
        assert_eq!(s.rules_of(ep).unwrap().len(), 1);
        assert!(s.update_rule(r, "{\"a\":2}").unwrap());
        s.set_rule_triggered(r, "t1").unwrap();
        let got = s.rule(r).unwrap().unwrap();
        assert_eq!(
            (got.rule.as_str(), got.last_triggered_at.as_deref()),
            ("{\"a\":2}", Some("t1"))
        );
        s.insert_decision(ep, "2026-01-01T00:00:01Z", "{\"n\":1}")
            .unwrap();
        s.insert_decision(ep, "2026-01-01T00:00:02Z", "{\"n\":2}")
            .unwrap();
        let d = s.decisions_of(ep, 10).unwrap();
        assert_eq!(d[0].2, "{\"n\":2}", "newest first");
        assert_eq!(s.decisions_of(ep, 1).unwrap().len(), 1);
        assert!(s.delete_rule(r).unwrap());
        assert!(!s.delete_rule(r).unwrap());
    }
}
