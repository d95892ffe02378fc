//! What a failed activity says, as the workflows read it.

use baton_core::redact::withhold_urls;
use temporalio_common::protos::temporal::api::failure::v1::failure::FailureInfo;
use temporalio_sdk::ActivityExecutionError;

/// The activity's own message when it gave one, else Temporal's, with every URL withheld: it
/// becomes a note the model reads or a status a participant reads, and an agent's or a
/// server's address is configuration neither sees.
pub fn message(error: &ActivityExecutionError) -> String {
    withhold_urls(&match error.failure() {
        Some(failure) => match &failure.cause {
            Some(cause) if !cause.message.is_empty() => cause.message.clone(),
            _ => failure.message.clone(),
        },
        None => error.to_string(),
    })
}

/// The type of the application failure that failed an activity, as the activity named it.
pub fn type_name(error: &ActivityExecutionError) -> Option<String> {
    match &error.failure()?.cause.as_deref()?.failure_info {
        Some(FailureInfo::ApplicationFailureInfo(info)) => Some(info.r#type.clone()),
        _ => None,
    }
}
