//! A PostgreSQL connection owned by a thread of its own.
//!
//! The `postgres` client drives a small runtime of its own and must not be called from inside
//! the manager's runtime; the store is called from there. So each connection lives on a plain
//! thread, and a call hands it the work and waits, as a call of an SQLite connection waits for
//! its lock. A dropped server connection is made again at the next call.

use super::{Error, Result, Value};
use bytes::BytesMut;
use postgres::types::{FromSql, IsNull, Kind, ToSql, Type, to_sql_checked};
use postgres::{Client, NoTls};
use std::collections::HashMap;
use std::sync::mpsc;

type Job = Box<dyn FnOnce(&mut Worker) + Send>;

/// One connection to a PostgreSQL server.
pub struct PgConn {
    jobs: mpsc::Sender<Job>,
}

struct Worker {
    /// Inside BEGIN … COMMIT/ROLLBACK: a lost connection lost the transaction, so a
    /// statement is not tried again on a new one.
    in_tx: bool,
    config: postgres::Config,
    client: Option<Client>,
    /// Statements by (SQL as written, parameter types).
    statements: HashMap<(String, Vec<u32>), postgres::Statement>,
    /// The check every write makes first, in its transaction (`SELECT bai_fence(…)`): set
    /// on a leader's writer ([`PgConn::fence`]).
    fence: Option<String>,
}

impl PgConn {
    /// Connects (on the connection's own thread); an unreachable server is an error now.
    pub fn connect(url: &str) -> Result<PgConn> {
        let mut config: postgres::Config = url.parse().map_err(|e: postgres::Error| {
            Error::Connect(format!("not a PostgreSQL URL: {}", describe(&e)))
        })?;
        // An unreachable server is an error in seconds, not at the kernel's TCP timeout; a
        // dead link is noticed by keepalives.
        if config.get_connect_timeout().is_none() {
            config.connect_timeout(std::time::Duration::from_secs(10));
        }
        config.keepalives_idle(std::time::Duration::from_secs(10));
        let (jobs, incoming) = mpsc::channel::<Job>();
        let (ready, connected) = mpsc::channel();
        std::thread::Builder::new()
            .name("bai-pg".into())
            .spawn(move || {
                let mut w = Worker {
                    in_tx: false,
                    config,
                    client: None,
                    statements: HashMap::new(),
                    fence: None,
                };
                let first = w.client().map(|_| ());
                let _ = ready.send(first);
                for job in incoming {
                    job(&mut w);
                }
            })
            .map_err(|e| Error::Closed(format!("cannot start a connection thread: {e}")))?;
        connected
            .recv()
            .map_err(|_| Error::Closed("the connection thread ended".into()))??;
        Ok(PgConn { jobs })
    }

    fn call<T: Send + 'static>(
        &self,
        f: impl FnOnce(&mut Worker) -> Result<T> + Send + 'static,
    ) -> Result<T> {
        let (tx, rx) = mpsc::channel();
        self.jobs
            .send(Box::new(move |w: &mut Worker| {
                let _ = tx.send(f(w));
            }))
            .map_err(|_| Error::Closed("the connection thread ended".into()))?;
        rx.recv()
            .map_err(|_| Error::Closed("the connection thread ended".into()))?
    }

    /// From now on every write on this connection first checks that lease `lease` still has
    /// term `term`, in the write's own transaction (a statement outside one gets one), and
    /// fails with [`Error::Fenced`] when another holder took it over.
    pub fn fence(&self, lease: &str, term: i64) -> Result<()> {
        let check = format!("SELECT bai_fence('{}', {term})", lease.replace('\'', "''"));
        self.call(move |w| {
            w.fence = Some(check);
            Ok(())
        })
    }

    pub fn query(&self, sql: &str, params: Vec<Value>) -> Result<Vec<Vec<Value>>> {
        self.rows(sql, params)?
            .iter()
            .map(|r| (0..r.len()).map(|i| column_value(r, i)).collect())
            .collect()
    }

    /// The rows as the server sent them: each column is decoded where it is read
    /// ([`column_value`]), on the caller's thread, once (not first into [`Value`]s that the
    /// reader then copies).
    pub fn rows(&self, sql: &str, params: Vec<Value>) -> Result<Vec<postgres::Row>> {
        let sql = sql.to_string();
        self.call(move |w| w.fenced(&sql, |w| w.query(&sql, &params)))
    }

    pub fn execute(&self, sql: &str, params: Vec<Value>) -> Result<u64> {
        let sql = sql.to_string();
        self.call(move |w| w.fenced(&sql, |w| w.execute(&sql, &params)))
    }

    pub fn batch(&self, sql: &str) -> Result<()> {
        let sql = sql.to_string();
        self.call(move |w| {
            // The façade's transactions are these three statements, each alone.
            let word = sql.trim().to_ascii_uppercase();
            if word == "BEGIN" {
                return w.begin();
            }
            let r = w.client()?.batch_execute(&sql);
            let r = w.settle(r);
            if let "COMMIT" | "ROLLBACK" = word.as_str() {
                w.in_tx = false;
            }
            r
        })
    }
}

impl Worker {
    /// BEGIN, with the fence's check in the same round trip when there is one.
    fn begin(&mut self) -> Result<()> {
        let sql = match &self.fence {
            Some(check) => format!("BEGIN; {check}"),
            None => "BEGIN".to_string(),
        };
        let r = match self.client()?.batch_execute(&sql) {
            // Beginning changes nothing: on a dropped connection, once more on a new one.
            Err(e) if is_lost(&e) => {
                self.drop_connection();
                self.client()?.batch_execute(&sql)
            }
            r => r,
        };
        match r {
            Ok(()) => {
                self.in_tx = true;
                Ok(())
            }
            Err(e) => {
                // A failed check leaves the transaction aborted: end it.
                if !is_lost(&e) {
                    let _ = self.client()?.batch_execute("ROLLBACK");
                }
                self.in_tx = false;
                if e.code().is_some_and(|c| c.code() == FENCED) {
                    let msg = e.as_db_error().map(|d| d.message().to_string());
                    return Err(Error::Fenced(msg.unwrap_or_else(|| e.to_string())));
                }
                self.settle(Err(e))
            }
        }
    }

    /// `run` as is, or, on a fenced connection outside a transaction, a statement that may
    /// write inside one that checks the fence first.
    fn fenced<T>(&mut self, sql: &str, run: impl FnOnce(&mut Self) -> Result<T>) -> Result<T> {
        let read = only_reads(sql);
        if self.fence.is_none() || self.in_tx || read {
            return run(self);
        }
        self.begin()?;
        let r = run(self);
        let end = if r.is_ok() { "COMMIT" } else { "ROLLBACK" };
        let ended = match self.client() {
            Ok(c) => {
                let r = c.batch_execute(end);
                self.settle(r)
            }
            Err(e) => Err(e),
        };
        self.in_tx = false;
        let v = r?;
        ended?;
        Ok(v)
    }

    fn client(&mut self) -> Result<&mut Client> {
        if self.client.as_ref().is_none_or(|c| c.is_closed()) {
            self.drop_connection();
            let mut c = self
                .config
                .connect(NoTls)
                .map_err(|e| Error::Connect(describe(&e)))?;
            // A transaction left open by a process that stopped (SIGSTOP, a frozen VM) ends
            // by itself: its locks (a leader's hold on the lease row among them) would
            // otherwise keep a takeover waiting for good. bai's transactions never wait for
            // anything between two statements.
            c.batch_execute(IDLE_IN_TRANSACTION)
                .map_err(|e| Error::Connect(describe(&e)))?;
            self.client = Some(c);
        }
        self.client
            .as_mut()
            .ok_or_else(|| Error::Closed("no connection".into()))
    }

    /// Forgets the connection and what was prepared on it; the next call connects anew.
    fn drop_connection(&mut self) {
        self.client = None;
        self.statements.clear();
    }

    /// A failure that closed the connection is one the next call reconnects after.
    fn settle<T>(&mut self, r: std::result::Result<T, postgres::Error>) -> Result<T> {
        r.map_err(|e| {
            if is_lost(&e) {
                self.drop_connection();
            }
            Error::Pg(e)
        })
    }

    fn statement(&mut self, sql: &str, params: &[Value]) -> Result<postgres::Statement> {
        let types: Vec<Type> = params.iter().map(|v| declared(v, false)).collect();
        let key = (
            sql.to_string(),
            types.iter().map(Type::oid).collect::<Vec<_>>(),
        );
        // A connection made again has none of the cached statements: connect first.
        self.client()?;
        if let Some(st) = self.statements.get(&key) {
            return Ok(st.clone());
        }
        let text = placeholders(sql, &[]);
        let first = match self.client()?.prepare_typed(&text, &types) {
            // Preparing changes nothing: on a dropped connection, once more on a new one.
            Err(e) if is_lost(&e) => {
                self.drop_connection();
                self.client()?.prepare_typed(&text, &types)
            }
            r => r,
        };
        let st = match first {
            // A null left open whose type nothing else fixes (`?1 IS NULL OR x = ?1`, where
            // PostgreSQL meets `?1 IS NULL` first): the null is written in as NULL.
            Err(e)
                if e.code() == Some(&postgres::error::SqlState::INDETERMINATE_DATATYPE)
                    || e.code() == Some(&postgres::error::SqlState::AMBIGUOUS_PARAMETER) =>
            {
                let nulls: Vec<bool> = params.iter().map(|v| *v == Value::Null).collect();
                let types: Vec<Type> = params.iter().map(|v| declared(v, true)).collect();
                let text = placeholders(sql, &nulls);
                let r = self.client()?.prepare_typed(&text, &types);
                self.settle(r)?
            }
            r => self.settle(r)?,
        };
        self.statements.insert(key, st.clone());
        Ok(st)
    }

    /// A statement outside a transaction that met a dropped connection (the server
    /// restarted, a connection was killed) is tried once more on a new one when it surely
    /// never ran: the server said it ended the connection (57P0x: a statement it was
    /// running is rolled back), or the statement only reads. A write whose answer was lost
    /// on the wire is not tried again (it may have committed): its caller sees the error.
    fn query(&mut self, sql: &str, params: &[Value]) -> Result<Vec<postgres::Row>> {
        match self.query_rows(sql, params) {
            Err(Error::Pg(e)) if self.again(&e, sql) => self.query_rows(sql, params),
            r => r,
        }
        .map_err(|e| in_statement(e, sql))
    }

    fn execute(&mut self, sql: &str, params: &[Value]) -> Result<u64> {
        match self.execute_once(sql, params) {
            Err(Error::Pg(e)) if self.again(&e, sql) => self.execute_once(sql, params),
            r => r,
        }
        .map_err(|e| in_statement(e, sql))
    }

    fn again(&mut self, e: &postgres::Error, sql: &str) -> bool {
        let ended_by_server = e.code().is_some_and(|c| c.code().starts_with("57P"));
        let read = only_reads(sql);
        let again = !self.in_tx && (ended_by_server || read && is_lost(e));
        if again {
            self.drop_connection();
        }
        again
    }

    fn query_rows(&mut self, sql: &str, params: &[Value]) -> Result<Vec<postgres::Row>> {
        let st = self.statement(sql, params)?;
        let args: Vec<&(dyn ToSql + Sync)> = params.iter().map(|v| v as _).collect();
        let r = self.client()?.query(&st, &args);
        self.settle(r)
    }

    fn execute_once(&mut self, sql: &str, params: &[Value]) -> Result<u64> {
        let st = self.statement(sql, params)?;
        let args: Vec<&(dyn ToSql + Sync)> = params.iter().map(|v| v as _).collect();
        let r = self.client()?.execute(&st, &args);
        self.settle(r)
    }
}

/// Column `i` of `row` as a [`Value`].
pub(crate) fn column_value(row: &postgres::Row, i: usize) -> Result<Value> {
    row.try_get::<_, Value>(i).map_err(Error::Pg)
}

/// Whether a statement only reads (bai writes no `SELECT` that changes anything).
fn only_reads(sql: &str) -> bool {
    sql.trim_start()
        .get(..6)
        .is_some_and(|w| w.eq_ignore_ascii_case("SELECT"))
}

/// How long the server lets a session sit inside a transaction without a statement.
const IDLE_IN_TRANSACTION: &str = "SET idle_in_transaction_session_timeout = '3s'";

/// The SQLSTATE `bai_fence` raises when the lease changed hands.
const FENCED: &str = "BAIFN";

/// The connection is gone or the server cannot be reached (not a fault of the statement).
pub(crate) fn is_lost(e: &postgres::Error) -> bool {
    // 08: connection exceptions; 57P0x: the server shutting down or killing the backend.
    let code = e.code().map(|c| c.code()).unwrap_or("");
    if e.is_closed() || code.starts_with("08") || code.starts_with("57P") {
        return true;
    }
    let mut src = std::error::Error::source(e);
    while let Some(c) = src {
        if c.is::<std::io::Error>() {
            return true;
        }
        src = c.source();
    }
    false
}

/// A server's error names the statement it was about (one line of it).
fn in_statement(e: Error, sql: &str) -> Error {
    match e {
        Error::Pg(source) if source.as_db_error().is_some() => Error::PgStatement {
            source,
            sql: sql.split_whitespace().collect::<Vec<_>>().join(" "),
        },
        e => e,
    }
}

/// The type a parameter is declared as: its value's, a null's left to the server (or text).
fn declared(v: &Value, null_as_text: bool) -> Type {
    match v {
        Value::Int(_) => Type::INT8,
        Value::Real(_) => Type::FLOAT8,
        Value::Text(_) => Type::TEXT,
        Value::Blob(_) => Type::BYTEA,
        Value::Null if null_as_text => Type::TEXT,
        Value::Null => Type::new("unspecified".into(), 0, Kind::Simple, "pg_catalog".into()),
    }
}

/// `?N` and `?` parameters as PostgreSQL's `$N` (not inside quoted strings or identifiers);
/// a parameter whose `nulls` entry is true as the literal `NULL`.
pub(crate) fn placeholders(sql: &str, nulls: &[bool]) -> String {
    let mut out = String::with_capacity(sql.len() + 8);
    let mut next = 0usize;
    let mut quote: Option<char> = None;
    let mut chars = sql.chars().peekable();
    while let Some(c) = chars.next() {
        match quote {
            Some(q) => {
                out.push(c);
                if c == q {
                    quote = None;
                }
            }
            None if c == '\'' || c == '"' => {
                quote = Some(c);
                out.push(c);
            }
            None if c == '?' => {
                let mut digits = String::new();
                while let Some(d) = chars.peek().filter(|d| d.is_ascii_digit()) {
                    digits.push(*d);
                    chars.next();
                }
                if digits.is_empty() {
                    next += 1;
                    digits = next.to_string();
                } else if let Ok(n) = digits.parse::<usize>() {
                    next = next.max(n);
                }
                let n = digits.parse::<usize>().unwrap_or(0);
                if n > 0 && nulls.get(n - 1) == Some(&true) {
                    out.push_str("NULL");
                } else {
                    out.push('$');
                    out.push_str(&digits);
                }
            }
            None => out.push(c),
        }
    }
    out
}

/// The URL without its password, for messages.
pub fn redact(url: &str) -> String {
    match (url.find("://"), url.rfind('@')) {
        (Some(s), Some(at)) if at > s => {
            let cred = &url[s + 3..at];
            match cred.find(':') {
                Some(c) => format!("{}{}:***{}", &url[..s + 3], &cred[..c], &url[at..]),
                None => url.to_string(),
            }
        }
        _ => url.to_string(),
    }
}

/// A PostgreSQL error in one line: the server's message when it sent one.
pub(crate) fn describe(e: &postgres::Error) -> String {
    match e.as_db_error() {
        Some(db) => format!("{} ({})", db.message(), db.code().code()),
        None => {
            let mut s = e.to_string();
            let mut src = std::error::Error::source(e);
            while let Some(c) = src {
                s.push_str(": ");
                s.push_str(&c.to_string());
                src = c.source();
            }
            s
        }
    }
}

impl ToSql for Value {
    fn to_sql(
        &self,
        ty: &Type,
        out: &mut BytesMut,
    ) -> std::result::Result<IsNull, Box<dyn std::error::Error + Sync + Send>> {
        match (self, ty) {
            (Value::Null, _) => return Ok(IsNull::Yes),
            (Value::Int(i), t) if *t == Type::INT8 => i.to_sql(ty, out)?,
            (Value::Int(i), t) if *t == Type::INT4 => i32::try_from(*i)?.to_sql(ty, out)?,
            (Value::Int(i), t) if *t == Type::INT2 => i16::try_from(*i)?.to_sql(ty, out)?,
            (Value::Int(i), t) if *t == Type::FLOAT8 => (*i as f64).to_sql(ty, out)?,
            (Value::Int(i), t) if *t == Type::BOOL => (*i != 0).to_sql(ty, out)?,
            (Value::Int(i), _) => i.to_string().as_str().to_sql(&Type::TEXT, out)?,
            (Value::Real(f), t) if *t == Type::FLOAT4 => (*f as f32).to_sql(ty, out)?,
            (Value::Real(f), _) => f.to_sql(&Type::FLOAT8, out)?,
            (Value::Text(s), _) => s.as_str().to_sql(&Type::TEXT, out)?,
            (Value::Blob(b), _) => b.as_slice().to_sql(&Type::BYTEA, out)?,
        };
        Ok(IsNull::No)
    }

    fn accepts(_: &Type) -> bool {
        true
    }

    to_sql_checked!();
}

impl<'a> FromSql<'a> for Value {
    fn from_sql(
        ty: &Type,
        raw: &'a [u8],
    ) -> std::result::Result<Value, Box<dyn std::error::Error + Sync + Send>> {
        Ok(match *ty {
            Type::BOOL => Value::Int(i64::from(bool::from_sql(ty, raw)?)),
            Type::INT2 => Value::Int(i64::from(i16::from_sql(ty, raw)?)),
            Type::INT4 => Value::Int(i64::from(i32::from_sql(ty, raw)?)),
            Type::INT8 => Value::Int(i64::from_sql(ty, raw)?),
            Type::OID => Value::Int(i64::from(u32::from_sql(ty, raw)?)),
            Type::FLOAT4 => Value::Real(f64::from(f32::from_sql(ty, raw)?)),
            Type::FLOAT8 => Value::Real(f64::from_sql(ty, raw)?),
            Type::NUMERIC => numeric(raw)?,
            Type::BYTEA => Value::Blob(raw.to_vec()),
            Type::JSONB if raw.first() == Some(&1) => {
                Value::Text(String::from_utf8(raw[1..].to_vec())?)
            }
            _ => Value::Text(String::from_utf8(raw.to_vec())?),
        })
    }

    fn from_sql_null(
        _: &Type,
    ) -> std::result::Result<Value, Box<dyn std::error::Error + Sync + Send>> {
        Ok(Value::Null)
    }

    fn accepts(_: &Type) -> bool {
        true
    }
}

/// NUMERIC's binary form (a SUM or AVG of integers): an integer when it has no fraction.
fn numeric(raw: &[u8]) -> std::result::Result<Value, Box<dyn std::error::Error + Sync + Send>> {
    let word = |i: usize| -> std::result::Result<u16, Box<dyn std::error::Error + Sync + Send>> {
        raw.get(i * 2..i * 2 + 2)
            .map(|b| u16::from_be_bytes([b[0], b[1]]))
            .ok_or_else(|| "a short NUMERIC".into())
    };
    let ndigits = word(0)? as usize;
    let weight = word(1)? as i16;
    let sign = word(2)?;
    let dscale = word(3)?;
    if sign == 0xC000 {
        return Ok(Value::Real(f64::NAN));
    }
    let mut int: i128 = 0;
    let mut frac = 0f64;
    for i in 0..ndigits {
        let d = word(4 + i)?;
        let power = i32::from(weight) - i as i32;
        if power >= 0 {
            int = 10_000i128
                .checked_pow(power as u32)
                .and_then(|scale| i128::from(d).checked_mul(scale))
                .and_then(|x| int.checked_add(x))
                .ok_or("a NUMERIC too large")?;
        } else {
            frac += f64::from(d) * 10_000f64.powi(power);
        }
    }
    let negative = sign == 0x4000;
    if dscale == 0 && frac == 0.0 {
        let v = i64::try_from(int)?;
        return Ok(Value::Int(if negative { -v } else { v }));
    }
    let v = int as f64 + frac;
    Ok(Value::Real(if negative { -v } else { v }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn placeholders_become_dollars_outside_strings() {
        assert_eq!(
            placeholders(
                "SELECT a FROM t WHERE b = ?1 AND c = ?2 AND d = '?3' AND e = ?",
                &[]
            ),
            "SELECT a FROM t WHERE b = $1 AND c = $2 AND d = '?3' AND e = $3"
        );
        assert_eq!(placeholders("x = ? OR y = ?", &[]), "x = $1 OR y = $2");
        assert_eq!(
            placeholders("(?1 IS NULL OR a = ?1) AND b = ?2", &[true, false]),
            "(NULL IS NULL OR a = NULL) AND b = $2"
        );
    }

    #[test]
    fn passwords_are_not_in_messages() {
        assert_eq!(
            redact("postgres://bai:s3cret@db:5432/bai"),
            "postgres://bai:***@db:5432/bai"
        );
        assert_eq!(redact("postgres://bai@db/bai"), "postgres://bai@db/bai");
    }

    fn numeric_bytes(ndigits: u16, weight: i16, sign: u16, dscale: u16, digits: &[u16]) -> Vec<u8> {
        let mut b = Vec::new();
        for w in [ndigits, weight as u16, sign, dscale].iter().chain(digits) {
            b.extend_from_slice(&w.to_be_bytes());
        }
        b
    }

    #[test]
    fn numerics_decode() {
        // 123456789 = 1|2345|6789, weight 2
        let v = numeric(&numeric_bytes(3, 2, 0, 0, &[1, 2345, 6789])).unwrap();
        assert_eq!(v, Value::Int(123_456_789));
        let v = numeric(&numeric_bytes(1, 1, 0x4000, 0, &[5])).unwrap();
        assert_eq!(v, Value::Int(-50_000));
        let v = numeric(&numeric_bytes(2, 0, 0, 2, &[3, 2500])).unwrap();
        assert_eq!(v, Value::Real(3.25));
        assert_eq!(
            numeric(&numeric_bytes(0, 0, 0, 0, &[])).unwrap(),
            Value::Int(0)
        );
    }
}
