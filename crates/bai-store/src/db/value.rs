//! The values that cross the store's door in either direction, whichever engine holds them:
//! SQLite's five storage classes, which PostgreSQL's columns of this schema map onto (integers
//! and booleans as BIGINT, reals as DOUBLE PRECISION, text as TEXT, blobs as BYTEA).

use super::Error;

/// One value of a parameter or a column.
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    Null,
    Int(i64),
    Real(f64),
    Text(String),
    Blob(Vec<u8>),
}

impl Value {
    fn kind(&self) -> &'static str {
        match self {
            Value::Null => "null",
            Value::Int(_) => "integer",
            Value::Real(_) => "real",
            Value::Text(_) => "text",
            Value::Blob(_) => "blob",
        }
    }

    pub(crate) fn from_sqlite(v: rusqlite::types::ValueRef<'_>) -> Value {
        use rusqlite::types::ValueRef;
        match v {
            ValueRef::Null => Value::Null,
            ValueRef::Integer(i) => Value::Int(i),
            ValueRef::Real(f) => Value::Real(f),
            ValueRef::Text(t) => Value::Text(String::from_utf8_lossy(t).into_owned()),
            ValueRef::Blob(b) => Value::Blob(b.to_vec()),
        }
    }
}

/// A value borrowed from a parameter: SQLite binds it as it is, without a copy.
pub type ValueRef<'a> = rusqlite::types::ValueRef<'a>;

/// What can be bound as a parameter.
pub trait ToValue {
    /// The value, borrowed.
    fn value_ref(&self) -> ValueRef<'_>;

    /// The value, owned (PostgreSQL's connection thread takes its parameters by value).
    fn to_value(&self) -> Value {
        Value::from_sqlite(self.value_ref())
    }
}

impl ToValue for Value {
    fn value_ref(&self) -> ValueRef<'_> {
        match self {
            Value::Null => ValueRef::Null,
            Value::Int(i) => ValueRef::Integer(*i),
            Value::Real(f) => ValueRef::Real(*f),
            Value::Text(t) => ValueRef::Text(t.as_bytes()),
            Value::Blob(b) => ValueRef::Blob(b),
        }
    }

    fn to_value(&self) -> Value {
        self.clone()
    }
}

impl<T: ToValue + ?Sized> ToValue for &T {
    fn value_ref(&self) -> ValueRef<'_> {
        (**self).value_ref()
    }

    fn to_value(&self) -> Value {
        (**self).to_value()
    }
}

impl<T: ToValue> ToValue for Option<T> {
    fn value_ref(&self) -> ValueRef<'_> {
        match self {
            Some(v) => v.value_ref(),
            None => ValueRef::Null,
        }
    }

    fn to_value(&self) -> Value {
        match self {
            Some(v) => v.to_value(),
            None => Value::Null,
        }
    }
}

macro_rules! int_to_value {
    ($($t:ty),*) => {$(
        impl ToValue for $t {
            fn value_ref(&self) -> ValueRef<'_> {
                ValueRef::Integer(*self as i64)
            }
        }
    )*};
}
int_to_value!(i8, i16, i32, i64, u8, u16, u32, u64, usize, isize);

impl ToValue for bool {
    fn value_ref(&self) -> ValueRef<'_> {
        ValueRef::Integer(i64::from(*self))
    }
}

impl ToValue for f64 {
    fn value_ref(&self) -> ValueRef<'_> {
        ValueRef::Real(*self)
    }
}

impl ToValue for f32 {
    fn value_ref(&self) -> ValueRef<'_> {
        ValueRef::Real(f64::from(*self))
    }
}

impl ToValue for str {
    fn value_ref(&self) -> ValueRef<'_> {
        ValueRef::Text(self.as_bytes())
    }

    fn to_value(&self) -> Value {
        Value::Text(self.to_string())
    }
}

impl ToValue for String {
    fn value_ref(&self) -> ValueRef<'_> {
        ValueRef::Text(self.as_bytes())
    }

    fn to_value(&self) -> Value {
        Value::Text(self.clone())
    }
}

impl ToValue for [u8] {
    fn value_ref(&self) -> ValueRef<'_> {
        ValueRef::Blob(self)
    }
}

impl ToValue for Vec<u8> {
    fn value_ref(&self) -> ValueRef<'_> {
        ValueRef::Blob(self)
    }
}

/// What a column can be read as.
pub trait FromValue: Sized {
    fn from_value(v: Value) -> Result<Self, String>;
}

fn wrong<T>(want: &str, v: &Value) -> Result<T, String> {
    Err(format!("expected {want}, found {}", v.kind()))
}

impl FromValue for Value {
    fn from_value(v: Value) -> Result<Self, String> {
        Ok(v)
    }
}

impl<T: FromValue> FromValue for Option<T> {
    fn from_value(v: Value) -> Result<Self, String> {
        match v {
            Value::Null => Ok(None),
            v => T::from_value(v).map(Some),
        }
    }
}

impl FromValue for i64 {
    fn from_value(v: Value) -> Result<Self, String> {
        match v {
            Value::Int(i) => Ok(i),
            // PostgreSQL's NUMERIC (a SUM of integers) arrives integral.
            Value::Real(f) if f.fract() == 0.0 && f.abs() < 9.0e15 => Ok(f as i64),
            v => wrong("an integer", &v),
        }
    }
}

macro_rules! int_from_value {
    ($($t:ty),*) => {$(
        impl FromValue for $t {
            fn from_value(v: Value) -> Result<Self, String> {
                let i = i64::from_value(v)?;
                <$t>::try_from(i).map_err(|_| format!("{i} is out of range for {}", stringify!($t)))
            }
        }
    )*};
}
int_from_value!(i8, i16, i32, u8, u16, u32, u64, usize);

impl FromValue for bool {
    fn from_value(v: Value) -> Result<Self, String> {
        Ok(i64::from_value(v)? != 0)
    }
}

impl FromValue for f64 {
    fn from_value(v: Value) -> Result<Self, String> {
        match v {
            Value::Real(f) => Ok(f),
            Value::Int(i) => Ok(i as f64),
            v => wrong("a number", &v),
        }
    }
}

impl FromValue for String {
    fn from_value(v: Value) -> Result<Self, String> {
        match v {
            Value::Text(t) => Ok(t),
            v => wrong("text", &v),
        }
    }
}

impl FromValue for Vec<u8> {
    fn from_value(v: Value) -> Result<Self, String> {
        match v {
            Value::Blob(b) => Ok(b),
            Value::Text(t) => Ok(t.into_bytes()),
            v => wrong("a blob", &v),
        }
    }
}

/// Parameters of a statement: `params![..]`, an array of one type, or `[]`.
pub trait Params {
    /// Owned, for PostgreSQL.
    fn values(self) -> Vec<Value>;

    /// Bound by reference onto an SQLite statement, every one of its parameters.
    fn bind_lite(self, st: &mut rusqlite::Statement<'_>) -> rusqlite::Result<()>;
}

/// Binds `values` as parameters 1..=n, refusing a count other than the statement's.
fn bind_all<'v, I>(st: &mut rusqlite::Statement<'_>, n: usize, values: I) -> rusqlite::Result<()>
where
    I: Iterator<Item = ValueRef<'v>>,
{
    let want = st.parameter_count();
    if n != want {
        return Err(rusqlite::Error::InvalidParameterCount(n, want));
    }
    for (i, v) in values.enumerate() {
        st.raw_bind_parameter(i + 1, rusqlite::types::ToSqlOutput::Borrowed(v))?;
    }
    Ok(())
}

impl Params for &[&dyn ToValue] {
    fn values(self) -> Vec<Value> {
        self.iter().map(|v| v.to_value()).collect()
    }

    fn bind_lite(self, st: &mut rusqlite::Statement<'_>) -> rusqlite::Result<()> {
        bind_all(st, self.len(), self.iter().map(|v| v.value_ref()))
    }
}

impl Params for [&dyn ToValue; 0] {
    fn values(self) -> Vec<Value> {
        Vec::new()
    }

    fn bind_lite(self, st: &mut rusqlite::Statement<'_>) -> rusqlite::Result<()> {
        bind_all(st, 0, std::iter::empty())
    }
}

impl Params for Vec<Value> {
    fn values(self) -> Vec<Value> {
        self
    }

    fn bind_lite(self, st: &mut rusqlite::Statement<'_>) -> rusqlite::Result<()> {
        bind_all(st, self.len(), self.iter().map(|v| v.value_ref()))
    }
}

macro_rules! array_params {
    ($($n:literal)*) => {$(
        impl<T: ToValue> Params for [T; $n] {
            fn values(self) -> Vec<Value> {
                self.iter().map(|v| v.to_value()).collect()
            }

            fn bind_lite(self, st: &mut rusqlite::Statement<'_>) -> rusqlite::Result<()> {
                bind_all(st, $n, self.iter().map(|v| v.value_ref()))
            }
        }
        impl<T: ToValue> Params for &[T; $n] {
            fn values(self) -> Vec<Value> {
                self.iter().map(|v| v.to_value()).collect()
            }

            fn bind_lite(self, st: &mut rusqlite::Statement<'_>) -> rusqlite::Result<()> {
                bind_all(st, $n, self.iter().map(|v| v.value_ref()))
            }
        }
    )*};
}
array_params!(1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16);

macro_rules! tuple_params {
    ($(($n:literal; $($t:ident $i:tt),+))*) => {$(
        impl<$($t: ToValue),+> Params for ($($t,)+) {
            fn values(self) -> Vec<Value> {
                vec![$(self.$i.to_value()),+]
            }

            fn bind_lite(self, st: &mut rusqlite::Statement<'_>) -> rusqlite::Result<()> {
                bind_all(st, $n, [$(self.$i.value_ref()),+].into_iter())
            }
        }
    )*};
}
tuple_params!((1; A 0) (2; A 0, B 1) (3; A 0, B 1, C 2) (4; A 0, B 1, C 2, D 3)
    (5; A 0, B 1, C 2, D 3, E 4) (6; A 0, B 1, C 2, D 3, E 4, F 5)
    (7; A 0, B 1, C 2, D 3, E 4, F 5, G 6) (8; A 0, B 1, C 2, D 3, E 4, F 5, G 6, H 7));

/// `params![a, b, ..]`: parameters of mixed types.
#[macro_export]
#[doc(hidden)]
macro_rules! __db_params {
    () => { &[] as &[&dyn $crate::db::ToValue] };
    ($($p:expr),+ $(,)?) => { &[$(&$p as &dyn $crate::db::ToValue),+] as &[&dyn $crate::db::ToValue] };
}

/// Turns a column value into `T`, naming the column when it cannot.
pub(crate) fn column<T: FromValue>(i: usize, v: Value) -> Result<T, Error> {
    T::from_value(v).map_err(|detail| Error::Conversion { column: i, detail })
}
