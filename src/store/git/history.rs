//! The first-parent history of the store with the blobs each commit changed.
//!
//! This is what `check` and `log` replay, so it has to keep pace with `git log -p` on a store of
//! tens of thousands of commits. Two things make it cheap: only subtrees under the requested
//! prefixes whose ids differ are opened (a store's commit touches two or three files among
//! thousands), and the trees read for a commit's parent are kept for the next step of the walk,
//! where that parent is the new side, so each tree is read from the pack about once.

use std::collections::HashMap;
use std::rc::Rc;

use gix::bstr::{BString, ByteSlice, ByteVec};
use gix::objs::tree::EntryMode;
use gix::objs::{CommitRef, Find, TreeRefIter};
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

pub(super) fn walk(
    repo: &gix::Repository,
    head: ObjectId,
    since: Option<ObjectId>,
    prefixes: &[&str],
) -> Result<Vec<CommitChanges>, GitError> {
    let mut differ = Differ {
        repo,
        hash: repo.object_hash(),
        prefixes,
        current: HashMap::new(),
        previous: HashMap::new(),
        buf: Vec::new(),
    };
    let mut out = Vec::new();
    let mut buf = Vec::new();
    let mut next = Some(head);
    while let Some(id) = next {
        if Some(id) == since {
            break;
        }
        let data = repo
            .objects
            .try_find(&id, &mut buf)
            .map_err(GitError::git(format!("could not read commit {id}")))?
            .filter(|d| d.kind == gix::objs::Kind::Commit)
            .ok_or_else(|| missing(id, "commit"))?;
        let commit = CommitRef::from_bytes(data.data, differ.hash)
            .map_err(GitError::git(format!("could not decode commit {id}")))?;
        let tree = commit.tree();
        let parent = commit.parents().next();
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
        let mut entry = CommitChanges {
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

        let parent_tree = match parent {
            Some(p) => Some(differ.commit_tree(p)?),
            None => None,
        };
        let mut path = BString::default();
        differ.diff(parent_tree, Some(tree), &mut path, &mut entry.changes)?;
        differ.next_generation();

        out.push(entry);
        next = parent;
    }
    if let Some(since) = since {
        if next != Some(since) {
            return Err(GitError::SinceNotInHistory { since });
        }
    }
    out.reverse();
    Ok(out)
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

    fn commit_tree(&mut self, commit: ObjectId) -> Result<ObjectId, GitError> {
        let data = self
            .repo
            .objects
            .try_find(&commit, &mut self.buf)
            .map_err(GitError::git(format!("could not read commit {commit}")))?
            .filter(|d| d.kind == gix::objs::Kind::Commit)
            .ok_or_else(|| missing(commit, "commit"))?;
        let tree = gix::objs::CommitRefIter::from_bytes(data.data, self.hash)
            .tree_id()
            .map_err(GitError::git(format!("could not decode commit {commit}")))?;
        Ok(tree)
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
        let data = self
            .repo
            .objects
            .try_find(&id, &mut self.buf)
            .map_err(GitError::git(format!("could not read tree {id}")))?
            .filter(|d| d.kind == gix::objs::Kind::Tree)
            .ok_or_else(|| missing(id, "tree"))?;
        let data: Rc<[u8]> = Rc::from(data.data);
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
        let hash = self.hash;
        let corrupt = |id: Option<ObjectId>| {
            move |source: gix::Error| GitError::Git {
                context: format!(
                    "could not decode tree {}",
                    id.unwrap_or_else(|| ObjectId::empty_tree(hash))
                ),
                source,
            }
        };
        let mut a = TreeRefIter::from_bytes(&old_data, self.hash).peekable();
        let mut b = TreeRefIter::from_bytes(&new_data, self.hash).peekable();
        loop {
            let step = match (a.peek(), b.peek()) {
                (None, None) => break,
                (Some(Err(_)), _) => {
                    let err = a.next().expect("peeked").expect_err("peeked an error");
                    return Err(corrupt(old)(err));
                }
                (_, Some(Err(_))) => {
                    let err = b.next().expect("peeked").expect_err("peeked an error");
                    return Err(corrupt(new)(err));
                }
                (Some(Ok(x)), None) => Step::Old(x.filename.to_owned()),
                (None, Some(Ok(y))) => Step::New(y.filename.to_owned()),
                (Some(Ok(x)), Some(Ok(y))) => {
                    match gix::objs::tree::name_order(
                        x.filename,
                        x.mode.is_tree(),
                        y.filename,
                        y.mode.is_tree(),
                    ) {
                        std::cmp::Ordering::Less => Step::Old(x.filename.to_owned()),
                        std::cmp::Ordering::Greater => Step::New(y.filename.to_owned()),
                        std::cmp::Ordering::Equal => Step::Both(x.filename.to_owned()),
                    }
                }
            };
            let take = |it: &mut std::iter::Peekable<TreeRefIter<'_>>| {
                let e = it.next().expect("peeked").expect("peeked ok");
                Entry {
                    mode: e.mode,
                    id: e.oid.to_owned(),
                }
            };
            let (name, old_entry, new_entry) = match step {
                Step::Old(name) => (name, Some(take(&mut a)), None),
                Step::New(name) => (name, None, Some(take(&mut b))),
                Step::Both(name) => (name, Some(take(&mut a)), Some(take(&mut b))),
            };
            if let (Some(o), Some(n)) = (&old_entry, &new_entry) {
                if o.id == n.id && o.mode == n.mode {
                    continue;
                }
            }
            let len = path.len();
            if !path.is_empty() {
                path.push(b'/');
            }
            path.push_str(name);
            self.entry_change(old_entry, new_entry, path, out)?;
            path.truncate(len);
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

enum Step {
    Old(BString),
    New(BString),
    Both(BString),
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
