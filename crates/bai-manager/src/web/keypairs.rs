//! The caller's own keypairs (issue 60), so a user who logs in through the site (LDAP,
//! OpenID) can use `bai` and the official client: `GET /user/keypairs` lists them (never a
//! secret), `POST /user/keypairs` makes another one, `POST /user/keypairs/{ak}/secret` gives
//! one a new secret (the old one stops working at once) and `POST /user/keypairs/{ak}/revoke`
//! deactivates one. A secret is answered once and never logged; every change is audited.
//!
//! Only the caller's own keypairs: another user's is answered as unknown (404), whoever asks.
//! The keypair the web login opens sessions with cannot be revoked here (that would lock a
//! directory or OpenID user out of the web UI), nor the last active one; it can be given a
//! new secret, which is what a user who lost or leaked it needs.

use crate::error::ApiResult;
use crate::state::Manager;
use axum::Extension;
use axum::Json;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use bai_api::sessions::{MyKeypair, MyKeypairs, NewSecret};
use bai_core::Problem;
use bai_ground::identity::Caller;
use bai_store::KeypairInfo;
use std::sync::Arc;

/// The most active keypairs a user may make for themselves.
const MAX_ACTIVE: usize = 10;

/// The caller's keypairs, oldest first.
fn own(m: &Manager, caller: &Caller) -> ApiResult<Vec<KeypairInfo>> {
    let (mut rows, _) = m.store.keypair_list(Some(&caller.email), None, 1000, 0)?;
    rows.retain(|k| k.user_id == caller.user_id);
    rows.reverse();
    Ok(rows)
}

/// The keypair the web login uses (the oldest: see `external::provision`).
fn login_key(m: &Manager, caller: &Caller) -> ApiResult<Option<String>> {
    Ok(m.store
        .keypair_by_email(&caller.email)?
        .map(|k| k.access_key))
}

fn shown(k: &KeypairInfo, login: Option<&str>, caller: &Caller) -> MyKeypair {
    MyKeypair {
        access_key: k.access_key.clone(),
        is_active: k.is_active,
        is_admin: k.is_admin,
        created_at: k.created_at.clone(),
        login: login == Some(k.access_key.as_str()),
        current: k.access_key == caller.access_key,
    }
}

/// One of the caller's keypairs, or a 404 (another user's is not told apart from none).
fn find(rows: Vec<KeypairInfo>, ak: &str) -> Result<KeypairInfo, Problem> {
    rows.into_iter()
        .find(|k| k.access_key == ak)
        .ok_or_else(|| Problem::not_found("keypair", format!("you have no keypair {ak:?}")))
}

/// Audits `action` on `ak` by the caller, passing the outcome through.
fn audited<T>(
    m: &Manager,
    caller: &Caller,
    action: &str,
    ak: &str,
    r: ApiResult<T>,
) -> ApiResult<T> {
    bai_ground::audit::record(
        &m.store,
        &caller.email,
        Some(&caller.access_key),
        action,
        ak,
        match &r {
            Ok(_) => Ok(()),
            Err(e) => Err(e.0.title.as_str()),
        },
    );
    r
}

/// `GET /user/keypairs`.
pub async fn list(
    State(m): State<Arc<Manager>>,
    Extension(caller): Extension<Caller>,
) -> ApiResult<Json<MyKeypairs>> {
    let login = login_key(&m, &caller)?;
    let items = own(&m, &caller)?
        .iter()
        .map(|k| shown(k, login.as_deref(), &caller))
        .collect();
    Ok(Json(MyKeypairs { items }))
}

/// `POST /user/keypairs`: another keypair, with the login keypair's role, policy and rate
/// limit; its secret is in the answer only.
pub async fn create(
    State(m): State<Arc<Manager>>,
    Extension(caller): Extension<Caller>,
) -> ApiResult<(StatusCode, Json<NewSecret>)> {
    let (ak, sk) = bai_core::sign::new_keypair();
    let r = make(&m, &caller, &ak, sk);
    let r = audited(&m, &caller, "keypair create", &ak, r);
    if r.is_ok() {
        tracing::info!(email = %caller.email, access_key = %ak, "keypair made by its user");
    }
    r.map(|s| (StatusCode::CREATED, Json(s)))
}

fn make(m: &Manager, caller: &Caller, ak: &str, sk: String) -> ApiResult<NewSecret> {
    let rows = own(m, caller)?;
    if rows.iter().filter(|k| k.is_active).count() >= MAX_ACTIVE {
        return Err(Problem::conflict(
            "too-many-keypairs",
            "Too many keypairs",
            format!("you have {MAX_ACTIVE} active keypairs: revoke one you no longer use first"),
        )
        .into());
    }
    let login = login_key(m, caller)?;
    let like = rows
        .iter()
        .find(|k| Some(&k.access_key) == login.as_ref())
        .or(rows.first());
    let k = KeypairInfo {
        access_key: ak.to_string(),
        secret_key: sk.clone(),
        user_id: caller.user_id.clone(),
        email: caller.email.clone(),
        full_name: String::new(),
        is_active: true,
        is_admin: like.is_some_and(|k| k.is_admin),
        resource_policy: like.map_or_else(|| "default".into(), |k| k.resource_policy.clone()),
        rate_limit: like.map_or(10_000, |k| k.rate_limit),
        created_at: String::new(),
        concurrency_used: 0,
    };
    if !m.store.add_keypair(&caller.email, &k)? {
        return Err(Problem::not_found("user", "your account is gone").into());
    }
    Ok(NewSecret {
        access_key: ak.to_string(),
        secret_key: sk,
    })
}

/// `POST /user/keypairs/{access_key}/secret`: a new secret for one of the caller's active
/// keypairs; the old secret stops working at once.
pub async fn new_secret(
    State(m): State<Arc<Manager>>,
    Extension(caller): Extension<Caller>,
    Path(ak): Path<String>,
) -> ApiResult<Json<NewSecret>> {
    let r = rotate(&m, &caller, &ak);
    let r = audited(&m, &caller, "keypair new secret", &ak, r);
    if r.is_ok() {
        tracing::info!(email = %caller.email, access_key = %ak, "keypair given a new secret by its user");
    }
    r.map(Json)
}

fn rotate(m: &Manager, caller: &Caller, ak: &str) -> ApiResult<NewSecret> {
    let k = find(own(m, caller)?, ak)?;
    if !k.is_active {
        return Err(Problem::conflict(
            "keypair-revoked",
            "Keypair revoked",
            format!("keypair {ak:?} is revoked: make a new keypair instead"),
        )
        .into());
    }
    let (_, sk) = bai_core::sign::new_keypair();
    if !m.store.set_secret_key(ak, &sk)? {
        return Err(Problem::not_found("keypair", format!("you have no keypair {ak:?}")).into());
    }
    Ok(NewSecret {
        access_key: ak.to_string(),
        secret_key: sk,
    })
}

/// `POST /user/keypairs/{access_key}/revoke`: deactivates one of the caller's keypairs;
/// requests signed with it are refused from now on (an administrator can turn it on again).
pub async fn revoke(
    State(m): State<Arc<Manager>>,
    Extension(caller): Extension<Caller>,
    Path(ak): Path<String>,
) -> ApiResult<Json<MyKeypair>> {
    let r = deactivate(&m, &caller, &ak);
    let r = audited(&m, &caller, "keypair revoke", &ak, r);
    if r.is_ok() {
        tracing::info!(email = %caller.email, access_key = %ak, "keypair revoked by its user");
    }
    r.map(Json)
}

fn deactivate(m: &Manager, caller: &Caller, ak: &str) -> ApiResult<MyKeypair> {
    let rows = own(m, caller)?;
    let others_active = rows
        .iter()
        .filter(|k| k.is_active && k.access_key != ak)
        .count();
    let mut k = find(rows, ak)?;
    let login = login_key(m, caller)?;
    if login.as_deref() == Some(ak) || (k.is_active && others_active == 0) {
        return Err(Problem::conflict(
            "keypair-needed",
            "Keypair needed",
            format!(
                "keypair {ak:?} is the one your web login uses: revoking it would lock you out. \
                 Make it a new secret instead (the old secret stops working at once)"
            ),
        )
        .into());
    }
    if k.is_active {
        let change = bai_store::KeypairChange {
            is_active: Some(false),
            ..Default::default()
        };
        m.store.modify_keypair(ak, &change)?;
        k.is_active = false;
    }
    Ok(shown(&k, login.as_deref(), caller))
}
