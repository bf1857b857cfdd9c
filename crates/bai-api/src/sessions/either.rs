//! How [`ListOrText`] reads (and, in `bai-core`, `NumberOrText`): by the kind of JSON value, so that a value
//! of neither kind is refused with what was expected (a derived untagged enum only says
//! "data did not match any variant").

use super::create::ListOrText;
use serde::de::{self, Deserialize, Deserializer, SeqAccess, Visitor};
use std::fmt;
use std::marker::PhantomData;

struct ListOrTextVisitor<T>(PhantomData<T>);

impl<'de, T: Deserialize<'de>> Visitor<'de> for ListOrTextVisitor<T> {
    type Value = ListOrText<T>;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a list, or one text of the values separated by commas")
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<ListOrText<T>, E> {
        Ok(ListOrText::Text(v.to_owned()))
    }

    fn visit_string<E: de::Error>(self, v: String) -> Result<ListOrText<T>, E> {
        Ok(ListOrText::Text(v))
    }

    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<ListOrText<T>, A::Error> {
        Vec::<T>::deserialize(de::value::SeqAccessDeserializer::new(seq)).map(ListOrText::List)
    }
}

impl<'de, T: Deserialize<'de>> Deserialize<'de> for ListOrText<T> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(ListOrTextVisitor(PhantomData))
    }
}

#[cfg(test)]
mod tests {
    use super::super::create::NumberOrText;
    use super::*;
    use serde_json::json;

    #[test]
    fn numbers_and_texts_read_as_given() {
        let n: NumberOrText = serde_json::from_value(json!(2)).unwrap();
        assert_eq!(n, NumberOrText::Number(2.into()));
        let f: NumberOrText = serde_json::from_value(json!(0.5)).unwrap();
        assert_eq!(f.to_json(), json!(0.5));
        let t: NumberOrText = serde_json::from_value(json!("4g")).unwrap();
        assert_eq!(t, NumberOrText::Text("4g".into()));
        assert_eq!(t.to_string(), "4g");
    }

    #[test]
    fn neither_a_number_nor_a_text_says_what_was_expected() {
        for v in [json!(true), json!(null), json!({"a": 1}), json!([1])] {
            let e = serde_json::from_value::<NumberOrText>(v.clone()).unwrap_err();
            assert!(
                e.to_string().contains("expected a number, or a text"),
                "{v}: {e}"
            );
        }
    }

    #[test]
    fn a_list_or_its_text_reads_and_other_values_are_named() {
        let l: ListOrText<NumberOrText> = serde_json::from_value(json!([8080, "8081"])).unwrap();
        assert_eq!(
            l,
            ListOrText::List(vec![
                NumberOrText::Number(8080.into()),
                NumberOrText::Text("8081".into())
            ])
        );
        let t: ListOrText<String> = serde_json::from_value(json!("a,b")).unwrap();
        assert_eq!(t, ListOrText::Text("a,b".into()));
        let e = serde_json::from_value::<ListOrText<String>>(json!({"a": 1})).unwrap_err();
        assert!(
            e.to_string().contains("expected a list, or one text"),
            "{e}"
        );
        let e = serde_json::from_value::<ListOrText<String>>(json!(["a", 2])).unwrap_err();
        assert!(e.to_string().contains("expected a string"), "{e}");
    }
}
