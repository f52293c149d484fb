//! Frame metadata from the client (`FrameMeta`: header fields such as
//! `Mcp-Method`), kept per request id until the request is posted.
//!
//! The client hands a frame's metadata over just before the frame
//! ([`FrameMetaSink`]); the POST that carries the request takes it out again
//! when the frame is classified (see [`Metas::classify`]), so it stays with
//! the request for every retry. Only requests (frames with an id) keep
//! metadata; the table is bounded, so metadata of frames that are never
//! posted cannot pile up.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use bytes::Bytes;
use mcpwire_codec::jsonrpc::Id;
use mcpwire_transport::{FrameMeta, FrameMetaSink};

use crate::outbound::Outbound;

/// The most entries kept: far above the requests one transport has in
/// flight (64 by default) plus its queue. Past it the table starts over.
const MAX_ENTRIES: usize = 4096;

/// Metadata waiting for its request to be posted, by request id.
#[derive(Debug, Default)]
pub(crate) struct Metas(Mutex<HashMap<Id, Arc<FrameMeta>>>);

impl Metas {
    /// Classifies `frame` (see [`Outbound::classify`]) and, for a request,
    /// takes the metadata its sender attached.
    pub(crate) fn classify(&self, frame: &Bytes) -> Outbound {
        let mut kind = Outbound::classify(frame);
        if let Outbound::Request { id, meta, .. } = &mut kind {
            let mut table = self.0.lock().unwrap_or_else(|e| e.into_inner());
            if !table.is_empty() {
                *meta = table.remove(id);
            }
        }
        kind
    }

    /// Gives back the metadata [`classify`](Self::classify) took, for a
    /// frame that goes back to the queue to be classified again.
    pub(crate) fn put_back(&self, kind: &Outbound) {
        if let Outbound::Request {
            id,
            meta: Some(meta),
            ..
        } = kind
        {
            let mut table = self.0.lock().unwrap_or_else(|e| e.into_inner());
            table.insert(id.clone(), meta.clone());
        }
    }
}

impl FrameMetaSink for Metas {
    fn attach(&self, frame: &Bytes, meta: Arc<FrameMeta>) {
        let Outbound::Request { id, .. } = Outbound::classify(frame) else {
            return;
        };
        let mut table = self.0.lock().unwrap_or_else(|e| e.into_inner());
        if table.len() >= MAX_ENTRIES {
            tracing::debug!("frame metadata table full: starting over");
            table.clear();
        }
        table.insert(id, meta);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_request_takes_its_metadata_once_and_others_keep_none() {
        let metas = Metas::default();
        let req = Bytes::from_static(br#"{"jsonrpc":"2.0","id":3,"method":"tools/call"}"#);
        let note = Bytes::from_static(br#"{"jsonrpc":"2.0","method":"notifications/x"}"#);
        let meta = Arc::new(FrameMeta::new().header("Mcp-Method", "tools/call"));
        metas.attach(&note, meta.clone());
        metas.attach(&req, meta.clone());
        match metas.classify(&req) {
            Outbound::Request { meta: Some(m), .. } => assert_eq!(m, meta),
            other => panic!("{other:?}"),
        }
        assert!(matches!(
            metas.classify(&req),
            Outbound::Request { meta: None, .. }
        ));
        assert!(
            metas.0.lock().unwrap().is_empty(),
            "the notification kept nothing"
        );
    }

    #[test]
    fn metadata_put_back_is_taken_by_the_next_classify() {
        // A direct post that falls back to the queue after classifying
        // gives the metadata back, so the driver's POST still carries it.
        let metas = Metas::default();
        let req = Bytes::from_static(br#"{"jsonrpc":"2.0","id":"r","method":"tools/list"}"#);
        let meta = Arc::new(FrameMeta::new().header("Mcp-Method", "tools/list"));
        metas.attach(&req, meta.clone());
        let first = metas.classify(&req);
        metas.put_back(&first);
        match metas.classify(&req) {
            Outbound::Request { meta: Some(m), .. } => assert_eq!(m, meta),
            other => panic!("{other:?}"),
        }
        let none = metas.classify(&req);
        metas.put_back(&none);
        assert!(metas.0.lock().unwrap().is_empty(), "nothing to give back");
    }

    #[test]
    fn the_table_is_bounded() {
        let metas = Metas::default();
        let meta = Arc::new(FrameMeta::new());
        for n in 0..(MAX_ENTRIES + 10) {
            let frame = Bytes::from(format!(r#"{{"jsonrpc":"2.0","id":{n},"method":"m"}}"#));
            metas.attach(&frame, meta.clone());
        }
        assert!(metas.0.lock().unwrap().len() <= MAX_ENTRIES);
    }
}
