//! The first-parent history of the store with the blobs each commit changed.
//!
//! This is what `check` and `log` replay, so it has to keep pace with `git log -p` on a store of
//! tens of thousands of commits. Two things make it cheap: only subtrees under the requested
//! prefixes whose ids differ are opened (a store's commit touches two or three files among
//! thousands), and the trees read for a commit's parent are kept for the next step of the walk,
//! where that parent is the new side, so each tree is read from the pack about once.

use std::collections::HashMap;
use std::rc::Rc;

use gix::bstr::{BString, ByteSlice};
use gix::objs::tree::EntryMode;
use gix::objs::{CommitRef, Find};
use gix::odb::Header;
use gix::ObjectId;

use super::GitError;

/// Who made a commit.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Person {
    pub name: String,
    pub email: String,
}

/// One file a commit changed: `old` is `None` when it was added, `new` is `None` when deleted.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PathChange {
    pub path: String,
    pub old: Option<ObjectId>,
    pub new: Option<ObjectId>,
}

/// One commit of the first-parent history with the files it changed against its first parent.
#[derive(Debug, Clone)]
pub struct CommitChanges {
    pub id: ObjectId,
    /// The first parent; `None` for a root commit.
    pub parent: Option<ObjectId>,
    pub author: Person,
    /// The author time, in the author's offset.
    pub time: chrono::DateTime<chrono::FixedOffset>,
    /// The first line of the message.
    pub summary: String,
    /// Changed blobs under the requested prefixes, in git's tree order.
    pub changes: Vec<PathChange>,
}

/// The order in which pass 2 diffs the commits; only speed depends on it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Order {
    Auto,
    #[cfg(test)]
    NewestFirst,
    #[cfg(test)]
    OldestFirst,
}

pub(super) fn walk(
    repo: &gix::Repository,
    head: ObjectId,
    since: Option<ObjectId>,
    prefixes: &[&str],
) -> Result<Vec<CommitChanges>, GitError> {
    walk_in(repo, head, since, prefixes, Order::Auto)
}

fn walk_in(
    repo: &gix::Repository,
    head: ObjectId,
    since: Option<ObjectId>,
    prefixes: &[&str],
    order: Order,
) -> Result<Vec<CommitChanges>, GitError> {
    let mut differ = Differ {
        repo,
        hash: repo.object_hash(),
        prefixes,
        current: HashMap::new(),
        previous: HashMap::new(),
        buf: Vec::new(),
    };

    // Pass 1: the first-parent chain, newest first, with each commit's root tree.
    let mut chain: Vec<(CommitChanges, ObjectId)> = Vec::new();
    let mut data = Vec::new();
    let mut next = Some(head);
    // The tree of the commit just before the oldest one listed (`since`), if any.
    let mut base_tree = None;
    while let Some(id) = next {
        differ.read_commit(id, &mut data)?;
        let commit = CommitRef::from_bytes(&data, differ.hash)
            .map_err(GitError::git(format!("could not decode commit {id}")))?;
        if Some(id) == since {
            base_tree = Some(commit.tree());
            break;
        }
        let author = commit
            .author()
            .map_err(GitError::git(format!("bad author in commit {id}")))?;
        let time = author
            .time()
            .map_err(GitError::git(format!("bad author time in commit {id}")))?;
        let time = to_chrono(time).ok_or_else(|| GitError::Git {
            context: format!("author time out of range in commit {id}"),
            source: gix::Error::from_error(std::io::Error::other("time out of range")),
        })?;
        let parent = commit.parents().next();
        let entry = CommitChanges {
            id,
            parent,
            author: Person {
                name: author.name.to_str_lossy().into_owned(),
                email: author.email.to_str_lossy().into_owned(),
            },
            time,
            summary: commit.message_summary().to_str_lossy().into_owned(),
            changes: Vec::new(),
        };
        chain.push((entry, commit.tree()));
        next = parent;
    }
    if let Some(since) = since {
        if base_tree.is_none() {
            return Err(GitError::SinceNotInHistory { since });
        }
    }

    // Pass 2: each commit's changes against its parent. The order follows the pack's delta
    // chains, so that the tree read in one step is the delta base of the tree read in the
    // next and sits in the pack cache (see `oldest_first`).
    let trees: Vec<ObjectId> = chain.iter().map(|(_, t)| *t).collect();
    let parent_tree = |i: usize| -> Option<ObjectId> { trees.get(i + 1).copied().or(base_tree) };
    let oldest_first = match order {
        Order::Auto => differ.oldest_first(&trees),
        #[cfg(test)]
        Order::NewestFirst => false,
        #[cfg(test)]
        Order::OldestFirst => true,
    };
    let order: Vec<usize> = if oldest_first {
        (0..chain.len()).rev().collect()
    } else {
        (0..chain.len()).collect()
    };
    let mut path = BString::default();
    for i in order {
        let mut changes = Vec::new();
        differ.diff(parent_tree(i), Some(trees[i]), &mut path, &mut changes)?;
        differ.next_generation();
        chain[i].0.changes = changes;
    }
    Ok(chain.into_iter().rev().map(|(c, _)| c).collect())
}

fn missing(id: ObjectId, kind: &str) -> GitError {
    GitError::Git {
        context: format!("{kind} {id} is missing"),
        source: gix::Error::from_error(std::io::Error::new(
            std::io::ErrorKind::NotFound,
            format!("object {id} not found"),
        )),
    }
}

fn to_chrono(time: gix::date::Time) -> Option<chrono::DateTime<chrono::FixedOffset>> {
    let offset = chrono::FixedOffset::east_opt(time.offset)?;
    chrono::DateTime::from_timestamp(time.seconds, 0).map(|t| t.with_timezone(&offset))
}

struct Differ<'a> {
    repo: &'a gix::Repository,
    hash: gix::hash::Kind,
    prefixes: &'a [&'a str],
    /// Trees read for the commit being diffed, and for the one before it in the walk.
    current: HashMap<ObjectId, Rc<[u8]>>,
    previous: HashMap<ObjectId, Rc<[u8]>>,
    buf: Vec<u8>,
}

/// A tree entry copied out of its tree's bytes, so recursion may read other trees.
struct Entry {
    mode: EntryMode,
    id: ObjectId,
}

impl Differ<'_> {
    fn next_generation(&mut self) {
        self.previous = std::mem::take(&mut self.current);
    }

    /// Whether to diff from the oldest commit forward rather than from HEAD back. gix's pack
    /// cache keeps the objects it was asked for, not the delta bases in between, so a walk is
    /// cheap only in the direction the deltas run: git's own packing (a clone, `git gc`) stores
    /// the newest version whole and older ones as deltas of newer ones, `git fast-import` the
    /// other way round. The delta depths of the root trees at either end tell which it is.
    fn oldest_first(&self, trees: &[ObjectId]) -> bool {
        const SAMPLE: usize = 16;
        if trees.len() < 2 * SAMPLE {
            return false;
        }
        let depth = |ids: &[ObjectId]| -> u64 {
            ids.iter()
                .map(|id| {
                    self.repo
                        .objects
                        .try_header(id)
                        .ok()
                        .flatten()
                        .and_then(|h| h.num_deltas())
                        .map_or(0, u64::from)
                })
                .sum()
        };
        depth(&trees[..SAMPLE]) > depth(&trees[trees.len() - SAMPLE..])
    }

    /// The bytes of object `id`, which must be of `kind` (`what` in errors).
    fn find(&mut self, id: ObjectId, kind: gix::objs::Kind, what: &str) -> Result<&[u8], GitError> {
        let data = self
            .repo
            .objects
            .try_find(&id, &mut self.buf)
            .map_err(GitError::git(format!("could not read {what} {id}")))?
            .filter(|d| d.kind == kind)
            .ok_or_else(|| missing(id, what))?;
        Ok(data.data)
    }

    /// Read commit `id` into `out`.
    fn read_commit(&mut self, id: ObjectId, out: &mut Vec<u8>) -> Result<(), GitError> {
        let data = self.find(id, gix::objs::Kind::Commit, "commit")?;
        out.clear();
        out.extend_from_slice(data);
        Ok(())
    }

    fn tree(&mut self, id: ObjectId) -> Result<Rc<[u8]>, GitError> {
        if let Some(data) = self.current.get(&id) {
            return Ok(data.clone());
        }
        if let Some(data) = self.previous.get(&id) {
            let data = data.clone();
            self.current.insert(id, data.clone());
            return Ok(data);
        }
        if id == ObjectId::empty_tree(self.hash) {
            return Ok(Rc::from(&[][..]));
        }
        let data: Rc<[u8]> = Rc::from(self.find(id, gix::objs::Kind::Tree, "tree")?);
        self.current.insert(id, data.clone());
        Ok(data)
    }

    /// Whether anything under directory `dir` (no trailing '/') can match a prefix.
    fn wants_dir(&self, dir: &[u8]) -> bool {
        self.prefixes.is_empty()
            || self.prefixes.iter().any(|p| {
                let p = p.as_bytes();
                // The directory lies inside the prefix, or the prefix inside the directory.
                starts_with_dir(dir, p)
                    || (p.len() > dir.len() && p.starts_with(dir) && p[dir.len()] == b'/')
            })
    }

    fn wants_file(&self, path: &[u8]) -> bool {
        self.prefixes.is_empty() || self.prefixes.iter().any(|p| path.starts_with(p.as_bytes()))
    }

    /// Append to `out` the blob changes between trees `old` and `new` (either may be absent),
    /// which sit at `path` (empty for the root).
    fn diff(
        &mut self,
        old: Option<ObjectId>,
        new: Option<ObjectId>,
        path: &mut BString,
        out: &mut Vec<PathChange>,
    ) -> Result<(), GitError> {
        if old == new {
            return Ok(());
        }
        let old_data = match old {
            Some(id) => self.tree(id)?,
            None => Rc::from(&[][..]),
        };
        let new_data = match new {
            Some(id) => self.tree(id)?,
            None => Rc::from(&[][..]),
        };
        let hash_len = self.hash.len_in_bytes();
        let mut a = RawEntries::new(&old_data, hash_len, old);
        let mut b = RawEntries::new(&new_data, hash_len, new);
        // Neighbouring trees in a store share almost all their entries: step over the common
        // prefix finding entry ends only, and stop as soon as the rest is byte-for-byte equal.
        let common = common_prefix_len(&old_data, &new_data);
        while let Some(end) = a.entry_end()? {
            if end > common {
                break;
            }
            a.pos = end;
        }
        b.pos = a.pos;
        loop {
            let (old_entry, new_entry) = match (a.peek()?, b.peek()?) {
                (None, None) => break,
                (Some(o), None) => (Some(o), None),
                (None, Some(n)) => (None, Some(n)),
                (Some(o), Some(n)) => {
                    if o.raw == n.raw {
                        a.pos += o.raw.len();
                        b.pos += n.raw.len();
                        continue;
                    }
                    match gix::objs::tree::name_order(
                        o.name.as_bstr(),
                        o.mode.is_tree(),
                        n.name.as_bstr(),
                        n.mode.is_tree(),
                    ) {
                        std::cmp::Ordering::Less => (Some(o), None),
                        std::cmp::Ordering::Greater => (None, Some(n)),
                        std::cmp::Ordering::Equal => (Some(o), Some(n)),
                    }
                }
            };
            let name = old_entry.or(new_entry).expect("one side has an entry").name;
            let len = path.len();
            if !path.is_empty() {
                path.push(b'/');
            }
            path.extend_from_slice(name);
            let owned = |e: Option<RawEntry<'_>>| {
                e.map(|e| Entry {
                    mode: e.mode,
                    id: e.id.to_owned(),
                })
            };
            if let Some(o) = old_entry {
                a.pos += o.raw.len();
            }
            if let Some(n) = new_entry {
                b.pos += n.raw.len();
            }
            self.entry_change(owned(old_entry), owned(new_entry), path, out)?;
            path.truncate(len);
            if old_data[a.pos..] == new_data[b.pos..] {
                break;
            }
        }
        Ok(())
    }

    fn entry_change(
        &mut self,
        old: Option<Entry>,
        new: Option<Entry>,
        path: &mut BString,
        out: &mut Vec<PathChange>,
    ) -> Result<(), GitError> {
        // Trees on either side are compared recursively; blobs (files, executables, symlinks)
        // are reported; submodule commits are not the store's business.
        let tree = |e: &Option<Entry>| e.as_ref().filter(|e| e.mode.is_tree()).map(|e| e.id);
        let blob = |e: &Option<Entry>| {
            e.as_ref()
                .filter(|e| e.mode.is_blob_or_symlink())
                .map(|e| e.id)
        };
        let (old_tree, new_tree) = (tree(&old), tree(&new));
        if (old_tree.is_some() || new_tree.is_some()) && self.wants_dir(path) {
            self.diff(old_tree, new_tree, path, out)?;
        }
        let (old_blob, new_blob) = (blob(&old), blob(&new));
        if (old_blob.is_some() || new_blob.is_some()) && self.wants_file(path) {
            out.push(PathChange {
                path: path.to_str_lossy().into_owned(),
                old: old_blob,
                new: new_blob,
            });
        }
        Ok(())
    }
}

/// One entry of a tree's raw bytes: `<mode> <name>\0<id>`.
#[derive(Clone, Copy)]
struct RawEntry<'a> {
    raw: &'a [u8],
    mode: EntryMode,
    name: &'a [u8],
    id: &'a gix::hash::oid,
}

/// A minimal scanner over a tree's raw bytes. Neighbouring trees in a store share almost all
/// entries, so the diff compares raw entries and needs no more than their boundaries, names and
/// modes.
struct RawEntries<'a> {
    data: &'a [u8],
    pos: usize,
    hash_len: usize,
    tree: Option<ObjectId>,
}

impl<'a> RawEntries<'a> {
    fn new(data: &'a [u8], hash_len: usize, tree: Option<ObjectId>) -> Self {
        RawEntries {
            data,
            pos: 0,
            hash_len,
            tree,
        }
    }

    fn corrupt(&self) -> GitError {
        GitError::Git {
            context: format!(
                "tree {} is malformed at byte {}",
                self.tree.map(|t| t.to_string()).unwrap_or_default(),
                self.pos
            ),
            source: gix::Error::from_error(std::io::Error::new(
                std::io::ErrorKind::InvalidData,
                "malformed tree entry",
            )),
        }
    }

    /// The end (absolute offset) of the entry at `pos`: the NUL after the name, then the id.
    /// Neither mode nor name can hold a NUL, so this needs no other parsing.
    fn entry_end(&self) -> Result<Option<usize>, GitError> {
        let rest = &self.data[self.pos..];
        if rest.is_empty() {
            return Ok(None);
        }
        let nul = rest.find_byte(0).ok_or_else(|| self.corrupt())?;
        let end = nul + 1 + self.hash_len;
        if end > rest.len() {
            return Err(self.corrupt());
        }
        Ok(Some(self.pos + end))
    }

    /// The entry at `pos`, without moving past it.
    fn peek(&self) -> Result<Option<RawEntry<'a>>, GitError> {
        let Some(end) = self.entry_end()? else {
            return Ok(None);
        };
        let raw = &self.data[self.pos..end];
        let nul = raw.len() - 1 - self.hash_len;
        let space = raw[..nul].find_byte(b' ').ok_or_else(|| self.corrupt())?;
        let mode = EntryMode::from_bytes(&raw[..=space]).ok_or_else(|| self.corrupt())?;
        Ok(Some(RawEntry {
            raw,
            mode,
            name: &raw[space + 1..nul],
            id: gix::hash::oid::from_bytes_unchecked(&raw[nul + 1..]),
        }))
    }
}

/// How many leading bytes `a` and `b` share.
fn common_prefix_len(a: &[u8], b: &[u8]) -> usize {
    const CHUNK: usize = 128;
    let n = a.len().min(b.len());
    let mut i = 0;
    while i + CHUNK <= n && a[i..i + CHUNK] == b[i..i + CHUNK] {
        i += CHUNK;
    }
    while i < n && a[i] == b[i] {
        i += 1;
    }
    i
}

/// `dir + "/"` starts with `prefix`.
fn starts_with_dir(dir: &[u8], prefix: &[u8]) -> bool {
    if prefix.len() <= dir.len() {
        dir.starts_with(prefix)
    } else {
        prefix.len() == dir.len() + 1 && prefix.starts_with(dir) && prefix[dir.len()] == b'/'
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn both_walk_orders_agree() {
        let dir = tempfile::tempdir().unwrap();
        let repo = super::super::Repo::init(dir.path()).unwrap();
        let who = super::super::identity::resolve_identity(
            &|k: &str| {
                Some(match k {
                    "GIT_AUTHOR_NAME" | "GIT_COMMITTER_NAME" => "Ada".to_string(),
                    "GIT_AUTHOR_EMAIL" | "GIT_COMMITTER_EMAIL" => "ada@example.org".to_string(),
                    _ => return None,
                })
            },
            &|_: &str| None,
        )
        .unwrap();
        let mut parent = None;
        let mut commits = Vec::new();
        for n in 0..40u32 {
            let mut files = vec![(
                format!("history/d{}.toml", n % 3),
                format!("{n}\n").into_bytes(),
            )];
            files.push((
                format!("contracts/d{}/{n}.toml", n % 3),
                vec![b'x'; n as usize],
            ));
            if n % 5 == 0 {
                files.push(("contracts.toml".to_string(), format!("{n}").into_bytes()));
            }
            let c = repo
                .write_commit_objects(parent, &files, "step", &who)
                .unwrap();
            repo.move_head(parent, c, "step", &who).unwrap();
            parent = Some(c);
            commits.push(c);
        }
        let head = parent.unwrap();
        let key = |h: Vec<CommitChanges>| {
            h.into_iter()
                .map(|c| (c.id, c.parent, c.changes))
                .collect::<Vec<_>>()
        };
        // (since, prefixes, commits listed, commits with changes)
        for (since, prefixes, listed, changed) in [
            (None, &["contracts/", "history/"][..], 40, 40),
            (Some(commits[7]), &[][..], 32, 32),
            (None, &["contracts/d1/"][..], 40, 13),
        ] {
            let a = key(walk_in(&repo.repo, head, since, prefixes, Order::NewestFirst).unwrap());
            let b = key(walk_in(&repo.repo, head, since, prefixes, Order::OldestFirst).unwrap());
            assert_eq!(a, b);
            assert_eq!(a.len(), listed);
            assert_eq!(a.iter().filter(|(_, _, c)| !c.is_empty()).count(), changed);
        }
    }

    #[test]
    fn prefix_matching() {
        let repo_dir = tempfile::tempdir().unwrap();
        let repo = gix::init(repo_dir.path()).unwrap();
        let prefixes = ["contracts/", "history/"];
        let d = Differ {
            repo: &repo,
            hash: repo.object_hash(),
            prefixes: &prefixes,
            current: HashMap::new(),
            previous: HashMap::new(),
            buf: Vec::new(),
        };
        assert!(d.wants_dir(b"contracts"));
        assert!(d.wants_dir(b"contracts/roads"));
        assert!(d.wants_dir(b"history"));
        assert!(!d.wants_dir(b"templates"));
        assert!(!d.wants_dir(b"contractsx"));
        assert!(d.wants_file(b"contracts/roads/1.0.0.toml"));
        assert!(!d.wants_file(b"contracts.toml"));
        assert!(!d.wants_file(b"templates/x"));
        let deep = ["contracts/roads/"];
        let d = Differ {
            prefixes: &deep,
            ..d
        };
        assert!(d.wants_dir(b"contracts"));
        assert!(d.wants_dir(b"contracts/roads"));
        assert!(d.wants_dir(b"contracts/roads/x"));
        assert!(!d.wants_dir(b"contracts/rivers"));
        assert!(!d.wants_dir(b"history"));
    }
}
