//! A container's directories and the NodeManager's files in them, made so that nothing a
//! user controls can turn the NodeManager's writes elsewhere. The NodeManager may run as root
//! (the Linux container executor), and a path it writes through a link a user planted would be
//! root's write anywhere. So:
//!
//! - every directory above a container's own is the NodeManager's (with the Linux executor
//!   `0711`: users pass through, but neither list nor change them), so no user can rename or
//!   replace anything on the way;
//! - the container's work and log directories are created new (a name already there, a
//!   planted link included, is an error), and stay the NodeManager's (`0700`) while it fills
//!   them;
//! - its files (credentials, launch script, stdout, stderr) are created exclusively, never
//!   through a link, before any local resource is linked, and no local resource may take
//!   their names;
//! - only then are they handed to the container's user, through the open files.

use std::fs::File;
use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};

use crate::executor::RunAs;

/// The NodeManager's own files in a work dir (YARN's names).
pub const LAUNCH_SCRIPT: &str = "launch_container.sh";
pub const TOKEN_FILE: &str = "container_tokens";

/// Whether a local resource may not be named `key`: the NodeManager's own files, and the
/// exit code file the script leaves.
pub fn reserved(key: &str) -> bool {
    key == LAUNCH_SCRIPT || key == TOKEN_FILE || key.ends_with(".exitcode") || key.ends_with(".exitcode.tmp")
}

fn io(p: &Path) -> impl Fn(std::io::Error) -> String + '_ {
    move |e| format!("{}: {e}", p.display())
}

/// A directory the NodeManager keeps above containers' own: made if missing, refused if
/// anything but a directory is there; with the Linux executor, `0711`.
fn parent(dir: &Path, run_as: Option<&RunAs>) -> Result<(), String> {
    use std::os::unix::fs::MetadataExt;
    std::fs::create_dir_all(dir).map_err(io(dir))?;
    let m = std::fs::symlink_metadata(dir).map_err(io(dir))?;
    if !m.is_dir() {
        return Err(format!("{} is not a directory", dir.display()));
    }
    if run_as.is_some() {
        // One someone else owns (an older layout gave users these) is taken back first: its
        // parent is the NodeManager's already (callers go top-down), so it cannot be swapped.
        // SAFETY: geteuid and getegid have no preconditions.
        let (uid, gid) = unsafe { (libc::geteuid(), libc::getegid()) };
        if m.uid() != uid {
            std::os::unix::fs::lchown(dir, Some(uid), Some(gid)).map_err(io(dir))?;
        }
        std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o711)).map_err(io(dir))?;
    }
    Ok(())
}

/// Make the work dir `work` and the log dir `logs` of a container: their parents the
/// NodeManager's, themselves new and the NodeManager's until [`hand_over`].
pub fn prepare(work: &Path, logs: &Path, run_as: Option<&RunAs>) -> Result<(), String> {
    for dir in [work, logs] {
        let above = dir.parent().ok_or_else(|| format!("{} has no parent", dir.display()))?;
        parent(above, run_as)?;
        std::fs::create_dir(dir).map_err(io(dir))?;
        if run_as.is_some() {
            std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700)).map_err(io(dir))?;
        }
    }
    Ok(())
}

/// The NodeManager's own dirs above the user's cache and logs: what [`prepare`] makes sure of
/// for a container, for the levels above its parent too.
pub fn parents(dirs: &[&Path], run_as: Option<&RunAs>) -> Result<(), String> {
    dirs.iter().try_for_each(|d| parent(d, run_as))
}

/// A file of the NodeManager's, created here and now (not through a link, not over anything).
pub fn create(path: &Path, mode: u32) -> Result<File, String> {
    std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .custom_flags(libc::O_NOFOLLOW)
        .mode(mode)
        .open(path)
        .map_err(io(path))
}

/// Give the container's user its files (through the open files) and then its directories:
/// the work dir `0710`, the log dir `0750`, the group the NodeManager's.
pub fn hand_over(work: &Path, logs: &Path, files: &[&File], run_as: &RunAs) -> Result<(), String> {
    for f in files {
        std::os::unix::fs::fchown(f, Some(run_as.uid), Some(run_as.dir_group)).map_err(|e| e.to_string())?;
    }
    for (dir, mode) in [(work, 0o710), (logs, 0o750)] {
        std::os::unix::fs::lchown(dir, Some(run_as.uid), Some(run_as.dir_group)).map_err(io(dir))?;
        std::fs::set_permissions(dir, std::fs::Permissions::from_mode(mode)).map_err(io(dir))?;
    }
    Ok(())
}

/// The path `work/name`, refused when `name` is not a plain file name.
pub fn within(work: &Path, name: &str) -> Option<PathBuf> {
    (!name.is_empty() && !name.contains('/') && name != "." && name != "..").then(|| work.join(name))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nothing_is_made_through_a_link_or_over_a_file() {
        let dir = std::env::temp_dir().join(format!("fairloom-workdir-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let victim = dir.join("victim");
        std::fs::write(&victim, "keep").unwrap();
        // A planted link where a file is to be created: refused, the victim untouched.
        let link = dir.join(LAUNCH_SCRIPT);
        std::os::unix::fs::symlink(&victim, &link).unwrap();
        assert!(create(&link, 0o700).is_err());
        assert_eq!(std::fs::read_to_string(&victim).unwrap(), "keep");
        // A planted link where a container's dir is to be made: refused.
        let other = dir.join("elsewhere");
        std::fs::create_dir_all(&other).unwrap();
        let work = dir.join("app").join("container_1_0001_01_000002");
        std::fs::create_dir_all(work.parent().unwrap()).unwrap();
        std::os::unix::fs::symlink(&other, &work).unwrap();
        assert!(prepare(&work, &dir.join("logs/c2"), None).is_err());
        // A parent that is a link: refused.
        let app = dir.join("app2");
        std::os::unix::fs::symlink(&other, &app).unwrap();
        assert!(prepare(&app.join("c"), &dir.join("logs/c3"), None).is_err());
        assert!(std::fs::read_dir(&other).unwrap().next().is_none(), "nothing was made in the link's target");
        assert!(reserved("launch_container.sh") && reserved("container_tokens") && reserved("x.exitcode"));
        assert!(!reserved("app.jar"));
        let _ = std::fs::remove_dir_all(&dir);
    }
}
