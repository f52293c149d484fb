//! The skills extension (SEP-2640, `io.modelcontextprotocol/skills`):
//! listing skills, getting one, and loading one with every file verified.
//!
//! A skill is loaded only when the caller asks ([`Skills::load`]):
//! nothing is read on connect or on listing. Loading reads `SKILL.md` first
//! and checks it against the entry: its size, its `sha256` digest, and its
//! YAML frontmatter field by field; then each other listed file, size and
//! digest. The first mismatch stops the load with an
//! [`ErrorKind::SkillVerification`](crate::ErrorKind) error, and no further
//! file of the skill is read.

use base64::Engine as _;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};
use sha2::{Digest, Sha256};

use std::marker::PhantomData;

use crate::base::error::Error;
use crate::base::frontmatter;
use crate::base::options::{Replay, RequestOptions};
use crate::client::call::{Call, CallFuture, Operation, sealed};
use crate::client::handle::Client;
use crate::ops::{ListAll, ListPage, operation, typed};
use crate::types::{Cursor, Extra, Meta, Page, Resource};

/// The extension's identifier, as servers declare it in
/// `capabilities.extensions`.
pub const SKILLS_EXTENSION: &str = "io.modelcontextprotocol/skills";

/// The most pages [`Skills::read_whole_directory`] follows.
const MAX_PAGES: usize = 1_000;

/// The MIME type a [`Skills::read_directory`] entry has when it is itself a
/// directory (read it in turn to descend).
pub const DIRECTORY_MIME_TYPE: &str = "inode/directory";

/// One listed file of a skill.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct SkillFile {
    /// The file's resource URI.
    pub uri: String,
    /// `sha256:` and the lowercase hex digest of its bytes.
    pub digest: String,
    /// Its length in bytes.
    pub size: u64,
}

/// The files of a skill: listed (each verified on read), or `"dynamic"`
/// (the server lists none; only `SKILL.md` is verified, by frontmatter).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(untagged)]
#[non_exhaustive]
pub enum SkillResources {
    /// Every file, with its digest and size.
    Listed(Vec<SkillFile>),
    /// Not enumerated (the string `"dynamic"`, or anything else).
    Dynamic(String),
}

/// One skill as `skills/list` and `skills/get` describe it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct SkillEntry {
    /// The URI of the skill's `SKILL.md`.
    pub uri: String,
    /// `SKILL.md`'s frontmatter, as the server lists it.
    #[serde(default)]
    pub frontmatter: Map<String, Value>,
    /// The skill's files.
    pub resources: SkillResources,
    /// Metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
    /// Members this version does not know.
    #[serde(flatten)]
    pub extra: Extra,
}

/// `skills/list` result: one page.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct ListSkillsResult {
    /// The skills of this page.
    pub skills: Vec<SkillEntry>,
    /// The next page's cursor.
    #[serde(
        rename = "nextCursor",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub next_cursor: Option<String>,
    /// Members this version does not know (`ttlMs`, `cacheScope`...).
    #[serde(flatten)]
    pub extra: Extra,
}

impl crate::types::page::sealed::Sealed for ListSkillsResult {}

impl Page for ListSkillsResult {
    type Item = SkillEntry;
    const METHOD: &'static str = "skills/list";
    fn into_parts(self) -> (Vec<SkillEntry>, Option<Cursor>) {
        (self.skills, self.next_cursor)
    }
}

/// `skills/get` result.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct GetSkillResult {
    /// The skill.
    pub skill: SkillEntry,
    /// Members this version does not know.
    #[serde(flatten)]
    pub extra: Extra,
}

/// `resources/directory/read` result: one page of a directory's direct
/// children.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct ReadDirectoryResult {
    /// The children of this page: files, and directories (their MIME type
    /// is [`DIRECTORY_MIME_TYPE`]).
    pub resources: Vec<Resource>,
    /// The next page's cursor.
    #[serde(
        rename = "nextCursor",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub next_cursor: Option<String>,
    /// Metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
    /// Members this version does not know.
    #[serde(flatten)]
    pub extra: Extra,
}

/// A skill whose files were all read and verified.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct LoadedSkill {
    /// The entry it was verified against.
    pub entry: SkillEntry,
    /// `SKILL.md`'s frontmatter as read (equal to the entry's).
    pub frontmatter: Map<String, Value>,
    /// Every file read, `SKILL.md` first: (URI, bytes).
    pub files: Vec<(String, Vec<u8>)>,
}

impl LoadedSkill {
    /// `SKILL.md`'s text.
    pub fn skill_md(&self) -> &str {
        self.files
            .first()
            .and_then(|(_, b)| std::str::from_utf8(b).ok())
            .unwrap_or("")
    }
}

impl Client {
    /// The skills extension's requests: see [`Skills`].
    pub fn skills(&self) -> Skills<'_> {
        Skills { client: self }
    }
}

/// The requests of the skills extension on one client, from
/// [`Client::skills`]. Each is a [`Call`]: it takes the same options as
/// every other request, and runs when awaited.
#[derive(Debug, Clone, Copy)]
pub struct Skills<'c> {
    client: &'c Client,
}

impl<'c> Skills<'c> {
    /// One page of `skills/list`.
    pub fn list(&self, cursor: Option<String>) -> Call<'c, ListPage<ListSkillsResult>> {
        Call::new(
            self.client,
            ListPage {
                cursor,
                page: PhantomData,
            },
        )
    }

    /// Every skill, following cursors.
    pub fn list_all(&self) -> Call<'c, ListAll<ListSkillsResult>> {
        Call::new(self.client, ListAll { page: PhantomData })
    }

    /// `skills/get` of the skill whose `SKILL.md` is `uri`.
    pub fn get<'a>(&self, uri: &'a str) -> Call<'a, GetSkill<'a>>
    where
        'c: 'a,
    {
        Call::new(self.client, GetSkill { uri })
    }

    /// True when the server declares that it answers
    /// `resources/directory/read` (`directoryRead: true` in its skills
    /// extension settings). A server that does not answers the method with
    /// an error.
    pub fn reads_directories(&self) -> bool {
        self.client.server_capabilities().is_some_and(|caps| {
            caps.extra
                .get("extensions")
                .and_then(|e| e.get(SKILLS_EXTENSION))
                .and_then(|s| s.get("directoryRead"))
                == Some(&Value::Bool(true))
        })
    }

    /// One page of `resources/directory/read`: the direct children of the
    /// directory `uri` (a directory inside a skill, without a trailing
    /// slash).
    pub fn read_directory<'a>(
        &self,
        uri: &'a str,
        cursor: Option<String>,
    ) -> Call<'a, ReadDirectory<'a>>
    where
        'c: 'a,
    {
        Call::new(self.client, ReadDirectory { uri, cursor })
    }

    /// Every direct child of the directory `uri`, following cursors.
    pub fn read_whole_directory<'a>(&self, uri: &'a str) -> Call<'a, ReadWholeDirectory<'a>>
    where
        'c: 'a,
    {
        Call::new(self.client, ReadWholeDirectory { uri })
    }

    /// Reads the skill of `entry`, verifying every file as it arrives (see
    /// the module docs). Nothing after the first mismatch is read. The
    /// call's options apply to each `resources/read` it sends.
    pub fn load<'a>(&self, entry: &'a SkillEntry) -> Call<'a, LoadSkill<'a>>
    where
        'c: 'a,
    {
        Call::new(self.client, LoadSkill { entry })
    }
}

/// `skills/get`.
#[derive(Debug)]
pub struct GetSkill<'a> {
    uri: &'a str,
}

operation!(['a] GetSkill<'a> => SkillEntry, |this, client, opts| {
    let params = json!({ "uri": this.uri });
    let result: GetSkillResult =
        typed(client, "skills/get", Some(&params), &opts, Replay::Allow).await?;
    Ok(result.skill)
});

/// One page of `resources/directory/read`.
#[derive(Debug)]
pub struct ReadDirectory<'a> {
    uri: &'a str,
    cursor: Option<String>,
}

operation!(['a] ReadDirectory<'a> => ReadDirectoryResult, |this, client, opts| {
    directory_page(client, this.uri, this.cursor, &opts).await
});

/// Every page of `resources/directory/read`.
#[derive(Debug)]
pub struct ReadWholeDirectory<'a> {
    uri: &'a str,
}

operation!(['a] ReadWholeDirectory<'a> => Vec<Resource>, |this, client, opts| {
    let uri = this.uri;
    let mut all = Vec::new();
    let mut cursor = None;
    for _ in 0..MAX_PAGES {
        let page = directory_page(client, uri, cursor, &opts).await?;
        all.extend(page.resources);
        match page.next_cursor {
            Some(c) if !c.is_empty() => cursor = Some(c),
            _ => return Ok(all),
        }
    }
    Err(Error::protocol(format!(
        "resources/directory/read of {uri} returned more than {MAX_PAGES} pages"
    )))
});

/// Reading and verifying a whole skill.
#[derive(Debug)]
pub struct LoadSkill<'a> {
    entry: &'a SkillEntry,
}

operation!(['a] LoadSkill<'a> => LoadedSkill, |this, client, opts| {
    load(client, this.entry, &opts).await
});

/// One page of the directory `uri`: a read, so safe to send again.
async fn directory_page(
    client: &Client,
    uri: &str,
    cursor: Option<String>,
    opts: &RequestOptions,
) -> Result<ReadDirectoryResult, Error> {
    let params = match cursor {
        Some(c) => json!({ "uri": uri, "cursor": c }),
        None => json!({ "uri": uri }),
    };
    typed(
        client,
        "resources/directory/read",
        Some(&params),
        opts,
        Replay::Allow,
    )
    .await
}

/// The body of [`Skills::load`].
async fn load(
    client: &Client,
    entry: &SkillEntry,
    opts: &RequestOptions,
) -> Result<LoadedSkill, Error> {
    let listed: &[SkillFile] = match &entry.resources {
        SkillResources::Listed(files) => files,
        SkillResources::Dynamic(_) => &[],
    };
    let skill_md = listed.iter().find(|f| f.uri == entry.uri);
    let bytes = read_file(client, &entry.uri, opts).await?;
    if let Some(file) = skill_md {
        verify(file, &bytes)?;
    }
    let text = std::str::from_utf8(&bytes)
        .map_err(|_| Error::skill_verification(format!("{} is not UTF-8", entry.uri)))?;
    let found = frontmatter::parse(text)
        .map_err(|e| Error::skill_verification(format!("{}: {e}", entry.uri)))?;
    let differ = frontmatter::differences(&entry.frontmatter, &found);
    if !differ.is_empty() {
        return Err(Error::skill_verification(format!(
            "{}: frontmatter field(s) {} differ from the listed entry",
            entry.uri,
            differ.join(", ")
        )));
    }
    let mut files = vec![(entry.uri.clone(), bytes)];
    for file in listed.iter().filter(|f| f.uri != entry.uri) {
        let bytes = read_file(client, &file.uri, opts).await?;
        verify(file, &bytes)?;
        files.push((file.uri.clone(), bytes));
    }
    Ok(LoadedSkill {
        entry: entry.clone(),
        frontmatter: found,
        files,
    })
}

/// The bytes of the resource `uri` (its text, or its decoded blob).
async fn read_file(client: &Client, uri: &str, opts: &RequestOptions) -> Result<Vec<u8>, Error> {
    let result = client.read_resource(uri).options(opts.clone()).await?;
    let part = result.contents.into_iter().next().ok_or_else(|| {
        Error::skill_verification(format!("{uri}: the server returned no content"))
    })?;
    match (part.text, part.blob) {
        (Some(text), _) => Ok(text.into_bytes()),
        (None, Some(blob)) => base64::engine::general_purpose::STANDARD
            .decode(blob)
            .map_err(|_| Error::skill_verification(format!("{uri}: its blob is not Base64"))),
        (None, None) => Err(Error::skill_verification(format!(
            "{uri}: the server returned neither text nor blob"
        ))),
    }
}

/// Checks `bytes` against `file`'s size, then its digest.
fn verify(file: &SkillFile, bytes: &[u8]) -> Result<(), Error> {
    if bytes.len() as u64 != file.size {
        return Err(Error::skill_verification(format!(
            "{}: {} bytes read, {} listed",
            file.uri,
            bytes.len(),
            file.size
        )));
    }
    let want = file.digest.strip_prefix("sha256:").ok_or_else(|| {
        Error::skill_verification(format!(
            "{}: digest {:?} is not sha256",
            file.uri, file.digest
        ))
    })?;
    let got = hex(&Sha256::digest(bytes));
    if !got.eq_ignore_ascii_case(want) {
        return Err(Error::skill_verification(format!(
            "{}: sha256 {got} does not match the listed digest",
            file.uri
        )));
    }
    Ok(())
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_file_is_checked_by_size_then_digest() {
        let body = b"hello\n";
        let file = SkillFile {
            uri: "skill://x/SKILL.md".into(),
            digest: format!("sha256:{}", hex(&Sha256::digest(body))),
            size: body.len() as u64,
        };
        verify(&file, body).unwrap();
        let e = verify(&file, b"hello!\n").unwrap_err();
        assert_eq!(e.kind(), crate::ErrorKind::SkillVerification);
        let e = verify(&file, b"hallo\n").unwrap_err();
        assert!(e.to_string().contains("sha256"), "{e}");
        let other = SkillFile {
            digest: "md5:00".into(),
            ..file
        };
        assert!(verify(&other, body).is_err());
    }

    #[test]
    fn entries_parse_listed_and_dynamic_resources() {
        let e: SkillEntry = serde_json::from_value(json!({
            "uri": "skill://a/SKILL.md", "frontmatter": {"name": "a"},
            "resources": [{"uri": "skill://a/SKILL.md", "digest": "sha256:00", "size": 1}]
        }))
        .unwrap();
        assert!(matches!(e.resources, SkillResources::Listed(ref f) if f.len() == 1));
        let d: SkillEntry = serde_json::from_value(json!({
            "uri": "skill://b/SKILL.md", "frontmatter": {}, "resources": "dynamic"
        }))
        .unwrap();
        assert!(matches!(d.resources, SkillResources::Dynamic(_)));
    }
}
