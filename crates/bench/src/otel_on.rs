//! The `mcpwire-otel` client's set-up: the same calls as `mcpwire`, with
//! what a production agent installs to observe them: a
//! `tracing-opentelemetry` layer over an SDK tracer whose batch processor
//! exports to nowhere, and an SDK meter provider (the global one, which the
//! client records into) whose periodic reader exports to nowhere. What is
//! measured is the client's instrumentation and the SDK's recording, not
//! a network exporter.

use opentelemetry::trace::TracerProvider as _;
use opentelemetry_sdk::error::OTelSdkResult;
use opentelemetry_sdk::metrics::data::ResourceMetrics;
use opentelemetry_sdk::metrics::exporter::PushMetricExporter;
use opentelemetry_sdk::metrics::{SdkMeterProvider, Temporality};
use opentelemetry_sdk::trace::{SdkTracerProvider, SpanData, SpanExporter};
use tracing_subscriber::layer::SubscriberExt as _;

/// Drops every batch it is given.
#[derive(Debug)]
struct Nowhere;

impl SpanExporter for Nowhere {
    async fn export(&self, batch: Vec<SpanData>) -> OTelSdkResult {
        drop(batch);
        Ok(())
    }
}

impl PushMetricExporter for Nowhere {
    async fn export(&self, _metrics: &ResourceMetrics) -> OTelSdkResult {
        Ok(())
    }

    fn force_flush(&self) -> OTelSdkResult {
        Ok(())
    }

    fn shutdown_with_timeout(&self, _timeout: std::time::Duration) -> OTelSdkResult {
        Ok(())
    }

    fn temporality(&self) -> Temporality {
        Temporality::Cumulative
    }
}

/// The installed providers, shut down when the run ends.
pub(crate) struct Providers {
    tracer: SdkTracerProvider,
    meter: SdkMeterProvider,
}

impl Providers {
    pub(crate) fn shutdown(self) {
        let _ = self.tracer.shutdown();
        let _ = self.meter.shutdown();
    }
}

/// Installs the layer as the process's subscriber and the meter provider
/// as the global one.
pub(crate) fn install() -> Providers {
    let tracer = SdkTracerProvider::builder()
        .with_batch_exporter(Nowhere)
        .build();
    let meter = SdkMeterProvider::builder()
        .with_periodic_exporter(Nowhere)
        .build();
    opentelemetry::global::set_meter_provider(meter.clone());
    let layer = tracing_opentelemetry::layer().with_tracer(tracer.tracer("bench"));
    // A second install in one process would fail; a run installs once.
    let _ = tracing::subscriber::set_global_default(tracing_subscriber::registry().with(layer));
    Providers { tracer, meter }
}
