//! `server.max_concurrent_requests`: how many A2A requests the gateway works on at once. Past
//! it a request is refused at once as unavailable, with `Retry-After`, rather than queued: a
//! queue would only turn a flood into timeouts for everyone. A request holds its place until
//! its answer starts; a stream's events after that are bounded by the connection cap instead.

use std::sync::Arc;

use axum::extract::{Request, State};
use axum::http::{StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use tokio::sync::Semaphore;

/// The places for requests being worked on.
#[derive(Clone)]
pub struct WorkLimit {
    places: Arc<Semaphore>,
    max: usize,
}

impl WorkLimit {
    pub fn new(max: usize) -> Self {
        WorkLimit {
            places: Arc::new(Semaphore::new(max)),
            max,
        }
    }
}

pub async fn limit_work(State(limit): State<WorkLimit>, request: Request, next: Next) -> Response {
    let Ok(_place) = limit.places.clone().try_acquire_owned() else {
        let said = format!(
            "this agent is already working on {} requests (server.max_concurrent_requests); retry in a second",
            limit.max
        );
        return (
            StatusCode::SERVICE_UNAVAILABLE,
            [(header::RETRY_AFTER, "1")],
            said,
        )
            .into_response();
    };
    next.run(request).await
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::Router;
    use axum::body::Body;
    use axum::routing::get;
    use tokio::sync::oneshot;
    use tower::ServiceExt;

    #[tokio::test]
    async fn past_the_limit_a_request_is_refused_and_a_freed_place_is_taken_again() {
        let (entered_tx, entered_rx) = oneshot::channel::<()>();
        let (release_tx, release_rx) = oneshot::channel::<()>();
        let gates = Arc::new(std::sync::Mutex::new(Some((entered_tx, release_rx))));
        let app = Router::new()
            .route(
                "/slow",
                get(move || {
                    let gates = gates.lock().unwrap().take();
                    async move {
                        if let Some((entered, release)) = gates {
                            let _ = entered.send(());
                            let _ = release.await;
                        }
                        "done"
                    }
                }),
            )
            .layer(axum::middleware::from_fn_with_state(
                WorkLimit::new(1),
                limit_work,
            ));
        let call = |app: Router| async move {
            app.oneshot(Request::get("/slow").body(Body::empty()).unwrap())
                .await
                .unwrap()
        };
        let first = tokio::spawn(call(app.clone()));
        entered_rx.await.unwrap();
        let refused = call(app.clone()).await;
        assert_eq!(refused.status(), StatusCode::SERVICE_UNAVAILABLE);
        assert_eq!(refused.headers()[header::RETRY_AFTER], "1");
        release_tx.send(()).unwrap();
        assert_eq!(first.await.unwrap().status(), StatusCode::OK);
        assert_eq!(call(app).await.status(), StatusCode::OK);
    }
}
