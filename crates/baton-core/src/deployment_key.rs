//! What one deployment's secret (`BATON_DEPLOYMENT_SECRET`) gives it. Every use has its own key
//! derived with HMAC-SHA256 under a fixed label, so no use reveals another:
//! - the token each of its agents presents when it calls itself or another agent of the
//!   deployment, one token per calling agent (its agent id alone proves nothing, and one agent's
//!   token cannot act as another);
//! - sealing: secrets a caller hands over (a webhook's token and credentials) are kept in
//!   workflow history only sealed, with ChaCha20-Poly1305 under a nonce derived from the
//!   plaintext (deterministic, so sealing needs no randomness and a retry seals the same);
//! - the ids of anonymous callers' tasks, which nobody can derive without the secret.

use aws_lc_rs::aead::{Aad, CHACHA20_POLY1305, LessSafeKey, NONCE_LEN, Nonce, UnboundKey};
use aws_lc_rs::hmac;

use crate::push_token::{digests_match, hex};

const SEALED_PREFIX: &str = "sealed:";

/// The keys one deployment secret gives: the key of the self-call tokens, the sealing key and
/// the key of anonymous callers' task ids.
pub struct DeploymentKey {
    self_calls: hmac::Key,
    seal: LessSafeKey,
    nonce: hmac::Key,
    task_ids: hmac::Key,
}

/// A sealed value this deployment cannot open: sealed under another secret, or altered.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unsealable;

impl std::fmt::Display for Unsealable {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(
            "sealed under another deployment secret (or altered): every worker and gateway \
             must share BATON_DEPLOYMENT_SECRET",
        )
    }
}

impl DeploymentKey {
    /// Derives every key from the deployment secret.
    pub fn from_secret(secret: &str) -> DeploymentKey {
        let root = hmac::Key::new(hmac::HMAC_SHA256, secret.as_bytes());
        let derive = |label: &str| hmac::sign(&root, label.as_bytes());
        let seal = UnboundKey::new(&CHACHA20_POLY1305, derive("baton/seal/v1").as_ref())
            .expect("a SHA-256 output is a ChaCha20-Poly1305 key");
        DeploymentKey {
            self_calls: hmac::Key::new(hmac::HMAC_SHA256, derive("baton/self-call/v2").as_ref()),
            seal: LessSafeKey::new(seal),
            nonce: hmac::Key::new(hmac::HMAC_SHA256, derive("baton/seal-nonce/v1").as_ref()),
            task_ids: hmac::Key::new(hmac::HMAC_SHA256, derive("baton/task-id/v1").as_ref()),
        }
    }

    /// The bearer token the deployment's agent `agent_id` presents on its calls to the
    /// deployment's gateways: it proves that agent, and no other.
    pub fn self_call_token(&self, agent_id: &str) -> String {
        hex(hmac::sign(&self.self_calls, agent_id.as_bytes()).as_ref())
    }

    /// Whether `presented` is [`DeploymentKey::self_call_token`] of `agent_id`, in constant time.
    pub fn is_self_call_token(&self, agent_id: &str, presented: &str) -> bool {
        digests_match(&self.self_call_token(agent_id), presented)
    }

    /// `plain`, sealed: safe to keep in workflow history and the Web UI.
    pub fn seal(&self, plain: &str) -> String {
        let tag = hmac::sign(&self.nonce, plain.as_bytes());
        let mut nonce = [0u8; NONCE_LEN];
        nonce.copy_from_slice(&tag.as_ref()[..NONCE_LEN]);
        let mut sealed = plain.as_bytes().to_vec();
        self.seal
            .seal_in_place_append_tag(
                Nonce::assume_unique_for_key(nonce),
                Aad::empty(),
                &mut sealed,
            )
            .expect("a short secret seals");
        format!("{SEALED_PREFIX}{}{}", hex(&nonce), hex(&sealed))
    }

    /// The plaintext of a value [`DeploymentKey::seal`] made. A value that was never sealed (kept
    /// by a version of Baton before sealing) is its own plaintext.
    pub fn open(&self, value: &str) -> Result<String, Unsealable> {
        let Some(sealed) = value.strip_prefix(SEALED_PREFIX) else {
            return Ok(value.to_string());
        };
        let bytes = unhex(sealed).ok_or(Unsealable)?;
        if bytes.len() < NONCE_LEN {
            return Err(Unsealable);
        }
        let (nonce, ciphertext) = bytes.split_at(NONCE_LEN);
        let nonce = Nonce::try_assume_unique_for_key(nonce).map_err(|_| Unsealable)?;
        let mut ciphertext = ciphertext.to_vec();
        let plain = self
            .seal
            .open_in_place(nonce, Aad::empty(), &mut ciphertext)
            .map_err(|_| Unsealable)?;
        String::from_utf8(plain.to_vec()).map_err(|_| Unsealable)
    }

    /// An id for `parts` that only this deployment can compute (hex HMAC-SHA256).
    pub fn keyed_id(&self, parts: &[&str]) -> String {
        let mut context = hmac::Context::with_key(&self.task_ids);
        for part in parts {
            context.update(&(part.len() as u64).to_be_bytes());
            context.update(part.as_bytes());
        }
        hex(context.sign().as_ref())
    }
}

impl std::fmt::Debug for DeploymentKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("DeploymentKey(***)")
    }
}

fn unhex(text: &str) -> Option<Vec<u8>> {
    if !text.len().is_multiple_of(2) {
        return None;
    }
    (0..text.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(text.get(i..i + 2)?, 16).ok())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(secret: &str) -> DeploymentKey {
        DeploymentKey::from_secret(secret)
    }

    #[test]
    fn a_sealed_value_opens_with_the_same_secret_only() {
        let ours = key("a deployment secret of 32 characters!");
        let sealed = ours.seal("webhook-token-123");
        assert!(!sealed.contains("webhook-token-123"), "{sealed}");
        assert_eq!(ours.open(&sealed).unwrap(), "webhook-token-123");
        assert_eq!(
            ours.seal("webhook-token-123"),
            sealed,
            "a retry seals the same"
        );
        assert_ne!(ours.seal("webhook-token-124"), sealed);
        let theirs = key("another deployment secret, 32 chars");
        assert_eq!(theirs.open(&sealed), Err(Unsealable));
    }

    #[test]
    fn an_altered_or_malformed_seal_does_not_open() {
        let ours = key("s");
        let sealed = ours.seal("token");
        let mut altered = sealed.clone().into_bytes();
        let last = altered.len() - 1;
        altered[last] = if altered[last] == b'0' { b'1' } else { b'0' };
        for bad in [
            String::from_utf8(altered).unwrap(),
            "sealed:".to_string(),
            "sealed:zz".to_string(),
            "sealed:abc".to_string(),
            sealed[..sealed.len() - 2].to_string(),
        ] {
            assert_eq!(ours.open(&bad), Err(Unsealable), "{bad}");
        }
    }

    #[test]
    fn a_value_kept_before_sealing_is_its_own_plaintext() {
        assert_eq!(key("s").open("plain-token").unwrap(), "plain-token");
    }

    #[test]
    fn a_self_call_token_is_the_secrets_own_proves_one_agent_and_reveals_nothing() {
        let ours = key("a deployment secret");
        let front_desk = ours.self_call_token("front-desk");
        assert!(ours.is_self_call_token("front-desk", &front_desk));
        assert!(!ours.is_self_call_token("ledger", &front_desk));
        assert!(!ours.is_self_call_token("alice", &front_desk));
        assert!(
            !ours.is_self_call_token("front-desk", &key("another").self_call_token("front-desk"))
        );
        assert!(!ours.is_self_call_token("front-desk", ""));
        assert!(!front_desk.contains("secret") && !front_desk.contains("front"));
        assert_eq!(front_desk.len(), 64);
    }

    #[test]
    fn keyed_ids_depend_on_the_secret_and_on_every_part_and_its_boundaries() {
        let ours = key("s");
        assert_eq!(ours.keyed_id(&["a", "b"]), ours.keyed_id(&["a", "b"]));
        assert_ne!(ours.keyed_id(&["a", "b"]), key("t").keyed_id(&["a", "b"]));
        assert_ne!(ours.keyed_id(&["ab", ""]), ours.keyed_id(&["a", "b"]));
    }

    #[test]
    fn debug_hides_everything() {
        assert_eq!(format!("{:?}", key("s")), "DeploymentKey(***)");
    }
}
