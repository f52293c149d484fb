//! What the client asks of a transport that, like Streamable HTTP, takes
//! header fields beside each frame and can close one request's answer
//! stream: the fields of a stateless `tools/call` for the tool's annotated
//! parameters (SEP-2243's `x-mcp-header`), and which era gives up a
//! request by closing its stream rather than by `notifications/cancelled`.

mod common;

use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};

use common::{answer_probe_as_stateless, within};
use mcpwire_client::{CancellationToken, Client, ClientConfig, ErrorKind};
use mcpwire_codec::jsonrpc::Id;
use mcpwire_test_support::{FakeServer, MemoryTransport, SentFields, memory_pair};
use mcpwire_transport::{
    Active, FrameMeta, FrameSender, RequestAbort, Transport, TransportEvent, TransportInfo,
};
use serde_json::{Value, json};

/// The header fields handed over with each frame, in order.
struct Fields(SentFields);

impl Fields {
    /// The fields given with the one frame that holds `method`.
    fn of(&self, method: &str) -> Arc<FrameMeta> {
        let quoted = format!("\"{method}\"");
        let all = self.0.lock().unwrap();
        let mut found = all
            .iter()
            .filter(|(frame, _)| String::from_utf8_lossy(frame).contains(&quoted));
        let (_, meta) = found
            .next()
            .unwrap_or_else(|| panic!("no fields for {method}"));
        assert!(found.next().is_none(), "one {method} frame");
        meta.clone()
    }
}

/// The requests whose answer stream the transport was asked to close;
/// it always can.
#[derive(Debug, Default)]
struct Aborts(Mutex<Vec<Id>>);

impl RequestAbort for Aborts {
    fn abort(&self, id: &Id) -> bool {
        self.0.lock().unwrap().push(id.clone());
        true
    }
}

/// A memory transport that takes frame metadata and closes answer
/// streams, as an HTTP one does.
struct HttpLike {
    inner: MemoryTransport,
    url: &'static str,
    aborts: Arc<Aborts>,
}

impl Transport for HttpLike {
    fn sender(&self) -> FrameSender {
        self.inner.sender().abort_sink(self.aborts.clone())
    }
    fn set_active(&mut self, active: Active) {
        self.inner.set_active(active)
    }
    fn poll_event(&mut self, cx: &mut Context<'_>) -> Poll<Option<TransportEvent>> {
        self.inner.poll_event(cx)
    }
    fn poll_close(&mut self, cx: &mut Context<'_>) -> Poll<()> {
        self.inner.poll_close(cx)
    }
    fn info(&self) -> TransportInfo {
        TransportInfo::new("streamable-http", self.url)
    }
}

/// A transport like HTTP that says it reaches `url`, its server end, and
/// what the transport is handed. Each test names its own server: the
/// client remembers which era a server's URL spoke, for the whole process.
fn http_like(url: &'static str) -> (HttpLike, FakeServer, Arc<Fields>, Arc<Aborts>) {
    let (transport, peer) = memory_pair(64);
    let fields = Arc::new(Fields(peer.sent_fields()));
    let aborts = Arc::new(Aborts::default());
    let transport = HttpLike {
        inner: transport.reading_meta(),
        url,
        aborts: aborts.clone(),
    };
    (transport, FakeServer::new(peer), fields, aborts)
}

/// A client of the stateless era over a transport like HTTP, past its
/// probe; the fields it was handed.
async fn modern() -> (Client, FakeServer, Arc<Fields>) {
    let (transport, mut server, fields, _) = http_like("http://stateless.test/mcp");
    let connect = tokio::spawn(Client::connect(transport, ClientConfig::new()));
    answer_probe_as_stateless(&mut server).await;
    let client = within(connect).await.unwrap().unwrap();
    (client, server, fields)
}

/// In the stateless era a call of a tool whose parameter is annotated with
/// `x-mcp-header` hands the transport that parameter's value as an
/// `Mcp-Param-*` field, beside the tool's name: the tools are listed first
/// (no listing was cached) to learn the annotation.
#[tokio::test]
async fn a_stateless_call_carries_its_annotated_parameter_as_a_header_field() {
    let (client, mut server, fields) = modern().await;
    let call = tokio::spawn({
        let client = client.clone();
        async move {
            client
                .call_tool("route", &json!({"region": "eu-west", "n": 2}))
                .await
        }
    });
    let list = server.expect_request("tools/list").await;
    server
        .respond(
            &list.id,
            json!({"resultType": "complete", "tools": [
                {"name": "route", "inputSchema": {"type": "object", "properties": {
                    "region": {"type": "string", "x-mcp-header": "Region"},
                    "n": {"type": "number"}}}}
            ], "ttlMs": 0, "cacheScope": "public"}),
        )
        .await;
    let req = server.expect_request("tools/call").await;
    server
        .respond(&req.id, json!({"resultType": "complete", "content": []}))
        .await;
    within(call).await.unwrap().unwrap();
    let meta = fields.of("tools/call");
    assert_eq!(meta.get("Mcp-Name"), Some("route"));
    assert_eq!(meta.get("Mcp-Param-Region"), Some("eu-west"));
    assert_eq!(meta.get("Mcp-Param-N"), None, "only annotated parameters");
    client.close().await;
}

/// The `initialize` era gives up a request with `notifications/cancelled`
/// on every transport: closing the answer stream is the stateless era's
/// way, and a server of the older era would not take it as a cancellation.
#[tokio::test]
async fn in_the_initialize_era_a_request_given_up_is_cancelled_by_notification() {
    let (transport, mut server, _, aborts) = http_like("http://initialize-era.test/mcp");
    let connect = tokio::spawn(Client::connect(transport, ClientConfig::new()));
    server.handshake().await;
    let client = within(connect).await.unwrap().unwrap();
    let token = CancellationToken::new();
    let call = tokio::spawn({
        let client = client.clone();
        let token = token.clone();
        async move {
            let given_up = client
                .request::<_, Value>("x/forever", Some(&json!({})))
                .cancel_token(token)
                .await;
            // Marks the end of what giving up sent.
            client.ping().await.expect("ping answered");
            given_up
        }
    });
    let req = server.expect_request("x/forever").await;
    token.cancel();
    let notice = server.expect_notification("notifications/cancelled").await;
    let params: Value = notice.params.unwrap().deserialize().unwrap();
    let Id::Number(n) = req.id else {
        panic!("a numeric id")
    };
    assert_eq!(params["requestId"], n);
    let ping = server.expect_request("ping").await;
    server.respond(&ping.id, json!({})).await;
    let err = within(call).await.unwrap().unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Cancelled);
    assert!(aborts.0.lock().unwrap().is_empty(), "no stream closed");
    client.close().await;
}
