//! How Baton's processes and workers name themselves to Temporal: the Workers tab of the Web UI
//! and `temporal task-queue describe` list these, so each must tell one pod from another.

/// The connection's identity: `temporal.identity`, or `<pid>@<host name>` as Temporal's own SDKs
/// name theirs.
pub fn process_identity(configured: Option<&str>) -> String {
    match configured {
        Some(identity) => identity.to_string(),
        None => format!("{}@{}", std::process::id(), host_name()),
    }
}

/// An agent's workers' identity: `temporal.identity`, or `<agent id>:<pid>@<host name>`, since
/// one process of `baton up` runs several agents' workers.
pub fn worker_identity(configured: Option<&str>, agent_id: &str) -> String {
    match configured {
        Some(identity) => identity.to_string(),
        None => format!("{agent_id}:{}", process_identity(None)),
    }
}

/// The kernel's host name: in Kubernetes, the pod's name.
#[allow(unsafe_code, reason = "a libc call, with its SAFETY comment")]
fn host_name() -> String {
    let mut buffer = [0u8; 256];
    // SAFETY: gethostname writes at most buffer.len() bytes into the buffer we own.
    let written = unsafe { libc::gethostname(buffer.as_mut_ptr().cast(), buffer.len()) };
    let end = buffer.iter().position(|&b| b == 0).unwrap_or(buffer.len());
    match std::str::from_utf8(&buffer[..end]) {
        Ok(name) if written == 0 && !name.is_empty() => name.to_string(),
        _ => "unknown-host".to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_configured_identity_is_kept_as_written() {
        assert_eq!(process_identity(Some("worker-a")), "worker-a");
        assert_eq!(worker_identity(Some("worker-a"), "ledger"), "worker-a");
    }

    #[test]
    fn the_default_names_the_agent_the_process_and_the_host() {
        let host = std::fs::read_to_string("/proc/sys/kernel/hostname").unwrap();
        let pid = std::process::id();
        assert_eq!(process_identity(None), format!("{pid}@{}", host.trim()));
        assert_eq!(
            worker_identity(None, "ledger"),
            format!("ledger:{pid}@{}", host.trim())
        );
    }
}
