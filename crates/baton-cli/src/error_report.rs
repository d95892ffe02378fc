//! The one line a failed command prints. anyhow's `{:#}` joins every cause of the chain, and a
//! layer that already quotes its cause in its own message would print that cause twice.

/// `error` and its causes joined by `: `, leaving out each cause its outer message already says.
pub fn error_line(error: &anyhow::Error) -> String {
    let mut said: Vec<String> = Vec::new();
    for cause in error.chain() {
        let message = cause.to_string();
        if message.is_empty() || said.iter().any(|outer| outer.contains(&message)) {
            continue;
        }
        said.push(message);
    }
    said.join(": ")
}

/// Prints `error: <line>` to stderr in one write, so that a child process writing to the same
/// stderr (an MCP server, the embedded Temporal server) cannot split the line.
pub fn print_error_line(line: &str) {
    use std::io::Write;
    let _ = std::io::stderr().write_all(format!("error: {line}\n").as_bytes());
}

#[cfg(test)]
mod tests {
    use super::error_line;

    #[derive(Debug, thiserror::Error)]
    #[error("cannot read baton.toml: {0}")]
    struct Quoting(#[source] std::io::Error);

    #[test]
    fn a_cause_the_message_already_quotes_is_said_once() {
        let io = std::io::Error::new(std::io::ErrorKind::NotFound, "no such file");
        let error = anyhow::Error::new(Quoting(io)).context("loading the settings");
        assert_eq!(
            error_line(&error),
            "loading the settings: cannot read baton.toml: no such file"
        );
    }

    #[test]
    fn distinct_causes_are_all_said_outermost_first() {
        let error = anyhow::anyhow!("connection refused")
            .context("cannot connect to Temporal")
            .context("starting the worker");
        assert_eq!(
            error_line(&error),
            "starting the worker: cannot connect to Temporal: connection refused"
        );
    }
}
