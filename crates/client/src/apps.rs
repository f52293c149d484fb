//! The MCP Apps extension (SEP-1865, `io.modelcontextprotocol/ui`), typed:
//! what a server says about the views (`ui://` HTML resources) its tools
//! show their results in, and who may call each tool.
//!
//! A host that can show views declares the extension with
//! [`ClientConfig::apps`](crate::ClientConfig::apps). Then:
//! - [`Tool::ui`] reads a tool's `_meta.ui`: the view it renders in
//!   ([`ToolUi::resource_uri`]) and who may call it ([`ToolUi::visibility`]).
//!   A tool whose visibility leaves out the model is for its view alone: the
//!   host must keep it out of the model's tool list
//!   ([`Tool::visible_to_model`]; the manager's catalogue does), and may
//!   call it only for a view of the same server.
//! - [`Resource::ui`] and [`ResourceContents::ui`] read a view's `_meta.ui`:
//!   the origins it may reach ([`UiCsp`]), the browser permissions it asks
//!   for ([`UiPermissions`]), its dedicated origin and its border.
//!
//! Everything the extension adds lives in `_meta`, so the types round-trip
//! through the plain [`Tool`] and [`Resource`] without loss; these are
//! views of it. Showing a view (the sandboxed frame, its content security
//! policy, the `ui/*` messages between a view and its host) is the host's
//! work and not here.

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::Value;

pub use crate::config::{APP_HTML_MIME_TYPE, APPS_EXTENSION};
use crate::types::{Extra, Meta, Resource, ResourceContents, Tool};

/// The `_meta` key of the extension's metadata.
const UI_KEY: &str = "ui";

/// The flat `_meta` key early servers put a tool's view in. The extension
/// deprecates it for `_meta.ui.resourceUri`; it is still read.
const FLAT_RESOURCE_URI_KEY: &str = "ui/resourceUri";

/// The URI scheme of a view.
const VIEW_SCHEME: &str = "ui://";

/// Who may call a tool.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Visibility {
    /// The model (the agent): the tool is in its tool list.
    Model,
    /// The tool's own view, on the same server connection.
    App,
    /// A value this version does not know, kept as sent.
    Other(String),
}

impl Visibility {
    /// The value as the wire spells it.
    pub fn as_str(&self) -> &str {
        match self {
            Visibility::Model => "model",
            Visibility::App => "app",
            Visibility::Other(other) => other,
        }
    }
}

impl Serialize for Visibility {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.as_str())
    }
}

impl<'de> Deserialize<'de> for Visibility {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let value = String::deserialize(deserializer)?;
        Ok(match value.as_str() {
            "model" => Visibility::Model,
            "app" => Visibility::App,
            _ => Visibility::Other(value),
        })
    }
}

/// A tool's `_meta.ui`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct ToolUi {
    /// The `ui://` view the tool's results are shown in.
    #[serde(
        rename = "resourceUri",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub resource_uri: Option<String>,
    /// Who may call the tool. Absent or empty: the model and the app.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub visibility: Option<Vec<Visibility>>,
    /// Members this version does not know.
    #[serde(flatten)]
    pub extra: Extra,
}

impl ToolUi {
    /// True when the tool belongs in the model's tool list.
    pub fn visible_to_model(&self) -> bool {
        self.allows(&Visibility::Model)
    }

    /// True when the tool's view may call it.
    pub fn callable_by_app(&self) -> bool {
        self.allows(&Visibility::App)
    }

    fn allows(&self, who: &Visibility) -> bool {
        match &self.visibility {
            Some(list) if !list.is_empty() => list.contains(who),
            _ => true,
        }
    }
}

/// The origins a view may reach, from which its host builds the view's
/// content security policy. Each list absent or empty: none.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct UiCsp {
    /// Origins for fetch, XHR and WebSocket (`connect-src`).
    #[serde(
        rename = "connectDomains",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub connect_domains: Option<Vec<String>>,
    /// Origins for scripts, images, styles, fonts and media.
    #[serde(
        rename = "resourceDomains",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub resource_domains: Option<Vec<String>>,
    /// Origins for nested frames (`frame-src`).
    #[serde(
        rename = "frameDomains",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub frame_domains: Option<Vec<String>>,
    /// Allowed base URIs (`base-uri`).
    #[serde(
        rename = "baseUriDomains",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub base_uri_domains: Option<Vec<String>>,
    /// Members this version does not know.
    #[serde(flatten)]
    pub extra: Extra,
}

/// The browser permissions a view asks for. A host may refuse any; each is
/// present (an empty object) or absent.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct UiPermissions {
    /// The camera.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub camera: Option<Extra>,
    /// The microphone.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub microphone: Option<Extra>,
    /// The device's location.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub geolocation: Option<Extra>,
    /// Writing to the clipboard.
    #[serde(
        rename = "clipboardWrite",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub clipboard_write: Option<Extra>,
    /// Members this version does not know.
    #[serde(flatten)]
    pub extra: Extra,
}

/// A view's `_meta.ui` (on its listing or on its contents).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct ResourceUi {
    /// The origins it may reach.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub csp: Option<UiCsp>,
    /// The browser permissions it asks for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub permissions: Option<UiPermissions>,
    /// A dedicated origin for the view's sandbox, in a form each host
    /// defines.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub domain: Option<String>,
    /// Whether the host should draw a border and background around it;
    /// absent: the host decides.
    #[serde(
        rename = "prefersBorder",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub prefers_border: Option<bool>,
    /// Members this version does not know.
    #[serde(flatten)]
    pub extra: Extra,
}

/// `_meta.ui` read as `T`: `None` when absent, or when it is not of the
/// extension's shape (a server's mistake, read as no UI: the item then
/// behaves as a plain one, the extension's own fallback).
fn ui_of<'a, T: Deserialize<'a>>(meta: Option<&'a Meta>) -> Option<T> {
    T::deserialize(meta?.get(UI_KEY)?).ok()
}

impl Tool {
    /// The tool's MCP Apps metadata (`_meta.ui`), if it has any. A view
    /// named only under the deprecated flat key `_meta["ui/resourceUri"]`
    /// is read too. `None` when the tool has none, or when `_meta.ui` is
    /// not of the extension's shape: the tool is then a plain tool.
    pub fn ui(&self) -> Option<ToolUi> {
        let meta = self.meta.as_ref();
        let flat = meta
            .and_then(|m| m.get(FLAT_RESOURCE_URI_KEY))
            .and_then(Value::as_str);
        let structured = match meta.and_then(|m| m.get(UI_KEY)) {
            Some(_) => Some(ui_of::<ToolUi>(meta)?),
            None => None,
        };
        match (structured, flat) {
            (Some(mut ui), Some(flat)) => {
                ui.resource_uri.get_or_insert_with(|| flat.to_owned());
                Some(ui)
            }
            (Some(ui), None) => Some(ui),
            (None, Some(flat)) => Some(ToolUi {
                resource_uri: Some(flat.to_owned()),
                ..ToolUi::default()
            }),
            (None, None) => None,
        }
    }

    /// False when the tool's `_meta.ui.visibility` leaves out the model:
    /// the tool is for its view alone and must stay out of the model's
    /// tool list. True for every tool without that metadata.
    pub fn visible_to_model(&self) -> bool {
        self.ui().is_none_or(|ui| ui.visible_to_model())
    }
}

impl Resource {
    /// The view's MCP Apps metadata (`_meta.ui`), if it has any and it is of
    /// the extension's shape.
    pub fn ui(&self) -> Option<ResourceUi> {
        ui_of(self.meta.as_ref())
    }

    /// True when this is an MCP Apps view: its URI has the `ui://` scheme.
    pub fn is_app_view(&self) -> bool {
        self.uri.starts_with(VIEW_SCHEME)
    }
}

impl ResourceContents {
    /// The view's MCP Apps metadata (`_meta.ui`) as `resources/read`
    /// returned it, if it has any and it is of the extension's shape.
    pub fn ui(&self) -> Option<ResourceUi> {
        ui_of(self.meta.as_ref())
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn tool(meta: Value) -> Tool {
        serde_json::from_value(json!({
            "name": "t", "inputSchema": {"type": "object"}, "_meta": meta
        }))
        .unwrap()
    }

    #[test]
    fn a_tool_for_its_view_alone_is_kept_from_the_model() {
        let app_only = tool(json!({"ui": {"resourceUri": "ui://w/v", "visibility": ["app"]}}));
        let ui = app_only.ui().unwrap();
        assert_eq!(ui.resource_uri.as_deref(), Some("ui://w/v"));
        assert_eq!(ui.visibility, Some(vec![Visibility::App]));
        assert!(!app_only.visible_to_model());
        assert!(ui.callable_by_app());

        let model_only = tool(json!({"ui": {"visibility": ["model"]}}));
        assert!(model_only.visible_to_model());
        assert!(!model_only.ui().unwrap().callable_by_app());
    }

    #[test]
    fn absent_or_empty_visibility_means_both() {
        for meta in [
            json!({}),
            json!({"ui": {}}),
            json!({"ui": {"visibility": []}}),
        ] {
            let t = tool(meta.clone());
            assert!(t.visible_to_model(), "{meta}");
            assert!(t.ui().is_none_or(|ui| ui.callable_by_app()), "{meta}");
        }
    }

    #[test]
    fn a_malformed_ui_is_read_as_a_plain_tool() {
        for meta in [
            json!({"ui": "ui://w/v"}),
            json!({"ui": {"visibility": "app"}}),
            json!({"ui": {"visibility": [1]}}),
        ] {
            let t = tool(meta.clone());
            assert_eq!(t.ui(), None, "{meta}");
            assert!(t.visible_to_model(), "{meta}");
        }
    }

    #[test]
    fn the_deprecated_flat_key_names_the_view_when_ui_does_not() {
        let flat = tool(json!({"ui/resourceUri": "ui://old/v"}));
        assert_eq!(
            flat.ui().unwrap().resource_uri.as_deref(),
            Some("ui://old/v")
        );

        let both = tool(json!({
            "ui/resourceUri": "ui://old/v",
            "ui": {"visibility": ["app"]}
        }));
        let ui = both.ui().unwrap();
        assert_eq!(ui.resource_uri.as_deref(), Some("ui://old/v"));
        assert!(!ui.visible_to_model());

        let nested_wins = tool(json!({
            "ui/resourceUri": "ui://old/v",
            "ui": {"resourceUri": "ui://new/v"}
        }));
        assert_eq!(
            nested_wins.ui().unwrap().resource_uri.as_deref(),
            Some("ui://new/v")
        );
    }

    #[test]
    fn unknown_visibility_values_and_members_round_trip() {
        let meta = json!({"ui": {"visibility": ["app", "robot"], "future": 1}});
        let ui = tool(meta.clone()).ui().unwrap();
        assert_eq!(
            ui.visibility,
            Some(vec![Visibility::App, Visibility::Other("robot".into())])
        );
        assert_eq!(serde_json::to_value(&ui).unwrap(), meta["ui"]);
    }

    #[test]
    fn a_views_metadata_is_typed_on_its_listing_and_its_contents() {
        let ui = json!({
            "csp": {"connectDomains": ["https://api.example.com"], "frameDomains": []},
            "permissions": {"camera": {}, "clipboardWrite": {}},
            "domain": "abc.example.net",
            "prefersBorder": true
        });
        let resource: Resource = serde_json::from_value(json!({
            "uri": "ui://w/v", "name": "v", "mimeType": APP_HTML_MIME_TYPE, "_meta": {"ui": ui}
        }))
        .unwrap();
        assert!(resource.is_app_view());
        let read = resource.ui().unwrap();
        let csp = read.csp.as_ref().unwrap();
        assert_eq!(
            csp.connect_domains.as_deref(),
            Some(&["https://api.example.com".to_owned()][..])
        );
        assert_eq!(csp.frame_domains.as_deref(), Some(&[][..]));
        let permissions = read.permissions.as_ref().unwrap();
        assert!(permissions.camera.is_some() && permissions.clipboard_write.is_some());
        assert!(permissions.microphone.is_none() && permissions.geolocation.is_none());
        assert_eq!(read.domain.as_deref(), Some("abc.example.net"));
        assert_eq!(read.prefers_border, Some(true));
        assert_eq!(serde_json::to_value(&read).unwrap(), ui);

        let contents: ResourceContents = serde_json::from_value(json!({
            "uri": "ui://w/v", "text": "<!doctype html>", "_meta": {"ui": {"prefersBorder": false}}
        }))
        .unwrap();
        assert_eq!(contents.ui().unwrap().prefers_border, Some(false));

        let plain: Resource =
            serde_json::from_value(json!({"uri": "file:///a", "name": "a"})).unwrap();
        assert!(!plain.is_app_view());
        assert_eq!(plain.ui(), None);
    }
}
