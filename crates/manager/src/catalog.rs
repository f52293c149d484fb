//! The aggregated catalogue: every server's tools, prompts and resources
//! under their public names, with the routing table from a public name (or
//! a resource's URI) back to its server. Built whole from the servers'
//! lists whenever one changes, and read as an immutable snapshot.

use std::collections::{HashMap, HashSet};

use mcpwire_client::types::{Prompt, Resource, ResourceTemplate, Tool};

use crate::error::Error;
use crate::event::ItemSkip;
use crate::item::ItemKind;
use crate::naming::{Collisions, NameRules, Naming};
use crate::saved::ServerCatalogue;
use crate::spec::ServerSpec;
use crate::suggest;

/// A tool of the catalogue: its public name, its server, and the tool as
/// the server listed it (its own name in `tool.name`).
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct RoutedTool {
    /// The public name calls use.
    pub name: String,
    /// The server offering it.
    pub server: String,
    /// The tool as its server lists it.
    pub tool: Tool,
}

impl RoutedTool {
    /// The tool under its public name: what to show a model.
    pub fn public_tool(&self) -> Tool {
        let mut tool = self.tool.clone();
        tool.name.clone_from(&self.name);
        tool
    }
}

/// A prompt of the catalogue, as [`RoutedTool`] is for tools.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct RoutedPrompt {
    /// The public name.
    pub name: String,
    /// The server offering it.
    pub server: String,
    /// The prompt as its server lists it.
    pub prompt: Prompt,
}

/// A resource of the catalogue: resources keep their URIs and route to the
/// server that listed them.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct RoutedResource {
    /// The server offering it.
    pub server: String,
    /// The resource.
    pub resource: Resource,
}

/// A resource template of the catalogue: a URI it matches routes to its
/// server.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct RoutedTemplate {
    /// The server offering it.
    pub server: String,
    /// The template.
    pub template: ResourceTemplate,
}

/// Where a public name goes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Route {
    /// The server's index in the fleet.
    pub(crate) server: usize,
    /// The item's own name on that server.
    pub(crate) name: String,
}

/// An item left out, for the events.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(crate) struct SkipRecord {
    pub(crate) server: String,
    pub(crate) kind: ItemKind,
    pub(crate) name: String,
    pub(crate) reason: ItemSkip,
}

/// One server's part, as the catalogue is built from it.
pub(crate) struct Part<'a> {
    pub(crate) index: usize,
    pub(crate) spec: &'a ServerSpec,
    pub(crate) lists: &'a ServerCatalogue,
    /// What its pins hold back, if pins are kept.
    pub(crate) held: Option<&'a Held>,
}

/// The items of one server that its pins hold back (see `crate::pins`).
#[derive(Debug, Default)]
pub(crate) struct Held {
    /// Every item: a definition changed and the policy quarantines.
    pub(crate) quarantined: bool,
    /// Tools and prompts whose definitions changed, under a blocking policy.
    pub(crate) tools: HashSet<String>,
    pub(crate) prompts: HashSet<String>,
    /// Tools kept although their definitions changed (a warning policy),
    /// marked so for the call hooks.
    pub(crate) changed: HashSet<String>,
}

impl Held {
    /// Why the item `name` of `kind` is held back, if it is.
    fn reason(&self, kind: ItemKind, name: &str) -> Option<ItemSkip> {
        if self.quarantined {
            return Some(ItemSkip::Quarantined);
        }
        let changed = match kind {
            ItemKind::Tool => &self.tools,
            ItemKind::Prompt => &self.prompts,
            _ => return None,
        };
        changed.contains(name).then_some(ItemSkip::Unapproved)
    }
}

/// A tool the catalogue leaves out.
#[derive(Debug)]
struct LeftOut {
    server: String,
    tool: String,
    reason: ItemSkip,
}

/// The catalogue: an immutable snapshot.
#[derive(Debug, Default)]
pub(crate) struct Catalog {
    tools: Vec<RoutedTool>,
    tool_routes: HashMap<String, Route>,
    tool_collisions: HashMap<String, Vec<String>>,
    /// Public names of the tools left out (filtered, held back by pins,
    /// or for a view alone), with their server, own name and why, so a
    /// call of one says why it goes nowhere.
    left_out: HashMap<String, LeftOut>,
    /// Public names of tools offered although their definitions changed
    /// since approval (a warning policy).
    changed: HashSet<String>,
    prompts: Vec<RoutedPrompt>,
    prompt_routes: HashMap<String, Route>,
    prompt_collisions: HashMap<String, Vec<String>>,
    resources: Vec<RoutedResource>,
    resource_routes: HashMap<String, usize>,
    resource_collisions: HashMap<String, Vec<String>>,
    /// The text before a template's first `{`, its server, the template.
    templates: Vec<(String, usize, RoutedTemplate)>,
    pub(crate) skips: Vec<SkipRecord>,
}

/// One item claiming a public name.
struct Claim<'a, T> {
    public: String,
    server: usize,
    server_name: &'a str,
    own: String,
    item: T,
}

/// What settling the claims of one kind gave: the catalogue entries, each
/// public name's route, and the contested names with their claimants.
type Settled<E> = (Vec<E>, HashMap<String, Route>, HashMap<String, Vec<String>>);

/// What resolving the claims of one kind gave.
struct Resolved<'a, T> {
    accepted: Vec<Claim<'a, T>>,
    collisions: HashMap<String, Vec<String>>,
}

impl Catalog {
    /// Builds the catalogue from every server's part, in declaration order.
    pub(crate) fn build(parts: &[Part<'_>], rules: &NameRules) -> Catalog {
        let mut cat = Catalog::default();

        let mut tool_claims = Vec::new();
        for part in parts {
            let server = part.spec.name.as_str();
            for tool in &part.lists.tools {
                let public = rules.public(server, &tool.name);
                let reason = if !part.spec.allows_tool(&tool.name) {
                    Some(ItemSkip::Filtered)
                } else if !tool.visible_to_model() {
                    Some(ItemSkip::AppOnly)
                } else {
                    part.held.and_then(|h| h.reason(ItemKind::Tool, &tool.name))
                };
                if let Some(reason) = reason {
                    cat.skip(server, ItemKind::Tool, &tool.name, reason.clone());
                    let tool = tool.name.clone();
                    let server = server.to_owned();
                    cat.left_out.insert(
                        public,
                        LeftOut {
                            server,
                            tool,
                            reason,
                        },
                    );
                    continue;
                }
                if part.held.is_some_and(|h| h.changed.contains(&tool.name)) {
                    cat.changed.insert(public.clone());
                }
                tool_claims.push(Claim {
                    public,
                    server: part.index,
                    server_name: server,
                    own: tool.name.clone(),
                    item: tool,
                });
            }
        }
        (cat.tools, cat.tool_routes, cat.tool_collisions) =
            cat.settle(tool_claims, rules, ItemKind::Tool, |name, server, tool| {
                RoutedTool {
                    name,
                    server,
                    tool: tool.clone(),
                }
            });

        let mut prompt_claims = Vec::new();
        for part in parts {
            let server = part.spec.name.as_str();
            for prompt in &part.lists.prompts {
                if let Some(reason) = part
                    .held
                    .and_then(|h| h.reason(ItemKind::Prompt, &prompt.name))
                {
                    cat.skip(server, ItemKind::Prompt, &prompt.name, reason);
                    continue;
                }
                prompt_claims.push(Claim {
                    public: rules.public(server, &prompt.name),
                    server: part.index,
                    server_name: server,
                    own: prompt.name.clone(),
                    item: prompt,
                });
            }
        }
        (cat.prompts, cat.prompt_routes, cat.prompt_collisions) = cat.settle(
            prompt_claims,
            rules,
            ItemKind::Prompt,
            |name, server, prompt| RoutedPrompt {
                name,
                server,
                prompt: prompt.clone(),
            },
        );

        // URIs are not renamed: a URI listed twice goes to the first
        // server, or nowhere under `Collisions::Error`.
        let uri_rules = NameRules {
            naming: Naming::Bare,
            sanitizer: None,
            collisions: match rules.collisions {
                Collisions::Error => Collisions::Error,
                _ => Collisions::FirstWins,
            },
        };
        // A quarantined server offers nothing, resources included.
        let open = |part: &&Part<'_>| !part.held.is_some_and(|h| h.quarantined);
        let mut resource_claims = Vec::new();
        for part in parts {
            let server = part.spec.name.as_str();
            for r in &part.lists.resources {
                if !open(&part) {
                    cat.skip(server, ItemKind::Resource, &r.uri, ItemSkip::Quarantined);
                    continue;
                }
                resource_claims.push(Claim {
                    public: r.uri.clone(),
                    server: part.index,
                    server_name: server,
                    own: r.uri.clone(),
                    item: r,
                });
            }
        }
        let resolved = cat.resolve(resource_claims, &uri_rules, ItemKind::Resource);
        cat.resource_collisions = resolved.collisions;
        for claim in resolved.accepted {
            cat.resource_routes.insert(claim.own, claim.server);
            cat.resources.push(RoutedResource {
                server: claim.server_name.to_owned(),
                resource: claim.item.clone(),
            });
        }
        for part in parts.iter().filter(open) {
            for template in &part.lists.resource_templates {
                let uri = &template.uri_template;
                let prefix = uri.split('{').next().unwrap_or(uri).to_owned();
                cat.templates.push((
                    prefix,
                    part.index,
                    RoutedTemplate {
                        server: part.spec.name.clone(),
                        template: template.clone(),
                    },
                ));
            }
        }
        cat
    }

    fn skip(&mut self, server: &str, kind: ItemKind, name: &str, reason: ItemSkip) {
        self.skips.push(SkipRecord {
            server: server.to_owned(),
            kind,
            name: name.to_owned(),
            reason,
        });
    }

    /// Applies the collision policy to the claims of one kind, then routes
    /// each accepted claim's public name to its server and own name and
    /// makes its catalogue entry with `entry(public name, server name, item)`.
    fn settle<T, E>(
        &mut self,
        claims: Vec<Claim<'_, T>>,
        rules: &NameRules,
        kind: ItemKind,
        entry: impl Fn(String, String, T) -> E,
    ) -> Settled<E> {
        let resolved = self.resolve(claims, rules, kind);
        let mut routes = HashMap::with_capacity(resolved.accepted.len());
        let entries = resolved
            .accepted
            .into_iter()
            .map(|claim| {
                routes.insert(
                    claim.public.clone(),
                    Route {
                        server: claim.server,
                        name: claim.own,
                    },
                );
                entry(claim.public, claim.server_name.to_owned(), claim.item)
            })
            .collect();
        (entries, routes, resolved.collisions)
    }

    /// Applies the collision policy to the claims of one kind, keeping
    /// their order.
    fn resolve<'a, T>(
        &mut self,
        mut claims: Vec<Claim<'a, T>>,
        rules: &NameRules,
        kind: ItemKind,
    ) -> Resolved<'a, T> {
        let count = |claims: &[Claim<'a, T>]| {
            let mut n: HashMap<String, usize> = HashMap::new();
            for c in claims {
                *n.entry(c.public.clone()).or_default() += 1;
            }
            n
        };
        if rules.collisions == Collisions::PrefixOnConflict && rules.naming == Naming::Bare {
            let n = count(&claims);
            for c in &mut claims {
                if n[&c.public] > 1 {
                    c.public = rules.prefixed(c.server_name, &c.own);
                }
            }
        }
        let n = count(&claims);
        // The first claimant of each contested name.
        let mut first: HashMap<String, &'a str> = HashMap::new();
        let mut collisions: HashMap<String, Vec<String>> = HashMap::new();
        let mut accepted = Vec::with_capacity(claims.len());
        for c in claims {
            if n[&c.public] == 1 {
                accepted.push(c);
                continue;
            }
            if rules.collisions == Collisions::Error {
                collisions
                    .entry(c.public.clone())
                    .or_default()
                    .push(c.server_name.to_owned());
                let reason = ItemSkip::Collision {
                    name: c.public.clone(),
                    kept_by: None,
                };
                self.skip(c.server_name, kind, &c.own, reason);
                continue;
            }
            match first.get(&c.public) {
                None => {
                    first.insert(c.public.clone(), c.server_name);
                    accepted.push(c);
                }
                Some(kept) => {
                    let reason = ItemSkip::Collision {
                        name: c.public.clone(),
                        kept_by: Some((*kept).to_owned()),
                    };
                    self.skip(c.server_name, kind, &c.own, reason);
                }
            }
        }
        Resolved {
            accepted,
            collisions,
        }
    }

    /// Where tool `name` goes, or why it goes nowhere.
    pub(crate) fn route_tool(&self, name: &str) -> Result<&Route, Error> {
        if let Some(route) = self.tool_routes.get(name) {
            return Ok(route);
        }
        if let Some(servers) = self.tool_collisions.get(name) {
            return Err(Error::Collision {
                name: name.to_owned(),
                servers: servers.clone(),
            });
        }
        if let Some(LeftOut {
            server,
            tool,
            reason,
        }) = self.left_out.get(name)
        {
            let (server, tool) = (server.clone(), tool.clone());
            return Err(match reason {
                ItemSkip::Filtered => Error::Filtered { server, tool },
                ItemSkip::AppOnly => Error::AppOnly { server, tool },
                _ => Error::Unapproved { server, tool },
            });
        }
        Err(Error::UnknownTool {
            name: name.to_owned(),
            suggestions: suggest::closest(name, self.tool_routes.keys().map(String::as_str)),
        })
    }

    /// True if the tool with public name `name` is offered although its
    /// definition changed since it was approved.
    pub(crate) fn changed_since_approval(&self, name: &str) -> bool {
        self.changed.contains(name)
    }

    /// Where prompt `name` goes, or why it goes nowhere.
    pub(crate) fn route_prompt(&self, name: &str) -> Result<&Route, Error> {
        if let Some(route) = self.prompt_routes.get(name) {
            return Ok(route);
        }
        if let Some(servers) = self.prompt_collisions.get(name) {
            return Err(Error::Collision {
                name: name.to_owned(),
                servers: servers.clone(),
            });
        }
        Err(Error::UnknownPrompt {
            name: name.to_owned(),
            suggestions: suggest::closest(name, self.prompt_routes.keys().map(String::as_str)),
        })
    }

    /// The server owning resource `uri`: the one that listed it, else the
    /// one whose template's fixed beginning is the longest match.
    pub(crate) fn route_resource(&self, uri: &str) -> Result<usize, Error> {
        if let Some(server) = self.resource_routes.get(uri) {
            return Ok(*server);
        }
        if let Some(servers) = self.resource_collisions.get(uri) {
            return Err(Error::Collision {
                name: uri.to_owned(),
                servers: servers.clone(),
            });
        }
        self.templates
            .iter()
            .filter(|(prefix, _, _)| !prefix.is_empty() && uri.starts_with(prefix.as_str()))
            .max_by_key(|(prefix, _, _)| prefix.len())
            .map(|(_, server, _)| *server)
            .ok_or_else(|| Error::UnknownResource {
                uri: uri.to_owned(),
            })
    }

    /// Every tool, or the first collision under `Collisions::Error`.
    pub(crate) fn tools(&self) -> Result<&[RoutedTool], Error> {
        first_collision(&self.tool_collisions)?;
        Ok(&self.tools)
    }

    /// Every prompt, or the first collision under `Collisions::Error`.
    pub(crate) fn prompts(&self) -> Result<&[RoutedPrompt], Error> {
        first_collision(&self.prompt_collisions)?;
        Ok(&self.prompts)
    }

    /// Every resource.
    pub(crate) fn resources(&self) -> &[RoutedResource] {
        &self.resources
    }

    /// Every resource template.
    pub(crate) fn templates(&self) -> impl Iterator<Item = &RoutedTemplate> {
        self.templates.iter().map(|(_, _, t)| t)
    }
}

fn first_collision(collisions: &HashMap<String, Vec<String>>) -> Result<(), Error> {
    match collisions.iter().min_by_key(|(name, _)| name.as_str()) {
        Some((name, servers)) => Err(Error::Collision {
            name: name.clone(),
            servers: servers.clone(),
        }),
        None => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use mcpwire_client::Error as ClientError;
    use serde_json::{Value, json};

    use super::*;

    fn spec(name: &str) -> ServerSpec {
        ServerSpec::new(name, || {
            Err(ClientError::connect(std::io::Error::other(
                "the catalogue never connects",
            )))
        })
    }

    fn templates(uris: &[&str]) -> ServerCatalogue {
        let list: Vec<Value> = uris
            .iter()
            .map(|u| json!({"uriTemplate": u, "name": u}))
            .collect();
        serde_json::from_value(json!({ "resourceTemplates": list })).expect("templates")
    }

    /// A catalogue of the servers named by `servers`, each offering the
    /// templates beside its name, in that order.
    fn catalog(servers: &[(&str, &[&str])]) -> Catalog {
        let lists: Vec<(&str, ServerCatalogue)> = servers
            .iter()
            .map(|(name, t)| (*name, templates(t)))
            .collect();
        build(&lists, NameRules::default())
    }

    fn build(servers: &[(&str, ServerCatalogue)], rules: NameRules) -> Catalog {
        let specs: Vec<ServerSpec> = servers.iter().map(|(name, _)| spec(name)).collect();
        let parts: Vec<Part<'_>> = specs
            .iter()
            .zip(servers)
            .enumerate()
            .map(|(index, (spec, (_, lists)))| Part {
                index,
                spec,
                lists,
                held: None,
            })
            .collect();
        Catalog::build(&parts, &rules)
    }

    fn resources(uris: &[&str]) -> ServerCatalogue {
        let list: Vec<Value> = uris.iter().map(|u| json!({"uri": u, "name": u})).collect();
        serde_json::from_value(json!({ "resources": list })).expect("resources")
    }

    /// Server `a` with tools `t1`, `t2`, prompts `p1`, `p2`, a resource
    /// and a template, its part held back by `held`; server `b` beside it.
    fn held_back(held: &Held) -> Catalog {
        let a: ServerCatalogue = serde_json::from_value(json!({
            "tools": [
                {"name": "t1", "inputSchema": {"type": "object"}},
                {"name": "t2", "inputSchema": {"type": "object"}},
            ],
            "prompts": [{"name": "p1"}, {"name": "p2"}],
            "resources": [{"uri": "docs://a", "name": "a"}],
            "resourceTemplates": [{"uriTemplate": "docs://a/{x}", "name": "x"}],
        }))
        .expect("lists");
        let b = resources(&["docs://b"]);
        let specs = [spec("a"), spec("b")];
        let parts = [
            Part {
                index: 0,
                spec: &specs[0],
                lists: &a,
                held: Some(held),
            },
            Part {
                index: 1,
                spec: &specs[1],
                lists: &b,
                held: None,
            },
        ];
        Catalog::build(&parts, &NameRules::default())
    }

    fn names(cat: &Catalog) -> (Vec<&str>, Vec<&str>, Vec<&str>, usize) {
        (
            cat.tools()
                .unwrap()
                .iter()
                .map(|t| t.name.as_str())
                .collect(),
            cat.prompts()
                .unwrap()
                .iter()
                .map(|p| p.name.as_str())
                .collect(),
            cat.resources()
                .iter()
                .map(|r| r.resource.uri.as_str())
                .collect(),
            cat.templates().count(),
        )
    }

    #[test]
    fn pins_hold_back_the_changed_items_or_the_whole_quarantined_server() {
        let blocked = Held {
            tools: HashSet::from(["t1".to_owned()]),
            prompts: HashSet::from(["p2".to_owned()]),
            changed: HashSet::from(["t1".to_owned()]),
            ..Held::default()
        };
        let cat = held_back(&blocked);
        assert_eq!(
            names(&cat),
            (
                vec!["a__t2"],
                vec!["a__p1"],
                vec!["docs://a", "docs://b"],
                1
            )
        );
        assert!(matches!(
            cat.route_tool("a__t1"),
            Err(Error::Unapproved { .. })
        ));
        let skipped: Vec<_> = cat
            .skips
            .iter()
            .map(|s| (s.kind, s.name.as_str(), s.reason.clone()))
            .collect();
        assert_eq!(
            skipped,
            [
                (ItemKind::Tool, "t1", ItemSkip::Unapproved),
                (ItemKind::Prompt, "p2", ItemSkip::Unapproved)
            ]
        );

        let quarantined = Held {
            quarantined: true,
            ..Held::default()
        };
        let cat = held_back(&quarantined);
        assert_eq!(names(&cat), (vec![], vec![], vec!["docs://b"], 0));
        assert!(cat.skips.iter().all(|s| s.reason == ItemSkip::Quarantined));
        assert_eq!(cat.skips.len(), 5, "two tools, two prompts, one resource");

        // Kept although changed (a warning policy): offered, and marked.
        let warned = Held {
            changed: HashSet::from(["t2".to_owned()]),
            ..Held::default()
        };
        let cat = held_back(&warned);
        assert_eq!(names(&cat).0, ["a__t1", "a__t2"]);
        assert!(cat.changed_since_approval("a__t2"));
        assert!(!cat.changed_since_approval("a__t1"));
    }

    /// A URI listed by two servers is never renamed: under
    /// `Collisions::Error` it routes nowhere, with a typed collision naming
    /// both; under the other policies it goes to the first server.
    #[test]
    fn a_uri_listed_twice_follows_the_collision_policy() {
        let servers = [
            ("one", resources(&["docs://readme"])),
            ("two", resources(&["docs://readme", "docs://two"])),
        ];
        let rules = |collisions, naming| NameRules {
            naming,
            sanitizer: None,
            collisions,
        };
        let cat = build(&servers, rules(Collisions::Error, Naming::Prefixed));
        match cat.route_resource("docs://readme") {
            Err(Error::Collision { name, servers }) => {
                assert_eq!(name, "docs://readme");
                assert_eq!(servers, ["one", "two"]);
            }
            other => panic!("expected a collision, got {other:?}"),
        }
        assert_eq!(cat.route_resource("docs://two").ok(), Some(1));
        for collisions in [Collisions::FirstWins, Collisions::PrefixOnConflict] {
            for naming in [Naming::Prefixed, Naming::Bare] {
                let cat = build(&servers, rules(collisions, naming));
                assert_eq!(cat.route_resource("docs://readme").ok(), Some(0));
                assert_eq!(cat.resources().len(), 2, "{collisions:?} {naming:?}");
            }
        }
    }

    /// A URI both a broad and a narrow template match goes to the server of
    /// the narrow one (the longer fixed beginning), whichever server comes
    /// first; a URI only the broad one matches goes to its server.
    #[test]
    fn a_uri_routes_to_the_template_with_the_longest_fixed_beginning() {
        let broad: &[&str] = &["files://{path}"];
        let narrow: &[&str] = &["files://docs/{name}"];
        for (servers, broad_at, narrow_at) in [
            ([("all", broad), ("docs", narrow)], 0, 1),
            ([("docs", narrow), ("all", broad)], 1, 0),
        ] {
            let cat = catalog(&servers);
            assert_eq!(
                cat.route_resource("files://docs/readme").ok(),
                Some(narrow_at)
            );
            assert_eq!(
                cat.route_resource("files://src/main.rs").ok(),
                Some(broad_at)
            );
        }
    }

    /// A template whose first character is a variable matches nothing by
    /// prefix: it must not catch every URI.
    #[test]
    fn a_template_without_a_fixed_beginning_routes_nothing() {
        let cat = catalog(&[("any", &["{uri}"])]);
        let err = cat.route_resource("files://x").unwrap_err();
        assert!(matches!(err, Error::UnknownResource { .. }), "{err:?}");
    }
}
