//! Turning a failed connection into a sentence that names the setting to change. The transport's
//! own errors nest several layers deep (tonic, hyper, rustls, io) and say nothing of Baton's
//! settings; the innermost one is the cause an operator can act on.

use std::error::Error;

use baton_config::TemporalSettings;
use temporalio_client::errors::ClientConnectError;
use temporalio_client::tonic::Status;

/// Why opening the connection failed, and what to change for it.
pub fn explain_connect_error(error: &ClientConnectError, settings: &TemporalSettings) -> String {
    match error {
        // Its message is the status's Debug text; the status itself says more, and better.
        ClientConnectError::SystemInfoCallError(status) => explain_status(status, settings),
        other => explain(other, settings),
    }
}

/// Why a call failed: the transport error beneath the status, or else the server's message.
pub fn explain_status(status: &Status, settings: &TemporalSettings) -> String {
    match status.source() {
        Some(transport) => explain(transport, settings),
        None => {
            let cause = status.message().to_string();
            let code = format!("{:?}", status.code()).to_ascii_lowercase();
            with_hint(cause.clone(), &format!("{code}: {cause}"), settings)
        }
    }
}

/// The innermost cause of `error`, then what to change for it.
fn explain(error: &(dyn Error + 'static), settings: &TemporalSettings) -> String {
    let chain = causes(error);
    let cause = chain.last().cloned().unwrap_or_default();
    with_hint(cause, &chain.join(": "), settings)
}

fn with_hint(cause: String, chain: &str, settings: &TemporalSettings) -> String {
    match hint(&chain.to_ascii_lowercase(), settings) {
        Some(hint) => format!("{cause}; {hint}"),
        None => cause,
    }
}

/// The messages of `error` and its sources, outermost first, each only once (a layer often
/// repeats the message of the one it wraps).
fn causes(error: &(dyn Error + 'static)) -> Vec<String> {
    let mut messages: Vec<String> = Vec::new();
    let mut next = Some(error);
    while let Some(current) = next {
        let message = current.to_string();
        if !message.is_empty() && !messages.iter().any(|m| m.contains(&message)) {
            messages.push(message);
        }
        next = current.source();
    }
    messages
}

fn hint(chain: &str, settings: &TemporalSettings) -> Option<String> {
    let has = |needles: &[&str]| needles.iter().any(|n| chain.contains(n));
    let address = "check temporal.address and that the server is up";
    if has(&["connection refused"]) {
        return Some(format!("nothing accepts connections there: {address}"));
    }
    if has(&[
        "failed to lookup address",
        "name or service not known",
        "dns error",
    ]) {
        return Some(format!("the host name does not resolve: {address}"));
    }
    if has(&[
        "unknownissuer",
        "unknown issuer",
        "self-signed",
        "self signed",
    ]) {
        return Some(
            "the server's certificate is signed by a CA Baton does not trust: set temporal.tls_ca \
             to that CA's PEM file"
                .into(),
        );
    }
    if has(&[
        "notvalidforname",
        "not valid for name",
        "certificate is not valid for",
    ]) {
        return Some(
            "the server's certificate is not valid for the host Baton dials: set \
             temporal.tls_server_name to a name the certificate holds"
                .into(),
        );
    }
    if has(&[
        "certificate required",
        "certificaterequired",
        "bad certificate",
        "badcertificate",
        "unknown ca",
        "unknownca",
    ]) {
        return Some(client_certificate_hint(settings).into());
    }
    if settings.tls
        && has(&[
            "invalidcontenttype",
            "corrupt message",
            "wrong version number",
            "invalid content type",
        ])
    {
        return Some(
            "the server does not speak TLS: for a plaintext server set temporal.tls = false".into(),
        );
    }
    let closed = has(&[
        "connection reset",
        "broken pipe",
        "unexpected eof",
        "connection closed",
        "closed connection",
        "close_notify",
        "frame with invalid size",
        // hyper's word for a connection the server closed before its first request went out.
        "connection was not ready",
    ]);
    if closed && !settings.tls {
        return Some(
            "the server closed the connection: if it uses TLS, set temporal.tls = true".into(),
        );
    }
    if closed {
        // Under TLS 1.3 a server checks the client's certificate after the handshake, so a
        // refused or missing one shows only as a closed connection.
        return Some(format!(
            "the server closed the connection after the TLS handshake: {}",
            client_certificate_hint(settings)
        ));
    }
    if has(&[
        "unauthenticated",
        "permission denied",
        "permissiondenied",
        "invalid api key",
        "request unauthorized",
    ]) {
        return Some(
            "the server refused Baton's credentials: check TEMPORAL_API_KEY (or temporal.tls_cert) \
             and that they grant temporal.namespace"
                .into(),
        );
    }
    if has(&["timed out", "deadline has elapsed", "timeout"]) {
        return Some(format!("no answer in time: {address}"));
    }
    None
}

fn client_certificate_hint(settings: &TemporalSettings) -> &'static str {
    if settings.tls_files.client.is_some() {
        "it may refuse Baton's client certificate: temporal.tls_cert must be signed by a CA the \
         server trusts, and temporal.tls_key must be its key"
    } else {
        "it may require a client certificate (mTLS): set temporal.tls_cert and temporal.tls_key"
    }
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use baton_config::Settings;

    use super::*;

    fn temporal(extra: &str) -> TemporalSettings {
        let text = format!("[temporal]\nmode = \"remote\"\naddress = \"t.example:7233\"\n{extra}");
        Settings::parse(&text, Path::new("/srv"), &|_| None)
            .unwrap()
            .temporal
    }

    #[test]
    fn each_transport_cause_names_what_to_change() {
        let tls = temporal("");
        let plain = temporal("tls = false");
        let mtls = temporal("tls_cert = \"c.pem\"\ntls_key = \"k.pem\"");
        for (settings, chain, expected) in [
            (
                &tls,
                "Connection refused (os error 111)",
                "temporal.address",
            ),
            (
                &tls,
                "dns error: failed to lookup address information",
                "does not resolve",
            ),
            (
                &tls,
                "invalid peer certificate: UnknownIssuer",
                "temporal.tls_ca",
            ),
            (
                &tls,
                "invalid peer certificate: certificate not valid for name \"1.2.3.4\"",
                "temporal.tls_server_name",
            ),
            (
                &tls,
                "received fatal alert: CertificateRequired",
                "set temporal.tls_cert and temporal.tls_key",
            ),
            (
                &mtls,
                "received fatal alert: BadCertificate",
                "temporal.tls_cert must be signed",
            ),
            (
                &tls,
                "received corrupt message of type InvalidContentType",
                "set temporal.tls = false",
            ),
            (
                &plain,
                "stream closed because of a broken pipe",
                "set temporal.tls = true",
            ),
            (&tls, "connection reset", "may require a client certificate"),
            (
                &tls,
                "peer closed connection without sending TLS close_notify",
                "may require a client certificate",
            ),
            (
                &mtls,
                "connection closed",
                "may refuse Baton's client certificate",
            ),
            (
                &mtls,
                "client error (SendRequest): connection was not ready",
                "may refuse Baton's client certificate",
            ),
            (
                &tls,
                "permissiondenied: Request unauthorized.",
                "TEMPORAL_API_KEY",
            ),
            (&tls, "deadline has elapsed", "no answer in time"),
        ] {
            let said = hint(&chain.to_ascii_lowercase(), settings)
                .unwrap_or_else(|| panic!("no hint for {chain:?}"));
            assert!(said.contains(expected), "{chain:?}: {said}");
        }
        assert_eq!(hint("something else entirely", &tls), None);
        // Plaintext to a plaintext server that merely failed says nothing of TLS.
        assert_eq!(hint("invalidcontenttype", &plain), None);
    }

    #[test]
    fn a_layer_repeating_its_cause_is_said_once() {
        let inner =
            std::io::Error::new(std::io::ErrorKind::ConnectionRefused, "Connection refused");
        #[derive(Debug, thiserror::Error)]
        #[error("transport error: {0}")]
        struct Outer(#[source] std::io::Error);
        let said = explain(&Outer(inner), &temporal(""));
        assert!(
            said.starts_with("transport error: Connection refused; nothing accepts connections"),
            "{said}"
        );
    }
}
