//! `/healthz` (the process serves), `/readyz` (every cache has synced, so a reconcile sees the
//! whole world) and `/metrics` (Prometheus text) on `--metrics-address`.

use std::net::SocketAddr;
use std::sync::Arc;

use axum::Router;
use axum::extract::State;
use axum::http::{StatusCode, header};
use axum::response::IntoResponse;
use axum::routing::get;

use crate::operator::metrics::Metrics;
use crate::operator::synced::Synced;

#[derive(Clone)]
struct Shared {
    metrics: Arc<Metrics>,
    ready: Synced,
}

async fn readyz(State(shared): State<Shared>) -> impl IntoResponse {
    if shared.ready.is_set() {
        (StatusCode::OK, "ready")
    } else {
        (StatusCode::SERVICE_UNAVAILABLE, "caches are not synced yet")
    }
}

const OPENMETRICS: &str = "application/openmetrics-text; version=1.0.0; charset=utf-8";

async fn metrics_text(State(shared): State<Shared>) -> impl IntoResponse {
    match shared.metrics.encode() {
        Ok(text) => ([(header::CONTENT_TYPE, OPENMETRICS)], text).into_response(),
        Err(_) => (StatusCode::INTERNAL_SERVER_ERROR, "cannot encode metrics").into_response(),
    }
}

/// Binds first (so a taken port fails `run` at once), then serves in the background.
pub async fn serve(
    address: SocketAddr,
    metrics: Arc<Metrics>,
    ready: Synced,
) -> Result<tokio::task::JoinHandle<()>, std::io::Error> {
    let listener = tokio::net::TcpListener::bind(address).await?;
    let app = Router::new()
        .route("/healthz", get(|| async { "ok" }))
        .route("/readyz", get(readyz))
        .route("/metrics", get(metrics_text))
        .with_state(Shared { metrics, ready });
    Ok(tokio::spawn(async move {
        if let Err(error) = axum::serve(listener, app).await {
            tracing::error!(%error, "the health and metrics server stopped");
        }
    }))
}
