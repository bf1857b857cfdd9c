//! Model serving: services (endpoints), their routes and the tokens issued for them.
//!
//! An endpoint's `lifecycle` is `created` (serving or trying to), `destroying` (its routes are
//! being taken down) or `destroyed` (kept for the record). A route is one replica: one
//! inference session, with its own status (`provisioning`, `healthy`, `unhealthy`,
//! `terminating`, `failed_to_start`).

use crate::db::{OptionalExtension, params};
use crate::{Result, Store, StoreError, now_str};
use bai_core::serving::ReplicaTemplate;
use uuid::Uuid;

/// One service: who it is, what its owner asked for (its [`EndpointSpec`]; only the
/// replica count changes after the create) and where it stands (its [`EndpointState`],
/// which the reconciler writes).
#[derive(Debug, Clone, PartialEq)]
pub struct EndpointRow {
    pub id: Uuid,
    pub name: String,
    pub created_at: String,
    /// The HS256 key of its tokens.
    pub token_secret: String,
    pub spec: EndpointSpec,
    pub state: EndpointState,
}

/// What a service was created with, every name resolved.
#[derive(Debug, Clone, PartialEq)]
pub struct EndpointSpec {
    /// The keypair owning its sessions.
    pub access_key: String,
    pub user_id: String,
    /// Who created it (an admin may create one for another keypair).
    pub created_user: String,
    pub domain_name: String,
    pub project: String,
    pub scaling_group: String,
    pub image: String,
    /// The model folder.
    pub model_id: Uuid,
    pub model_mount: String,
    pub model_definition_path: Option<String>,
    /// Desired replicas.
    pub replicas: u32,
    pub open_to_public: bool,
    pub runtime_variant: String,
    /// What each replica session is made from (the `spec` column keeps it).
    pub replica: ReplicaTemplate,
}

/// Where a service stands.
#[derive(Debug, Clone, PartialEq)]
pub struct EndpointState {
    /// The endpoint's URL, once its first route was healthy.
    pub url: Option<String>,
    /// The host port its proxy listens on, once assigned.
    pub port: Option<u16>,
    /// `created`, `destroying` or `destroyed`.
    pub lifecycle: String,
    /// Routes that failed to start since the service was last fully healthy.
    pub retries: u32,
    pub destroyed_at: Option<String>,
}

/// One replica of a service.
#[derive(Debug, Clone, PartialEq)]
pub struct RouteRow {
    pub id: Uuid,
    pub endpoint_id: Uuid,
    pub session_id: Option<Uuid>,
    pub status: String,
    pub traffic_ratio: f64,
    /// Why it failed (JSON), for `failed_to_start` routes.
    pub error: Option<String>,
    pub created_at: String,
}

/// A token issued for a service.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EndpointTokenRow {
    pub id: Uuid,
    pub endpoint_id: Uuid,
    pub token: String,
    pub created_at: String,
    pub valid_until: String,
}

const ENDPOINT_COLS: &str = "id, name, access_key, user_id, created_user, domain_name, project, \
    scaling_group, image, model_id, model_mount, model_definition_path, replicas, spec, \
    open_to_public, runtime_variant, url, port, lifecycle, retries, token_secret, created_at, \
    destroyed_at";
const ROUTE_COLS: &str = "id, endpoint_id, session_id, status, traffic_ratio, error, created_at";

fn uuid(column: &'static str, s: &str) -> Result<Uuid> {
    Uuid::parse_str(s).map_err(|e| crate::sessions::corrupt(column, e))
}

/// A service row, or the column it cannot read.
fn endpoint_row(
    r: &crate::db::Row<'_>,
) -> crate::db::Result<std::result::Result<EndpointRow, StoreError>> {
    let id: String = r.get(0)?;
    let model: String = r.get(9)?;
    let replica: String = r.get(13)?;
    let spec = |model_id, replica| -> crate::db::Result<EndpointSpec> {
        Ok(EndpointSpec {
            access_key: r.get(2)?,
            user_id: r.get(3)?,
            created_user: r.get(4)?,
            domain_name: r.get(5)?,
            project: r.get(6)?,
            scaling_group: r.get(7)?,
            image: r.get(8)?,
            model_id,
            model_mount: r.get(10)?,
            model_definition_path: r.get(11)?,
            replicas: r.get::<_, i64>(12)?.clamp(0, i64::from(u32::MAX)) as u32,
            open_to_public: r.get(14)?,
            runtime_variant: r.get(15)?,
            replica,
        })
    };
    let state = EndpointState {
        url: r.get(16)?,
        port: r
            .get::<_, Option<i64>>(17)?
            .and_then(|p| u16::try_from(p).ok()),
        lifecycle: r.get(18)?,
        retries: r.get::<_, i64>(19)?.clamp(0, i64::from(u32::MAX)) as u32,
        destroyed_at: r.get(22)?,
    };
    let (id, model_id, replica) = match (
        uuid("endpoints.id", &id),
        uuid("endpoints.model_id", &model),
        serde_json::from_str::<ReplicaTemplate>(&replica)
            .map_err(|err| crate::sessions::corrupt("endpoints.spec", err)),
    ) {
        (Ok(id), Ok(model), Ok(replica)) => (id, model, replica),
        (Err(e), _, _) | (_, Err(e), _) | (_, _, Err(e)) => return Ok(Err(e)),
    };
    Ok(Ok(EndpointRow {
        id,
        name: r.get(1)?,
        created_at: r.get(21)?,
        token_secret: r.get(20)?,
        spec: spec(model_id, replica)?,
        state,
    }))
}

fn route_row(
    r: &crate::db::Row<'_>,
) -> crate::db::Result<(String, String, Option<String>, RouteRow)> {
    Ok((
        r.get(0)?,
        r.get(1)?,
        r.get(2)?,
        RouteRow {
            id: Uuid::nil(),
            endpoint_id: Uuid::nil(),
            session_id: None,
            status: r.get(3)?,
            traffic_ratio: r.get(4)?,
            error: r.get(5)?,
            created_at: r.get(6)?,
        },
    ))
}

fn route_with_ids(
    (id, ep, session, mut row): (String, String, Option<String>, RouteRow),
) -> Result<RouteRow> {
    row.id = uuid("routes.id", &id)?;
    row.endpoint_id = uuid("routes.endpoint_id", &ep)?;
    row.session_id = session.map(|s| uuid("routes.session_id", &s)).transpose()?;
    Ok(row)
}

impl Store {
    /// Stores a new service; false when its owner has a live one of that name.
    pub fn insert_endpoint(&self, e: &EndpointRow) -> Result<bool> {
        let replica = serde_json::to_string(&e.spec.replica)
            .map_err(|err| crate::sessions::corrupt("endpoints.spec", err))?;
        Ok(self.conn().execute(
            &format!(
                "INSERT INTO endpoints({ENDPOINT_COLS})
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16,
                         ?17, ?18, ?19, ?20, ?21, ?22, ?23)
             ON CONFLICT DO NOTHING"
            ),
            params![
                e.id.to_string(),
                e.name,
                e.spec.access_key,
                e.spec.user_id,
                e.spec.created_user,
                e.spec.domain_name,
                e.spec.project,
                e.spec.scaling_group,
                e.spec.image,
                e.spec.model_id.to_string(),
                e.spec.model_mount,
                e.spec.model_definition_path,
                i64::from(e.spec.replicas),
                replica,
                e.spec.open_to_public,
                e.spec.runtime_variant,
                e.state.url,
                e.state.port.map(i64::from),
                e.state.lifecycle,
                i64::from(e.state.retries),
                e.token_secret,
                now_str(),
                e.state.destroyed_at,
            ],
        )? == 1)
    }

    pub fn endpoint(&self, id: Uuid) -> Result<Option<EndpointRow>> {
        self.read()
            .query_row(
                &format!("SELECT {ENDPOINT_COLS} FROM endpoints WHERE id = ?1"),
                [id.to_string()],
                endpoint_row,
            )
            .optional()?
            .transpose()
    }

    /// Services not destroyed, of one owner (`access_key`) or of everyone (None), oldest first.
    pub fn live_endpoints(&self, access_key: Option<&str>) -> Result<Vec<EndpointRow>> {
        let conn = self.read();
        let mut st = conn.prepare(&format!(
            "SELECT {ENDPOINT_COLS} FROM endpoints
             WHERE lifecycle != 'destroyed' AND (?1 IS NULL OR access_key = ?1)
             ORDER BY created_at, id"
        ))?;
        let rows = st.query_map([access_key], endpoint_row)?;
        rows.map(|r| r?).collect()
    }

    /// The owner's live service of this name.
    pub fn live_endpoint_named(&self, access_key: &str, name: &str) -> Result<Option<EndpointRow>> {
        self.read()
            .query_row(
                &format!(
                    "SELECT {ENDPOINT_COLS} FROM endpoints
                     WHERE access_key = ?1 AND name = ?2 AND lifecycle != 'destroyed'"
                ),
                [access_key, name],
                endpoint_row,
            )
            .optional()?
            .transpose()
    }

    /// Sets the desired replicas of a live service; false when it is not live.
    pub fn set_endpoint_replicas(&self, id: Uuid, replicas: u32) -> Result<bool> {
        Ok(self.conn().execute(
            "UPDATE endpoints SET replicas = ?2 WHERE id = ?1 AND lifecycle = 'created'",
            params![id.to_string(), i64::from(replicas)],
        )? == 1)
    }

    /// Records the URL and port of a service's proxy.
    pub fn set_endpoint_url(&self, id: Uuid, url: &str, port: u16) -> Result<()> {
        self.conn().execute(
            "UPDATE endpoints SET url = ?2, port = ?3 WHERE id = ?1",
            params![id.to_string(), url, i64::from(port)],
        )?;
        Ok(())
    }

    /// Moves a service to `lifecycle` (`destroying`, `destroyed`); `destroyed` stamps the time.
    pub fn set_endpoint_lifecycle(&self, id: Uuid, lifecycle: &str) -> Result<bool> {
        Ok(self.conn().execute(
            "UPDATE endpoints SET lifecycle = ?2,
                 destroyed_at = CASE WHEN ?2 = 'destroyed' THEN ?3 ELSE destroyed_at END
             WHERE id = ?1 AND lifecycle != 'destroyed'",
            params![id.to_string(), lifecycle, now_str()],
        )? == 1)
    }

    /// Sets the failed-start counter (0 resets it).
    pub fn set_endpoint_retries(&self, id: Uuid, retries: u32) -> Result<()> {
        self.conn().execute(
            "UPDATE endpoints SET retries = ?2 WHERE id = ?1",
            params![id.to_string(), i64::from(retries)],
        )?;
        Ok(())
    }

    pub fn insert_route(&self, r: &RouteRow) -> Result<()> {
        self.conn().execute(
            &format!("INSERT INTO routes({ROUTE_COLS}) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)"),
            params![
                r.id.to_string(),
                r.endpoint_id.to_string(),
                r.session_id.map(|s| s.to_string()),
                r.status,
                r.traffic_ratio,
                r.error,
                now_str()
            ],
        )?;
        Ok(())
    }

    /// A service's routes, oldest first.
    pub fn routes_of(&self, endpoint_id: Uuid) -> Result<Vec<RouteRow>> {
        let conn = self.read();
        let mut st = conn.prepare(&format!(
            "SELECT {ROUTE_COLS} FROM routes WHERE endpoint_id = ?1 ORDER BY created_at, id"
        ))?;
        let rows = st.query_map([endpoint_id.to_string()], route_row)?;
        rows.map(|r| route_with_ids(r?)).collect()
    }

    pub fn route(&self, id: Uuid) -> Result<Option<RouteRow>> {
        self.read()
            .query_row(
                &format!("SELECT {ROUTE_COLS} FROM routes WHERE id = ?1"),
                [id.to_string()],
                route_row,
            )
            .optional()?
            .map(route_with_ids)
            .transpose()
    }

    /// The route a session backs, if any.
    pub fn route_of_session(&self, session_id: Uuid) -> Result<Option<RouteRow>> {
        self.read()
            .query_row(
                &format!("SELECT {ROUTE_COLS} FROM routes WHERE session_id = ?1"),
                [session_id.to_string()],
                route_row,
            )
            .optional()?
            .map(route_with_ids)
            .transpose()
    }

    /// Sets a route's status, and its error when given.
    pub fn set_route_status(&self, id: Uuid, status: &str, error: Option<&str>) -> Result<()> {
        self.conn().execute(
            "UPDATE routes SET status = ?2, error = COALESCE(?3, error) WHERE id = ?1",
            params![id.to_string(), status, error],
        )?;
        Ok(())
    }

    pub fn set_route_session(&self, id: Uuid, session_id: Uuid) -> Result<()> {
        self.conn().execute(
            "UPDATE routes SET session_id = ?2 WHERE id = ?1",
            params![id.to_string(), session_id.to_string()],
        )?;
        Ok(())
    }

    pub fn set_route_ratio(&self, id: Uuid, ratio: f64) -> Result<()> {
        self.conn().execute(
            "UPDATE routes SET traffic_ratio = ?2 WHERE id = ?1",
            params![id.to_string(), ratio],
        )?;
        Ok(())
    }

    pub fn delete_route(&self, id: Uuid) -> Result<()> {
        self.conn()
            .execute("DELETE FROM routes WHERE id = ?1", [id.to_string()])?;
        Ok(())
    }

    /// Forgets a service's failed routes (their errors).
    pub fn clear_failed_routes(&self, endpoint_id: Uuid) -> Result<usize> {
        Ok(self.conn().execute(
            "DELETE FROM routes WHERE endpoint_id = ?1 AND status = 'failed_to_start'",
            [endpoint_id.to_string()],
        )?)
    }

    pub fn insert_endpoint_token(&self, t: &EndpointTokenRow) -> Result<()> {
        self.conn().execute(
            "INSERT INTO endpoint_tokens(id, endpoint_id, token, created_at, valid_until)
             VALUES (?1, ?2, ?3, ?4, ?5)",
            params![
                t.id.to_string(),
                t.endpoint_id.to_string(),
                t.token,
                now_str(),
                t.valid_until
            ],
        )?;
        Ok(())
    }

    /// Tokens issued for a service, oldest first.
    pub fn endpoint_tokens(&self, endpoint_id: Uuid) -> Result<Vec<EndpointTokenRow>> {
        let conn = self.read();
        let mut st = conn.prepare(
            "SELECT id, endpoint_id, token, created_at, valid_until FROM endpoint_tokens
             WHERE endpoint_id = ?1 ORDER BY created_at, id",
        )?;
        let rows = st.query_map([endpoint_id.to_string()], |r| {
            Ok((
                r.get::<_, String>(0)?,
                r.get::<_, String>(1)?,
                r.get::<_, String>(2)?,
                r.get::<_, String>(3)?,
                r.get::<_, String>(4)?,
            ))
        })?;
        rows.map(|r| {
            let (id, ep, token, created_at, valid_until) = r?;
            Ok(EndpointTokenRow {
                id: uuid("endpoint_tokens.id", &id)?,
                endpoint_id: uuid("endpoint_tokens.endpoint_id", &ep)?,
                token,
                created_at,
                valid_until,
            })
        })
        .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn endpoint(name: &str) -> EndpointRow {
        let replica = ReplicaTemplate {
            resources: [(
                "cpu".into(),
                bai_core::amount::NumberOrText::Text("1".into()),
            )]
            .into(),
            resource_opts: Default::default(),
            environ: [("A".into(), "b".into())].into(),
            cluster_mode: Default::default(),
            cluster_size: 1,
            startup_command: None,
            bootstrap_script: None,
            tag: Some("t".into()),
            model_name: "m".into(),
            definition: bai_core::serving::Definition { models: Vec::new() },
        };
        EndpointRow {
            id: Uuid::new_v4(),
            name: name.into(),
            created_at: String::new(),
            token_secret: "k".into(),
            spec: EndpointSpec {
                access_key: "AK".into(),
                user_id: "u".into(),
                created_user: "u".into(),
                domain_name: "default".into(),
                project: "default".into(),
                scaling_group: "default".into(),
                image: "img".into(),
                model_id: Uuid::new_v4(),
                model_mount: "/models".into(),
                model_definition_path: None,
                replicas: 2,
                open_to_public: false,
                runtime_variant: "custom".into(),
                replica,
            },
            state: EndpointState {
                url: None,
                port: None,
                lifecycle: "created".into(),
                retries: 0,
                destroyed_at: None,
            },
        }
    }

    #[test]
    fn a_service_reads_back_as_it_was_stored() {
        let s = Store::open_for_tests().unwrap();
        let e = endpoint("svc");
        assert!(s.insert_endpoint(&e).unwrap());
        let back = s.endpoint(e.id).unwrap().unwrap();
        assert_eq!(back.spec, e.spec);
        assert_eq!(back.state, e.state);
        assert_eq!(
            (back.id, &back.name, &back.token_secret),
            (e.id, &e.name, &e.token_secret)
        );
    }

    #[test]
    fn names_are_unique_among_live_services_only() {
        let s = Store::open_for_tests().unwrap();
        let a = endpoint("svc1");
        assert!(s.insert_endpoint(&a).unwrap());
        assert!(!s.insert_endpoint(&endpoint("svc1")).unwrap());
        assert!(s.set_endpoint_lifecycle(a.id, "destroying").unwrap());
        assert!(s.set_endpoint_lifecycle(a.id, "destroyed").unwrap());
        assert!(
            s.endpoint(a.id)
                .unwrap()
                .unwrap()
                .state
                .destroyed_at
                .is_some()
        );
        assert!(s.live_endpoint_named("AK", "svc1").unwrap().is_none());
        assert!(s.insert_endpoint(&endpoint("svc1")).unwrap());
        assert_eq!(s.live_endpoints(Some("AK")).unwrap().len(), 1);
        assert_eq!(s.live_endpoints(Some("other")).unwrap().len(), 0);
    }

    #[test]
    fn routes_keep_their_session_status_and_error() {
        let s = Store::open_for_tests().unwrap();
        let e = endpoint("svc2");
        s.insert_endpoint(&e).unwrap();
        let r = RouteRow {
            id: Uuid::new_v4(),
            endpoint_id: e.id,
            session_id: None,
            status: "provisioning".into(),
            traffic_ratio: 1.0,
            error: None,
            created_at: String::new(),
        };
        s.insert_route(&r).unwrap();
        let sid = Uuid::new_v4();
        s.set_route_session(r.id, sid).unwrap();
        s.set_route_status(r.id, "failed_to_start", Some("{\"msg\":\"x\"}"))
            .unwrap();
        let got = s.route_of_session(sid).unwrap().unwrap();
        assert_eq!(got.status, "failed_to_start");
        assert_eq!(got.error.as_deref(), Some("{\"msg\":\"x\"}"));
        assert_eq!(s.clear_failed_routes(e.id).unwrap(), 1);
        assert!(s.routes_of(e.id).unwrap().is_empty());
    }
}
