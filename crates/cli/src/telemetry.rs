//! `--otel`: the command's spans and metrics, exported over OTLP/HTTP
//! (protobuf) to `OTEL_EXPORTER_OTLP_ENDPOINT` (default
//! `http://localhost:4318`), so one call shows up in a tracing backend.
//!
//! The exporters run on OpenTelemetry's own threads and block on their
//! futures there; each HTTP request is handed to the command's tokio runtime
//! ([`OnRuntime`]), which must still be running when [`Export::finish`]
//! flushes. Plain `http:` endpoints only: a collector on this machine or
//! beside it.

use std::time::Duration;

use bytes::Bytes;
use http_body_util::{BodyExt as _, Full, Limited};
use hyper_util::client::legacy::Client;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::rt::TokioExecutor;
use opentelemetry::trace::TracerProvider as _;
use opentelemetry_http::{HttpClient, HttpError, Request, Response};
use opentelemetry_otlp::{
    MetricExporter, SpanExporter, WithExportConfig as _, WithHttpConfig as _,
};
use opentelemetry_sdk::Resource;
use opentelemetry_sdk::metrics::SdkMeterProvider;
use opentelemetry_sdk::trace::SdkTracerProvider;
use tokio::runtime::Handle;
use tracing_subscriber::layer::SubscriberExt as _;

use crate::failure::{Exit, Failure};

/// The standard variable that names the collector; set, it turns export on.
pub(crate) const ENDPOINT_VAR: &str = "OTEL_EXPORTER_OTLP_ENDPOINT";

/// How long one export may take, answer included.
const EXPORT_TIMEOUT: Duration = Duration::from_secs(10);
/// The most of a collector's answer that is read.
const MAX_ANSWER: usize = 64 << 10;

/// Whether this run exports: `--otel`, or the standard variable set.
pub(crate) fn wanted(flag: bool) -> bool {
    flag || std::env::var_os(ENDPOINT_VAR).is_some_and(|v| !v.is_empty())
}

/// The installed exporters, flushed by [`finish`](Self::finish).
pub(crate) struct Export {
    tracer: SdkTracerProvider,
    meter: SdkMeterProvider,
}

/// Installs the OTLP exporters as the process's `tracing` subscriber and
/// global meter provider. Call before the client connects: it takes its
/// instruments from the global provider then.
pub(crate) fn start(runtime: &Handle) -> Result<Export, Failure> {
    let http = OnRuntime::new(runtime.clone());
    let cannot = |e: opentelemetry_otlp::ExporterBuildError| {
        Failure::caused(Exit::Usage, "cannot set up the OTLP export (--otel)", e)
    };
    let spans = SpanExporter::builder()
        .with_http()
        .with_http_client(http.clone())
        .with_timeout(EXPORT_TIMEOUT)
        .build()
        .map_err(cannot)?;
    let metrics = MetricExporter::builder()
        .with_http()
        .with_http_client(http)
        .with_timeout(EXPORT_TIMEOUT)
        .build()
        .map_err(cannot)?;
    let resource = Resource::builder().with_service_name("mcpwire").build();
    let tracer = SdkTracerProvider::builder()
        .with_batch_exporter(spans)
        .with_resource(resource.clone())
        .build();
    let meter = SdkMeterProvider::builder()
        .with_periodic_exporter(metrics)
        .with_resource(resource)
        .build();
    opentelemetry::global::set_meter_provider(meter.clone());
    let layer = tracing_opentelemetry::layer().with_tracer(tracer.tracer("mcpwire"));
    tracing::subscriber::set_global_default(tracing_subscriber::registry().with(layer))
        .map_err(|e| Failure::caused(Exit::Usage, "cannot set up the OTLP export (--otel)", e))?;
    Ok(Export { tracer, meter })
}

impl Export {
    /// Sends what is left. Call off the runtime's threads while it still
    /// runs; a collector that does not answer costs [`EXPORT_TIMEOUT`] at
    /// most per signal, and is reported on stderr, never as the command's
    /// failure.
    pub(crate) fn finish(self) {
        for (what, outcome) in [
            ("spans", self.tracer.shutdown()),
            ("metrics", self.meter.shutdown()),
        ] {
            if let Err(e) = outcome {
                eprintln!("mcpwire: the OTLP export of {what} failed: {e}");
            }
        }
    }
}

/// An HTTP client for the exporters' threads: each request runs as a task
/// of the command's runtime, bounded in time and in what it reads.
#[derive(Debug, Clone)]
struct OnRuntime {
    runtime: Handle,
    client: Client<HttpConnector, Full<Bytes>>,
}

impl OnRuntime {
    fn new(runtime: Handle) -> Self {
        let client = Client::builder(TokioExecutor::new()).build_http();
        Self { runtime, client }
    }
}

#[async_trait::async_trait]
impl HttpClient for OnRuntime {
    async fn send_bytes(&self, request: Request<Bytes>) -> Result<Response<Bytes>, HttpError> {
        let client = self.client.clone();
        let task = self.runtime.spawn(async move {
            let (parts, body) = request.into_parts();
            let sent = client.request(Request::from_parts(parts, Full::new(body)));
            let answer = tokio::time::timeout(EXPORT_TIMEOUT, async {
                let (parts, body) = sent.await?.into_parts();
                let body = Limited::new(body, MAX_ANSWER).collect().await?.to_bytes();
                Ok::<_, HttpError>(Response::from_parts(parts, body))
            });
            answer
                .await
                .map_err(|_| HttpError::from("the collector did not answer in time"))?
        });
        task.await?
    }
}
