//! A container's log files on the NodeManager's web port, where YARN's reports link
//! (`amContainerLogs`, an attempt's `logsLink`, a container's `logUrl`):
//! `/node/containerlogs/CONTAINER/USER` lists every file of the container's log directory
//! with its text, `/node/containerlogs/CONTAINER/USER/FILE` gives one file as it is.
//!
//! What a request may reach: only the log directory of a container this node ran (live, or
//! among the finished ones it keeps), only when USER is the application's owner (YARN's
//! "doesn't own requested log file"), only plain files directly in that directory (no
//! path, no `..`, no symbolic link out of it). With `yarn.acl.enable` the logs are for the
//! application's viewers, whom this node cannot tell (it is not given the ACLs): refused.

use std::io::Read;
use std::path::{Path, PathBuf};

/// The most of one file the listing page shows (its end); the file's own URL has more.
pub const PAGE_TAIL_BYTES: u64 = 64 * 1024;
/// The most of one file its own URL gives (its end): a runaway log is not read whole.
pub const FILE_MAX_BYTES: u64 = 16 * 1024 * 1024;

/// Why a log request is refused: the HTTP status and the message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refusal {
    pub status: u16,
    pub message: String,
}

pub fn refuse(status: u16, message: impl Into<String>) -> Refusal {
    Refusal { status, message: message.into() }
}

/// The log directory of `container`, owned by `owner`, if `user` may read it.
pub fn check_owner(container: &str, owner: &str, user: &str) -> Result<(), Refusal> {
    if owner != user {
        return Err(refuse(
            403,
            format!("Exception reading log file. Application submitted by '{owner}' doesn't own requested log file: {container} (asked as '{user}')"),
        ));
    }
    Ok(())
}

/// `file` of `dir`: a plain file directly in it, or why not.
pub fn file_in(dir: &Path, file: &str) -> Result<PathBuf, Refusal> {
    if file.is_empty() || file == "." || file == ".." || file.contains('/') || file.contains('\0') {
        return Err(refuse(400, format!("'{}' is not a log file name", file.escape_debug())));
    }
    let path = dir.join(file);
    match std::fs::symlink_metadata(&path) {
        Ok(m) if m.file_type().is_file() => Ok(path),
        Ok(_) => Err(refuse(404, format!("{file} is not a log file of this container"))),
        Err(_) => Err(refuse(404, format!("no log file {file} for this container"))),
    }
}

/// The plain files of a container's log directory, by name.
pub fn files(dir: &Path) -> Vec<(String, u64)> {
    let mut out: Vec<(String, u64)> = std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| {
            let m = e.path().symlink_metadata().ok().filter(|m| m.file_type().is_file())?;
            Some((e.file_name().to_string_lossy().into_owned(), m.len()))
        })
        .collect();
    out.sort();
    out
}

/// Up to the last `max` bytes of `path` (what a page shows of a large file), as text.
pub fn tail(path: &Path, max: u64) -> std::io::Result<String> {
    let mut f = std::fs::File::open(path)?;
    let len = f.metadata()?.len();
    if len > max {
        use std::io::Seek;
        f.seek(std::io::SeekFrom::Start(len - max))?;
    }
    let mut bytes = Vec::new();
    f.take(max).read_to_end(&mut bytes)?;
    Ok(String::from_utf8_lossy(&bytes).into_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_plain_files_directly_in_the_directory() {
        let dir = std::env::temp_dir().join(format!("fairloom-logs-{}", std::process::id()));
        let inner = dir.join("c1");
        std::fs::create_dir_all(&inner).unwrap();
        std::fs::write(inner.join("stdout"), "hello\n").unwrap();
        std::fs::write(dir.join("secret"), "not yours").unwrap();
        std::os::unix::fs::symlink(dir.join("secret"), inner.join("link")).unwrap();
        std::fs::create_dir_all(inner.join("sub")).unwrap();
        assert_eq!(file_in(&inner, "stdout").unwrap(), inner.join("stdout"));
        for bad in ["../secret", "..", ".", "", "a/b"] {
            assert_eq!(file_in(&inner, bad).unwrap_err().status, 400, "{bad}");
        }
        assert_eq!(file_in(&inner, "link").unwrap_err().status, 404, "a symbolic link is not followed");
        assert_eq!(file_in(&inner, "sub").unwrap_err().status, 404);
        assert_eq!(file_in(&inner, "stderr").unwrap_err().status, 404);
        assert_eq!(files(&inner), vec![("stdout".to_string(), 6)]);
        assert_eq!(tail(&inner.join("stdout"), 3).unwrap(), "lo\n");
        assert!(check_owner("c1", "alice", "bob").unwrap_err().message.contains("doesn't own requested log file"));
        assert!(check_owner("c1", "alice", "alice").is_ok());
        let _ = std::fs::remove_dir_all(&dir);
    }
}
