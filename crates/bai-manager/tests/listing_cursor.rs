//! `compute_session_list` by keyset cursor (bai's extension): a walk that sends each page's
//! `next_cursor` back as `after` lists every session once, in the listing's order, the same
//! as the offset pages; a bad cursor, or a cursor with an offset, is a clear error.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may panic on what it did not expect

mod common;

use common::{Api, USER};
use serde_json::{Value, json};

const QUERY: &str = "query($limit: Int!, $offset: Int!, $status: String, $after: String) {
  compute_session_list(limit: $limit, offset: $offset, status: $status, after: $after) {
    items { name } total_count next_cursor } }";

async fn page(api: &Api, limit: i64, offset: i64, after: Value) -> Value {
    api.gql(
        USER,
        QUERY,
        json!({"limit": limit, "offset": offset, "status": "PENDING", "after": after}),
    )
    .await
}

fn names(answer: &Value) -> Vec<String> {
    answer["data"]["compute_session_list"]["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["name"].as_str().unwrap().to_string())
        .collect()
}

#[tokio::test]
async fn a_walk_by_cursor_lists_every_session_once_in_order() {
    let api = Api::start().await;
    for i in 0..11 {
        let n = bai_store::testing::new_session(&format!("walk-{i:02}"), USER.access_key, "u-user");
        api.m.store.insert_session(&n).unwrap();
    }
    let all = names(&page(&api, 100, 0, Value::Null).await);
    assert_eq!(all.len(), 11);

    let mut walked = Vec::new();
    let mut after = Value::Null;
    let mut pages = 0;
    loop {
        let answer = page(&api, 4, 0, after).await;
        let list = &answer["data"]["compute_session_list"];
        assert_eq!(list["total_count"], 11);
        walked.extend(names(&answer));
        pages += 1;
        assert!(pages <= 4, "the walk goes round: {walked:?}");
        match list["next_cursor"].as_str() {
            Some(next) => after = json!(next),
            None => break,
        }
    }
    assert_eq!(walked, all);
    assert_eq!(pages, 3);

    // Anything but a cursor of this listing, or a cursor with an offset: a clear error.
    for (after, offset, says) in [
        (json!("not a cursor"), 0, "is not a cursor"),
        (json!(base64_of("x\ny\nz")), 0, "is not a cursor"),
        (json!(null), 0, ""),
    ] {
        let answer = page(&api, 4, offset, after).await;
        let errors = answer["errors"].as_array().cloned().unwrap_or_default();
        if says.is_empty() {
            assert!(errors.is_empty(), "{answer}");
        } else {
            assert!(
                errors[0]["message"].as_str().unwrap().contains(says),
                "{answer}"
            );
        }
    }
    let first = page(&api, 4, 0, Value::Null).await;
    let next = first["data"]["compute_session_list"]["next_cursor"].clone();
    let both = page(&api, 4, 4, next).await;
    let msg = both["errors"][0]["message"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    assert!(msg.contains("either after"), "{both}");
}

fn base64_of(text: &str) -> String {
    use base64::Engine;
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(text)
}
