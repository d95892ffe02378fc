//! Counts the parts of a JSON request before the A2A routers parse it. Parsing builds a typed
//! part for every element of every `parts` array, at about a hundred times its size in bytes,
//! so a 1 MiB body of empty parts would cost a hundred megabytes; this pass walks the same
//! bytes without building anything and stops at the first part over the limit.

use std::fmt;
use std::sync::Arc;

use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::{Method, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use serde::de::{self, DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};

use crate::refusals::{binding_of, invalid_params, is_grpc};

/// `server.max_message_parts`, and what the middleware needs to answer in the right binding.
pub struct PartLimit {
    pub max_parts: usize,
    pub max_request_bytes: usize,
    pub base_path: String,
}

/// Refuses a JSON request with more parts than the limit, as invalid params in its binding,
/// before any router parses it. gRPC bodies are protobuf and are counted by the handler.
pub async fn refuse_part_floods(
    State(limit): State<Arc<PartLimit>>,
    request: Request,
    next: Next,
) -> Response {
    if request.method() != Method::POST || is_grpc(request.headers()) {
        return next.run(request).await;
    }
    let (head, body) = request.into_parts();
    let Ok(bytes) = axum::body::to_bytes(body, limit.max_request_bytes).await else {
        return StatusCode::PAYLOAD_TOO_LARGE.into_response();
    };
    if let Scan::TooManyParts { id } = scan(&bytes, limit.max_parts) {
        let binding = binding_of(&head.method, head.uri.path(), &limit.base_path);
        return invalid_params(binding, id, &too_many_parts(limit.max_parts));
    }
    next.run(Request::from_parts(head, Body::from(bytes))).await
}

/// The refusal's words, the same from the scan and from the handler.
pub fn too_many_parts(max_parts: usize) -> String {
    format!("a message may carry at most {max_parts} parts (server.max_message_parts)")
}

/// What the walk found out about a body.
#[derive(Debug, PartialEq)]
pub enum Scan {
    /// Within the limit: the body goes on to the router.
    Within,
    /// More parts than the limit; `id` is the JSON-RPC request id, if the body had one before
    /// the walk stopped.
    TooManyParts { id: Option<serde_json::Value> },
}

/// Walks `body` counting every element of every array under a `parts` key. A body that is not
/// JSON is `Within`: the router refuses it in its own words.
pub fn scan(body: &[u8], max_parts: usize) -> Scan {
    let mut walk = Walk {
        max_parts,
        parts: 0,
        id: None,
    };
    let mut reader = serde_json::Deserializer::from_slice(body);
    let root = Node {
        walk: &mut walk,
        depth: 0,
        under_parts: false,
    };
    match root.deserialize(&mut reader) {
        Err(_) if walk.parts > walk.max_parts => Scan::TooManyParts { id: walk.id },
        _ => Scan::Within,
    }
}

struct Walk {
    max_parts: usize,
    parts: usize,
    id: Option<serde_json::Value>,
}

/// One JSON value of the body, at `depth`; `under_parts` when it is the value of a `parts` key.
struct Node<'w> {
    walk: &'w mut Walk,
    depth: usize,
    under_parts: bool,
}

impl<'de> DeserializeSeed<'de> for Node<'_> {
    type Value = ();

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<(), D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Node<'_> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any JSON value")
    }

    fn visit_bool<E>(self, _: bool) -> Result<(), E> {
        Ok(())
    }
    fn visit_i64<E>(self, _: i64) -> Result<(), E> {
        Ok(())
    }
    fn visit_u64<E>(self, _: u64) -> Result<(), E> {
        Ok(())
    }
    fn visit_f64<E>(self, _: f64) -> Result<(), E> {
        Ok(())
    }
    fn visit_str<E>(self, _: &str) -> Result<(), E> {
        Ok(())
    }
    fn visit_unit<E>(self) -> Result<(), E> {
        Ok(())
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        let Node {
            walk,
            depth,
            under_parts,
        } = self;
        loop {
            let element = Node {
                walk: &mut *walk,
                depth: depth + 1,
                under_parts: false,
            };
            if seq.next_element_seed(element)?.is_none() {
                return Ok(());
            }
            if under_parts {
                walk.parts += 1;
                if walk.parts > walk.max_parts {
                    return Err(de::Error::custom("too many parts"));
                }
            }
        }
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        let Node { walk, depth, .. } = self;
        while let Some(key) = map.next_key::<Key>()? {
            if depth == 0 && key == Key::Id {
                map.next_value_seed(IdNode { walk: &mut *walk })?;
                continue;
            }
            map.next_value_seed(Node {
                walk: &mut *walk,
                depth: depth + 1,
                under_parts: key == Key::Parts,
            })?;
        }
        Ok(())
    }
}

/// The request's top-level `id`: kept when it is a scalar, as a JSON-RPC id is; anything else
/// is walked like the rest of the body, so no part hides in it.
struct IdNode<'w> {
    walk: &'w mut Walk,
}

impl<'de> DeserializeSeed<'de> for IdNode<'_> {
    type Value = ();

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<(), D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for IdNode<'_> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON-RPC id")
    }

    fn visit_bool<E>(self, _: bool) -> Result<(), E> {
        Ok(())
    }
    fn visit_i64<E>(self, id: i64) -> Result<(), E> {
        self.walk.id = Some(id.into());
        Ok(())
    }
    fn visit_u64<E>(self, id: u64) -> Result<(), E> {
        self.walk.id = Some(id.into());
        Ok(())
    }
    fn visit_f64<E>(self, id: f64) -> Result<(), E> {
        self.walk.id = Some(id.into());
        Ok(())
    }
    fn visit_str<E>(self, id: &str) -> Result<(), E> {
        self.walk.id = Some(id.into());
        Ok(())
    }
    fn visit_unit<E>(self) -> Result<(), E> {
        Ok(())
    }
    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<(), A::Error> {
        self.nested().visit_seq(seq)
    }
    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<(), A::Error> {
        self.nested().visit_map(map)
    }
}

impl<'w> IdNode<'w> {
    fn nested(self) -> Node<'w> {
        Node {
            walk: self.walk,
            depth: 1,
            under_parts: false,
        }
    }
}

/// The keys the walk cares about; any other is read and forgotten.
#[derive(PartialEq)]
enum Key {
    Parts,
    Id,
    Other,
}

impl<'de> de::Deserialize<'de> for Key {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Key, D::Error> {
        struct KeyVisitor;
        impl Visitor<'_> for KeyVisitor {
            type Value = Key;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a key")
            }
            fn visit_str<E>(self, key: &str) -> Result<Key, E> {
                Ok(match key {
                    "parts" => Key::Parts,
                    "id" => Key::Id,
                    _ => Key::Other,
                })
            }
        }
        deserializer.deserialize_str(KeyVisitor)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn body(parts: usize) -> Vec<u8> {
        let parts: Vec<_> = (0..parts).map(|_| json!({"text": "x"})).collect();
        serde_json::to_vec(&json!({
            "jsonrpc": "2.0", "id": 7, "method": "SendMessage",
            "params": {"message": {"messageId": "m", "role": "ROLE_USER", "parts": parts}}
        }))
        .unwrap()
    }

    #[test]
    fn parts_up_to_the_limit_pass_and_one_more_is_refused_with_the_request_id() {
        assert_eq!(scan(&body(64), 64), Scan::Within);
        assert_eq!(
            scan(&body(65), 64),
            Scan::TooManyParts { id: Some(json!(7)) }
        );
    }

    #[test]
    fn parts_are_counted_wherever_they_are_and_only_under_a_parts_key() {
        let two_messages = json!({"a": {"parts": [1, 2]}, "b": [{"parts": [3]}]});
        assert_eq!(
            scan(&serde_json::to_vec(&two_messages).unwrap(), 2),
            Scan::TooManyParts { id: None }
        );
        let not_parts = json!({"history": [1, 2, 3, 4], "partsX": [1, 2, 3], "parts": "nope"});
        assert_eq!(
            scan(&serde_json::to_vec(&not_parts).unwrap(), 2),
            Scan::Within
        );
        let nested = json!({"parts": [{"data": {"parts": [1, 2]}}]});
        assert_eq!(
            scan(&serde_json::to_vec(&nested).unwrap(), 2),
            Scan::TooManyParts { id: None }
        );
    }

    #[test]
    fn no_part_hides_in_a_top_level_id() {
        let hidden = json!({"id": {"parts": [1, 2, 3]}, "parts": [1]});
        assert_eq!(
            scan(&serde_json::to_vec(&hidden).unwrap(), 1),
            Scan::TooManyParts { id: None }
        );
    }

    #[test]
    fn an_escaped_key_is_still_the_key() {
        let escaped = br#"{"\u0070arts": [1, 2, 3]}"#;
        assert_eq!(scan(escaped, 2), Scan::TooManyParts { id: None });
    }

    #[test]
    fn what_is_not_json_is_left_to_the_router() {
        for bad in [
            &b"{"[..],
            b"",
            b"not json",
            b"[1, 2",
            br#"{"parts": [1, 2, 3"#,
        ] {
            assert_eq!(
                scan(bad, 100),
                Scan::Within,
                "{:?}",
                String::from_utf8_lossy(bad)
            );
        }
    }

    #[test]
    fn a_deeply_nested_body_is_left_to_the_router_without_overflowing() {
        let deep = format!("{}{}", "[".repeat(100_000), "]".repeat(100_000));
        assert_eq!(scan(deep.as_bytes(), 1), Scan::Within);
    }

    /// The parts in `value` as the rule says: the elements of every array under a `parts` key.
    fn parts_in(value: &serde_json::Value) -> usize {
        match value {
            serde_json::Value::Object(map) => map
                .iter()
                .map(|(key, child)| {
                    let here = match (key.as_str(), child) {
                        ("parts", serde_json::Value::Array(items)) => items.len(),
                        _ => 0,
                    };
                    here + parts_in(child)
                })
                .sum(),
            serde_json::Value::Array(items) => items.iter().map(parts_in).sum(),
            _ => 0,
        }
    }

    fn arbitrary_json() -> impl proptest::strategy::Strategy<Value = serde_json::Value> {
        use proptest::prelude::*;
        let leaf = prop_oneof![
            Just(serde_json::Value::Null),
            any::<i64>().prop_map(serde_json::Value::from),
            "\\PC{0,4}".prop_map(serde_json::Value::String),
        ];
        leaf.prop_recursive(4, 64, 6, |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..6).prop_map(serde_json::Value::Array),
                prop::collection::vec(
                    (
                        prop_oneof![
                            Just("parts".to_string()),
                            Just("id".to_string()),
                            "[a-z]{0,3}"
                        ],
                        inner
                    ),
                    0..5
                )
                .prop_map(|pairs| serde_json::Value::Object(pairs.into_iter().collect())),
            ]
        })
    }

    proptest::proptest! {
        #![proptest_config(proptest::test_runner::Config {
            cases: 2000,
            failure_persistence: None,
            ..Default::default()
        })]

        #[test]
        fn the_walk_counts_what_the_rule_counts(value in arbitrary_json(), max in 0usize..8) {
            let bytes = serde_json::to_vec(&value).unwrap();
            let over = parts_in(&value) > max;
            proptest::prop_assert_eq!(
                matches!(scan(&bytes, max), Scan::TooManyParts { .. }),
                over,
                "{} parts, limit {}", parts_in(&value), max
            );
        }
    }
}
