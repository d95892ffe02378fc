//! The A2A extensions a caller activates, and how that shapes what it reads.

use a2a::{A2AError, Message};
use a2a_server::ServiceParams;
use baton_core::extensions::{SUPPORTED_EXTENSIONS, TASK_EXTENSION};

use crate::a2a_task::Reader;

/// The extension URIs the caller activated with `A2A-Extensions`.
pub(crate) fn requested_extensions(params: &ServiceParams) -> Vec<String> {
    params
        .get("a2a-extensions")
        .into_iter()
        .flatten()
        .flat_map(|v| v.split(','))
        .map(|uri| uri.trim().to_string())
        .filter(|uri| !uri.is_empty())
        .collect()
}

/// How the caller of a read reads a task: it activates extensions with `A2A-Extensions`.
pub(crate) fn task_reader(params: &ServiceParams) -> Reader {
    Reader {
        task_extension: requested_extensions(params)
            .iter()
            .any(|uri| uri == TASK_EXTENSION),
    }
}

/// How the sender of `message` reads the task it answers with: an extension is activated by
/// `A2A-Extensions` or in the message's `extensions`.
pub(crate) fn sender_reader(params: &ServiceParams, message: &Message) -> Reader {
    Reader {
        task_extension: activates(params, message, TASK_EXTENSION),
    }
}

/// Whether the caller activated `uri`, with `A2A-Extensions` or in the message's `extensions`.
pub(crate) fn activates(params: &ServiceParams, message: &Message, uri: &str) -> bool {
    requested_extensions(params).iter().any(|u| u == uri)
        || message.extensions.iter().flatten().any(|u| u == uri)
}

/// Refuses an `A2A-Extensions` URI the card does not advertise, before anything is created.
pub(crate) fn check_extensions(params: &ServiceParams) -> Result<(), A2AError> {
    let requested = requested_extensions(params);
    let unknown: Vec<&String> = requested
        .iter()
        .filter(|uri| !SUPPORTED_EXTENSIONS.contains(&uri.as_str()))
        .collect();
    if unknown.is_empty() {
        Ok(())
    } else {
        Err(A2AError::unsupported_operation(format!(
            "unsupported A2A extension(s): {}",
            unknown
                .iter()
                .map(|u| u.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        )))
    }
}
