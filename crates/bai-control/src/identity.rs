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
}
