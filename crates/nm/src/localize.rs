//! Local resources (YARN's localization, for `file://` URLs only): a FILE is linked into the
//! container's work dir under its key, an ARCHIVE (tar, tar.gz, tgz) is unpacked into a
//! directory of that name.

use std::fs::File;
use std::path::{Path, PathBuf};

use fairloom_protocol::LocalResource;

use crate::executor::RunAs;

#[derive(Debug, thiserror::Error)]
pub enum LocalizeError {
    #[error("local resource '{key}': {message}")]
    Bad { key: String, message: String },
}

fn bad(r: &LocalResource, message: impl Into<String>) -> LocalizeError {
    LocalizeError::Bad { key: r.key.clone(), message: message.into() }
}

fn source_path(r: &LocalResource) -> Result<PathBuf, LocalizeError> {
    let path = match r.resource.strip_prefix("file://") {
        Some(p) => p,
        None if r.resource.starts_with('/') => r.resource.as_str(),
        None => return Err(bad(r, format!("not supported: only file:// resources can be fetched ('{}')", r.resource))),
    };
    let path = PathBuf::from(path);
    if !path.exists() {
        return Err(bad(r, format!("{} does not exist", path.display())));
    }
    Ok(path)
}

/// The link name must stay inside the work dir and not be one of the NodeManager's files.
fn target(work: &Path, r: &LocalResource) -> Result<PathBuf, LocalizeError> {
    if crate::workdir::reserved(&r.key) {
        return Err(bad(r, "the name is the NodeManager's own (launch_container.sh, container_tokens, *.exitcode)"));
    }
    crate::workdir::within(work, &r.key).ok_or_else(|| bad(r, "the key must be a plain file name"))
}

/// Fetch `resources` into `work`. With `reader` (the Linux executor's user), only what that
/// user may read: a root NodeManager must not link or unpack for a container what its user
/// could not open, and what it unpacks belongs to that user.
pub fn localize(work: &Path, resources: &[LocalResource], reader: Option<&RunAs>) -> Result<(), LocalizeError> {
    let mut seen = std::collections::HashSet::new();
    for r in resources {
        // One name, one resource: a second one under the same key would be fetched into
        // (or through) what the first one put there.
        if !seen.insert(r.key.as_str()) {
            return Err(bad(r, "the key names another local resource of the container too"));
        }
        let src = source_path(r)?;
        let dst = target(work, r)?;
        if let Some(u) = reader.filter(|u| !u.may_read(&src)) {
            return Err(bad(r, format!("user {} may not read {}", u.name, src.display())));
        }
        match r.kind.to_ascii_uppercase().as_str() {
            "FILE" => std::os::unix::fs::symlink(&src, &dst)
                .map_err(|e| bad(r, format!("cannot link {}: {e}", src.display())))?,
            "ARCHIVE" => {
                unpack(&src, &dst, reader).map_err(|e| bad(r, format!("cannot unpack {}: {e}", src.display())))?
            }
            other => return Err(bad(r, format!("not supported: resource type {other} (FILE and ARCHIVE are)"))),
        }
    }
    Ok(())
}

/// Give `dir` and everything under it to `user` (not following links).
fn own_tree(dir: &Path, user: &RunAs) -> std::io::Result<()> {
    std::os::unix::fs::lchown(dir, Some(user.uid), Some(user.gid))?;
    if std::fs::symlink_metadata(dir)?.is_dir() {
        for e in std::fs::read_dir(dir)? {
            own_tree(&e?.path(), user)?;
        }
    }
    Ok(())
}

/// Open an archive to read: without waiting (a FIFO would hold the node), and only a
/// regular file.
fn open_archive(src: &Path) -> std::io::Result<File> {
    use std::os::unix::fs::OpenOptionsExt;
    let file = std::fs::OpenOptions::new().read(true).custom_flags(libc::O_NONBLOCK).open(src)?;
    if !file.metadata()?.is_file() {
        return Err(std::io::Error::other("not a regular file"));
    }
    Ok(file)
}

fn unpack(src: &Path, dst: &Path, reader: Option<&RunAs>) -> std::io::Result<()> {
    let name = src.file_name().and_then(|n| n.to_str()).unwrap_or_default().to_ascii_lowercase();
    let file = open_archive(src)?;
    if let Some(u) = reader {
        // What was opened is what was checked (not a file swapped in since).
        use std::os::unix::fs::MetadataExt;
        let (opened, checked) = (file.metadata()?, std::fs::metadata(src)?);
        if (opened.dev(), opened.ino()) != (checked.dev(), checked.ino()) || !u.may_read(src) {
            return Err(std::io::Error::other("the file changed while it was checked"));
        }
    }
    // A new directory, never an existing one (nor whatever a link there points at).
    std::fs::create_dir(dst)?;
    let unpacked = unpack_file(file, &name, dst);
    match (unpacked, reader) {
        (Ok(()), Some(u)) => own_tree(dst, u),
        (other, _) => other,
    }
}

fn unpack_file(file: File, name: &str, dst: &Path) -> std::io::Result<()> {
    if name.ends_with(".tar.gz") || name.ends_with(".tgz") {
        tar::Archive::new(flate2::read::GzDecoder::new(file)).unpack(dst)
    } else if name.ends_with(".tar") {
        tar::Archive::new(file).unpack(dst)
    } else {
        Err(std::io::Error::other("not supported: archives are .tar, .tar.gz or .tgz"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn res(key: &str, path: &Path, kind: &str) -> LocalResource {
        LocalResource {
            key: key.to_string(),
            resource: format!("file://{}", path.display()),
            kind: kind.to_string(),
            visibility: "APPLICATION".to_string(),
        }
    }

    #[test]
    fn files_are_linked_and_archives_unpacked() {
        let dir = std::env::temp_dir().join(format!("fairloom-localize-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let work = dir.join("work");
        std::fs::create_dir_all(&work).unwrap();
        let f = dir.join("data.txt");
        std::fs::write(&f, "hello").unwrap();
        let archive = dir.join("a.tar.gz");
        {
            let gz = flate2::write::GzEncoder::new(File::create(&archive).unwrap(), flate2::Compression::default());
            let mut t = tar::Builder::new(gz);
            t.append_path_with_name(&f, "inner.txt").unwrap();
            t.into_inner().unwrap().finish().unwrap();
        }
        localize(&work, &[res("d.txt", &f, "FILE"), res("arch", &archive, "ARCHIVE")], None).unwrap();
        assert_eq!(std::fs::read_to_string(work.join("d.txt")).unwrap(), "hello");
        assert_eq!(std::fs::read_to_string(work.join("arch/inner.txt")).unwrap(), "hello");
        let e = localize(&work, &[res("../x", &f, "FILE")], None).unwrap_err();
        assert!(e.to_string().contains("plain file name"), "{e}");
        // The same key twice: a link to a directory, then an archive unpacked through it.
        let w2 = dir.join("work2");
        std::fs::create_dir_all(&w2).unwrap();
        let e = localize(&w2, &[res("x", &dir, "FILE"), res("x", &archive, "ARCHIVE")], None).unwrap_err();
        assert!(e.to_string().contains("names another local resource"), "{e}");
        // An archive is a regular file: a FIFO is refused at once, not waited on.
        let fifo = dir.join("pipe.tar");
        let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
        // SAFETY: mkfifo reads the NUL-terminated path it is given.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o644) }, 0);
        let e = localize(&w2, &[res("p", &fifo, "ARCHIVE")], None).unwrap_err();
        assert!(e.to_string().contains("not a regular file"), "{e}");
        let mut http = res("h", &f, "FILE");
        http.resource = "hdfs://nn/x".to_string();
        assert!(localize(&work, &[http], None).unwrap_err().to_string().contains("not supported"));
        let _ = std::fs::remove_dir_all(&dir);
    }
}
