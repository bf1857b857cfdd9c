//! Who is calling, as the API's edge established it (signature or web cookie). The lifecycle
//! and the subsystems see only this, never the HTTP layer that produced it.

/// Who is calling. Inserted as a request extension by `auth::authenticate`.
#[derive(Debug, Clone)]
pub struct Caller {
    pub access_key: String,
    pub user_id: String,
    pub email: String,
    pub is_admin: bool,
}

impl From<bai_store::KeypairRow> for Caller {
    fn from(kp: bai_store::KeypairRow) -> Caller {
        Caller {
            access_key: kp.access_key,
            user_id: kp.user_id,
            email: kp.email,
            is_admin: kp.is_admin,
        }
    }
}

impl Caller {
    /// The owner filter for lookups: admins see everyone's sessions.
    pub fn owner_filter(&self) -> Option<&str> {
        if self.is_admin {
            None
        } else {
            Some(&self.access_key)
        }
    }

    /// Whose keypair a request acts for: the caller's own, or the one `asked` names
    /// (`owner_access_key`), which only administrators may name; `what` says what they
    /// would do for it (e.g. "create sessions"). Returns its access key and user id.
    pub fn owner(
        &self,
        store: &bai_store::Store,
        asked: Option<&str>,
        what: &str,
    ) -> Result<(String, String), bai_core::Problem> {
        match asked {
            Some(ak) if ak != self.access_key => {
                if !self.is_admin {
                    return Err(bai_core::Problem::forbidden(format!(
                        "only administrators can {what} for another user (owner_access_key)"
                    )));
                }
                let kp = store.keypair(ak)?.ok_or_else(|| {
                    bai_core::Problem::invalid(format!("no keypair with access key {ak:?}"))
                })?;
                Ok((kp.access_key, kp.user_id))
            }
            _ => Ok((self.access_key.clone(), self.user_id.clone())),
        }
    }
}
