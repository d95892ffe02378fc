//! The TLS keys of `[temporal]`.

use std::path::Path;

use crate::error::Errors;
use crate::temporal_shared::{Pem, PemSource, SharedProfile};
use crate::walk::{Field, Section};

/// The `tls_*` keys of `[temporal]`: what to trust and what to present beyond the system's
/// roots. The files are read when Baton connects, so a rotated certificate is picked up by the
/// next process without a config change, and a missing file is reported with its key then.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct TemporalTls {
    /// A PEM bundle of the CAs that may sign the server's certificate, instead of the system's
    /// roots (a self-hosted cluster's own CA).
    pub ca: Option<PemSource>,
    /// The PEM certificate and key of this client, for mTLS: always both or neither.
    pub client: Option<ClientCertificate>,
    /// The name the server's certificate must be valid for, when it differs from the host of
    /// `temporal.address` (connecting by IP address, or through a load balancer).
    pub server_name: Option<String>,
}

/// `tls_cert` and `tls_key`: the certificate this client presents for mTLS.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClientCertificate {
    /// The client's PEM certificate.
    pub cert: PemSource,
    /// The PEM private key of `cert`.
    pub key: PemSource,
}

pub(crate) const KEYS: [&str; 4] = ["tls_ca", "tls_cert", "tls_key", "tls_server_name"];

/// Reads the `tls_*` keys; `tls` says whether TLS is on, since each of them needs it.
pub(crate) fn read(
    section: &Section<'_>,
    tls: bool,
    base_dir: &Path,
    errors: &mut Errors,
) -> TemporalTls {
    for key in KEYS {
        let field = section.field(key);
        if field.is_set() && !tls {
            field.fail(
                errors,
                "needs temporal.tls = true (it configures the TLS connection)",
            );
        }
    }
    let path = |key: &str, errors: &mut Errors| {
        section
            .field(key)
            .optional_text(&format!("a path like \"certs/{key}.pem\""), errors)
            .map(|path| PemSource {
                setting: format!("temporal.{key}"),
                pem: Pem::File(base_dir.join(path)),
            })
    };
    let ca = path("tls_ca", errors);
    let cert = path("tls_cert", errors);
    let key = path("tls_key", errors);
    let client = match (cert, key) {
        (Some(cert), Some(key)) => Some(ClientCertificate { cert, key }),
        (Some(_), None) => {
            section.field("tls_key").fail(
                errors,
                "required when temporal.tls_cert is set (mTLS needs both)",
            );
            None
        }
        (None, Some(_)) => {
            section.field("tls_cert").fail(
                errors,
                "required when temporal.tls_key is set (mTLS needs both)",
            );
            None
        }
        (None, None) => None,
    };
    TemporalTls {
        ca,
        client,
        server_name: read_server_name(&section.field("tls_server_name"), errors),
    }
}

/// `tls` with what the shared configuration gives for what the file leaves unset. Host
/// verification stays on whatever it says.
pub(crate) fn fill_from_shared(
    tls: &mut TemporalTls,
    shared: &mut SharedProfile,
    errors: &mut Errors,
) {
    if let Some(source) = shared.disable_host_verification.take() {
        errors.push(
            source,
            "Baton always verifies the server's certificate: leave host verification on, and \
             set temporal.tls_server_name (or TEMPORAL_TLS_SERVER_NAME) to the name the \
             certificate is for",
        );
    }
    if tls.ca.is_none() {
        tls.ca = shared.ca.take();
    }
    if tls.client.is_none() {
        match (shared.client_cert.take(), shared.client_key.take()) {
            (Some(cert), Some(key)) => tls.client = Some(ClientCertificate { cert, key }),
            (Some(one), None) | (None, Some(one)) => errors.push(
                one.setting,
                "mTLS needs both a client certificate and its key (TEMPORAL_TLS_CLIENT_CERT_* \
                 and TEMPORAL_TLS_CLIENT_KEY_*, or both in the profile)",
            ),
            (None, None) => {}
        }
    }
    if tls.server_name.is_none()
        && let Some(name) = shared.server_name.take()
    {
        let value = toml::Value::String(name.value);
        tls.server_name = read_server_name(&Field::detached(name.source, &value), errors);
    }
}

fn read_server_name(field: &Field<'_>, errors: &mut Errors) -> Option<String> {
    let name = field.optional_text("a host name like \"temporal.internal\"", errors)?;
    let is_dns_name = name.len() <= 253
        && name.split('.').all(|label| {
            !label.is_empty()
                && label.len() <= 63
                && label
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b == b'-')
                && !label.starts_with('-')
                && !label.ends_with('-')
        });
    if !is_dns_name && name.parse::<std::net::IpAddr>().is_err() {
        field.fail(
            errors,
            format!(
                "must be a host name like \"temporal.internal\" or an IP address (got {name:?})"
            ),
        );
        return None;
    }
    Some(name.to_owned())
}

#[cfg(test)]
mod tests {
    use std::path::PathBuf;

    use super::ClientCertificate;
    use crate::temporal_shared::{Pem, PemSource};
    use crate::test_support::*;

    const REMOTE: &str = "[temporal]\nmode = \"remote\"\naddress = \"temporal.internal:7233\"";

    #[test]
    fn no_tls_files_by_default() {
        let tls = parse(REMOTE).unwrap().temporal.tls_files;
        assert_eq!(tls, Default::default());
    }

    #[test]
    fn paths_resolve_against_the_settings_directory() {
        let tls = parse(&format!(
            "{REMOTE}\ntls_ca = \"certs/ca.pem\"\ntls_cert = \"/abs/client.pem\"\n\
             tls_key = \"certs/client.key\"\ntls_server_name = \"temporal.internal\""
        ))
        .unwrap()
        .temporal
        .tls_files;
        let file = |setting: &str, path: &str| PemSource {
            setting: format!("temporal.{setting}"),
            pem: Pem::File(PathBuf::from(path)),
        };
        assert_eq!(tls.ca, Some(file("tls_ca", "/srv/baton/certs/ca.pem")));
        assert_eq!(
            tls.client,
            Some(ClientCertificate {
                cert: file("tls_cert", "/abs/client.pem"),
                key: file("tls_key", "/srv/baton/certs/client.key"),
            })
        );
        assert_eq!(tls.server_name.as_deref(), Some("temporal.internal"));
    }

    #[test]
    fn cert_and_key_come_together() {
        assert_only_error(
            &format!("{REMOTE}\ntls_cert = \"client.pem\""),
            "temporal.tls_key",
            "required when temporal.tls_cert is set (mTLS needs both)",
        );
        assert_only_error(
            &format!("{REMOTE}\ntls_key = \"client.key\""),
            "temporal.tls_cert",
            "required when temporal.tls_key is set (mTLS needs both)",
        );
    }

    #[test]
    fn every_tls_key_needs_tls() {
        for key in super::KEYS {
            let value = if key == "tls_server_name" {
                "\"temporal.internal\""
            } else {
                "\"x.pem\""
            };
            let mut text = format!("{REMOTE}\ntls = false\n{key} = {value}");
            if key == "tls_cert" {
                text.push_str("\ntls_key = \"k.pem\"");
            }
            if key == "tls_key" {
                text.push_str("\ntls_cert = \"c.pem\"");
            }
            let error = parse(&text).unwrap_err();
            assert!(
                error
                    .errors
                    .iter()
                    .any(|e| e.setting == format!("temporal.{key}")
                        && e.message
                            == "needs temporal.tls = true (it configures the TLS connection)"),
                "{key}: {error}"
            );
        }
        // Embedded mode has no TLS, so the keys are refused there too.
        assert_only_error(
            "[temporal]\ntls_ca = \"ca.pem\"",
            "temporal.tls_ca",
            "needs temporal.tls = true (it configures the TLS connection)",
        );
    }

    #[test]
    fn blank_paths_are_refused() {
        assert_only_error(
            &format!("{REMOTE}\ntls_ca = \" \""),
            "temporal.tls_ca",
            "must not be blank; leave it out to keep the default",
        );
    }

    #[test]
    fn server_name_forms() {
        for good in [
            "temporal",
            "temporal.internal",
            "a-b.c1.example.com",
            "10.0.0.7",
            "::1",
        ] {
            let tls = parse(&format!("{REMOTE}\ntls_server_name = \"{good}\""))
                .unwrap()
                .temporal
                .tls_files;
            assert_eq!(tls.server_name.as_deref(), Some(good));
        }
        for bad in [
            "https://temporal",
            "temporal:7233",
            "-bad.example",
            "a..b",
            "spa ce",
        ] {
            assert_only_error(
                &format!("{REMOTE}\ntls_server_name = \"{bad}\""),
                "temporal.tls_server_name",
                &format!(
                    "must be a host name like \"temporal.internal\" or an IP address (got {bad:?})"
                ),
            );
        }
    }
}
