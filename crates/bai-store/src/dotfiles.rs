//! A user's dotfiles (`bai_core::dotfile`): read whole, and changed whole in one
//! transaction, so the per-user limits hold however many calls run at once.

use crate::db::params;
use crate::{Result, Store, StoreError, now_str};
use bai_core::dotfile::Dotfile;

fn read_all(conn: &crate::db::Connection, user_id: &str) -> Result<Vec<Dotfile>> {
    let mut st =
        conn.prepare("SELECT path, mode, data FROM dotfiles WHERE user_id = ?1 ORDER BY path")?;
    let rows = st.query_map([user_id], |r| {
        Ok((r.get::<_, String>(0)?, r.get::<_, i64>(1)?, r.get(2)?))
    })?;
    let mut out = Vec::new();
    for row in rows {
        let (path, mode, data) = row?;
        let mode = u32::try_from(mode).map_err(|_| StoreError::Corrupt {
            column: "dotfiles.mode",
            detail: mode.to_string(),
        })?;
        out.push(Dotfile { path, mode, data });
    }
    Ok(out)
}

impl Store {
    /// A user's dotfiles, by path.
    pub fn dotfiles(&self, user_id: &str) -> Result<Vec<Dotfile>> {
        read_all(&self.read(), user_id)
    }

    /// Changes a user's dotfiles in one transaction: `edit` gets them all (by path) and
    /// changes the list, or refuses with its own error (then nothing is written).
    pub fn edit_dotfiles<E>(
        &self,
        user_id: &str,
        edit: impl FnOnce(&mut Vec<Dotfile>) -> std::result::Result<(), E>,
    ) -> Result<std::result::Result<(), E>> {
        let mut conn = self.conn();
        let tx = conn.transaction()?;
        let mut all = read_all(&tx, user_id)?;
        if let Err(e) = edit(&mut all) {
            return Ok(Err(e));
        }
        tx.execute("DELETE FROM dotfiles WHERE user_id = ?1", [user_id])?;
        let now = now_str();
        for d in &all {
            tx.execute(
                "INSERT INTO dotfiles(user_id, path, mode, data, updated_at)
                 VALUES (?1, ?2, ?3, ?4, ?5)",
                params![user_id, d.path, i64::from(d.mode), d.data, now],
            )?;
        }
        tx.commit()?;
        Ok(Ok(()))
    }
}

#[cfg(test)]
mod tests {
    use crate::Store;
    use bai_core::dotfile::Dotfile;

    #[test]
    fn dotfiles_are_kept_per_user_and_a_refused_edit_writes_nothing() {
        let s = Store::open_for_tests().expect("store");
        let vimrc = Dotfile {
            path: ".vimrc".into(),
            mode: 0o600,
            data: "set nu\n".into(),
        };
        let r: Result<(), String> = s
            .edit_dotfiles("u1", |all| {
                all.push(vimrc.clone());
                Ok(())
            })
            .expect("edit");
        assert!(r.is_ok());
        assert_eq!(s.dotfiles("u1").expect("read"), vec![vimrc.clone()]);
        assert!(s.dotfiles("u2").expect("read").is_empty());
        let refused = s
            .edit_dotfiles("u1", |all| {
                all.clear();
                Err("no")
            })
            .expect("edit");
        assert_eq!(refused, Err("no"));
        assert_eq!(s.dotfiles("u1").expect("read"), vec![vimrc]);
    }
}
