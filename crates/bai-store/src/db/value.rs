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

/// What can be bound as a parameter.
pub trait ToValue {
    fn to_value(&self) -> Value;
}

impl ToValue for Value {
    fn to_value(&self) -> Value {
        self.clone()
    }
}

impl<T: ToValue + ?Sized> ToValue for &T {
    fn to_value(&self) -> Value {
        (**self).to_value()
    }
}

impl<T: ToValue> ToValue for Option<T> {
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
            fn to_value(&self) -> Value {
                Value::Int(*self as i64)
            }
        }
    )*};
}
int_to_value!(i8, i16, i32, i64, u8, u16, u32, u64, usize, isize);

impl ToValue for bool {
    fn to_value(&self) -> Value {
        Value::Int(i64::from(*self))
    }
}

impl ToValue for f64 {
    fn to_value(&self) -> Value {
        Value::Real(*self)
    }
}

impl ToValue for f32 {
    fn to_value(&self) -> Value {
        Value::Real(f64::from(*self))
    }
}

impl ToValue for str {
    fn to_value(&self) -> Value {
        Value::Text(self.to_string())
    }
}

impl ToValue for String {
    fn to_value(&self) -> Value {
        Value::Text(self.clone())
    }
}

impl ToValue for [u8] {
    fn to_value(&self) -> Value {
        Value::Blob(self.to_vec())
    }
}

impl ToValue for Vec<u8> {
    fn to_value(&self) -> Value {
        Value::Blob(self.clone())
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
    fn values(self) -> Vec<Value>;
}

impl Params for &[&dyn ToValue] {
    fn values(self) -> Vec<Value> {
        self.iter().map(|v| v.to_value()).collect()
    }
}

impl Params for [&dyn ToValue; 0] {
    fn values(self) -> Vec<Value> {
        Vec::new()
    }
}

impl Params for Vec<Value> {
    fn values(self) -> Vec<Value> {
        self
    }
}

macro_rules! array_params {
    ($($n:literal)*) => {$(
        impl<T: ToValue> Params for [T; $n] {
            fn values(self) -> Vec<Value> {
                self.iter().map(|v| v.to_value()).collect()
            }
        }
        impl<T: ToValue> Params for &[T; $n] {
            fn values(self) -> Vec<Value> {
                self.iter().map(|v| v.to_value()).collect()
            }
        }
    )*};
}
array_params!(1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16);

macro_rules! tuple_params {
    ($(($($t:ident $i:tt),+))*) => {$(
        impl<$($t: ToValue),+> Params for ($($t,)+) {
            fn values(self) -> Vec<Value> {
                vec![$(self.$i.to_value()),+]
            }
        }
    )*};
}
tuple_params!((A 0) (A 0, B 1) (A 0, B 1, C 2) (A 0, B 1, C 2, D 3) (A 0, B 1, C 2, D 3, E 4)
    (A 0, B 1, C 2, D 3, E 4, F 5) (A 0, B 1, C 2, D 3, E 4, F 5, G 6)
    (A 0, B 1, C 2, D 3, E 4, F 5, G 6, H 7));

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
