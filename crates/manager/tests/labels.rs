//! Each server of a fleet is named in its client's spans
//! (`mcpwire.server.name`), so a trace says which server a call went to.

mod common;

use std::sync::{Arc, Mutex};

use common::*;
use mcpwire_manager::{Manager, ServerSpec};
use serde_json::json;
use tracing::field::{Field, Visit};
use tracing::span::{Attributes, Id, Record};
use tracing_subscriber::Layer;
use tracing_subscriber::layer::{Context, SubscriberExt as _};

/// Every (`otel.name`, `mcpwire.server.name`) a request span was given.
#[derive(Clone, Default)]
struct Names(Arc<Mutex<Vec<(u64, String, String)>>>);

struct Grab<'a>(&'a mut Vec<(String, String)>);

impl Visit for Grab<'_> {
    fn record_str(&mut self, field: &Field, value: &str) {
        self.0.push((field.name().to_owned(), value.to_owned()));
    }
    fn record_debug(&mut self, _: &Field, _: &dyn std::fmt::Debug) {}
}

impl<S: tracing::Subscriber> Layer<S> for Names {
    fn on_new_span(&self, attrs: &Attributes<'_>, id: &Id, _: Context<'_, S>) {
        self.keep(id, |v| attrs.record(v));
    }
    fn on_record(&self, id: &Id, values: &Record<'_>, _: Context<'_, S>) {
        self.keep(id, |v| values.record(v));
    }
}

impl Names {
    fn keep(&self, id: &Id, record: impl FnOnce(&mut Grab<'_>)) {
        let mut fields = Vec::new();
        record(&mut Grab(&mut fields));
        let mut all = self.0.lock().unwrap();
        for (name, value) in fields {
            all.push((id.into_u64(), name, value));
        }
    }

    /// The server name on the span named `otel_name`.
    fn server_of(&self, otel_name: &str) -> Option<String> {
        let all = self.0.lock().unwrap();
        let (span, ..) = all
            .iter()
            .find(|(_, n, v)| n == "otel.name" && v == otel_name)?;
        all.iter()
            .find(|(s, n, _)| s == span && n == "mcpwire.server.name")
            .map(|(.., v)| v.clone())
    }
}

#[tokio::test]
async fn each_call_names_the_server_it_went_to() {
    let names = Names::default();
    let _guard =
        tracing::subscriber::set_default(tracing_subscriber::registry().with(names.clone()));
    let (a, mut a_peers) = memory();
    let (b, mut b_peers) = memory();
    let manager = Manager::builder()
        .server(ServerSpec::with_connector("alpha", a))
        .server(ServerSpec::with_connector("beta", b))
        .build()
        .unwrap();
    let connect = tokio::spawn({
        let m = manager.clone();
        async move { m.connect_all().await }
    });
    let _a = serve(a_peers.next().await, "alpha", &["one"]);
    let _b = serve(b_peers.next().await, "beta", &["two"]);
    within(connect).await.unwrap().unwrap();

    within(manager.call_tool("alpha__one", &json!({})))
        .await
        .unwrap();
    within(manager.call_tool("beta__two", &json!({})))
        .await
        .unwrap();
    assert_eq!(names.server_of("tools/call one").as_deref(), Some("alpha"));
    assert_eq!(names.server_of("tools/call two").as_deref(), Some("beta"));
    manager.close().await;
}
