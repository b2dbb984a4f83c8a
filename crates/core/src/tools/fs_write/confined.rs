//! Opening, reading and atomically replacing a file so that the operation
//! cannot leave the workspace, even when the file system changes under it.
//!
//! Checking a path and then opening it by name is a race: a directory of the
//! path can be swapped for a symlink pointing outside between the check and
//! the write (issue 12). So nothing here resolves a path by name after the
//! check. Instead a directory descriptor is opened for a workspace root and
//! the path is walked one component at a time with `openat(O_NOFOLLOW |
//! O_DIRECTORY)`, each directory opened relative to the one before. Every
//! descriptor held was reached from a root without following a link, so it
//! lies inside the workspace by construction; the temporary file is created
//! and renamed relative to the last one.
//!
//! Symlinks are still allowed when they stay inside: a link met on the way
//! (a directory of the path or the file itself) is read with `readlinkat`,
//! and the walk starts over from a root with the link's target in place of
//! the link. A target outside every root is refused. `..` in a link target
//! is applied to the directory reached so far (which contains no links), as
//! the kernel would. A link swapped in after it was checked is never
//! followed: the final rename replaces the link itself, inside the
//! workspace.
//!
//! What this does not prevent: a directory the walk already opened being
//! renamed out of the workspace by someone else while the write runs.

use std::ffi::{OsStr, OsString};
use std::fs::File;
use std::io::{self, Write};
use std::os::fd::OwnedFd;
use std::os::unix::ffi::OsStrExt;
use std::path::{Component, Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use rustix::fs::{self as rfs, AtFlags, FileType, Mode, OFlags};
use rustix::io::Errno;

/// As many links as Linux follows in one path (`MAXSYMLINKS`).
const MAX_LINKS: usize = 40;

/// Why a confined operation failed.
#[derive(Debug, thiserror::Error)]
pub enum ConfinedError {
    /// The path, or a symlink on it, leads outside every workspace root;
    /// `resolved` is where it leads.
    #[error("{} leads outside the workspace (to {})", .path.display(), .resolved.display())]
    Outside { path: PathBuf, resolved: PathBuf },
    #[error("too many levels of symbolic links in {}", .0.display())]
    TooManyLinks(PathBuf),
    #[error(transparent)]
    Io(#[from] io::Error),
}

impl From<Errno> for ConfinedError {
    fn from(errno: Errno) -> Self {
        Self::Io(errno.into())
    }
}

/// An entry to operate on: a directory reached from a workspace root
/// without leaving it, and a name in it.
#[derive(Debug)]
pub struct Located {
    pub dir: OwnedFd,
    pub name: OsString,
}

/// A workspace root as configured and with its links resolved.
struct Root {
    given: PathBuf,
    real: PathBuf,
}

/// One component below a root.
#[derive(Debug, Clone)]
enum Step {
    Name(OsString),
    Up,
}

enum Walk {
    Done(Located),
    /// A link or `..` was met: walk this path from a root instead.
    Restart {
        path: PathBuf,
        link: bool,
    },
}

/// Finds the entry `path` names inside one of `roots`, following symlinks
/// only while they stay inside. With `create_dirs`, missing directories on
/// the way are created (`mkdirat`, never through a link). The final
/// component is a link target when `path` names a link; it may not exist.
pub fn locate(roots: &[PathBuf], path: &Path, create_dirs: bool) -> Result<Located, ConfinedError> {
    let roots: Vec<Root> = roots
        .iter()
        .filter_map(|given| {
            let real = given.canonicalize().ok()?;
            Some(Root {
                given: given.clone(),
                real,
            })
        })
        .collect();
    let mut current = path.to_path_buf();
    let mut links = 0;
    // `..` restarts consume a component each, so this bound is generous.
    for _ in 0..MAX_LINKS + 4096 {
        match walk(&roots, path, &current, create_dirs)? {
            Walk::Done(located) => return Ok(located),
            Walk::Restart { path: next, link } => {
                if link {
                    links += 1;
                    if links > MAX_LINKS {
                        break;
                    }
                }
                current = next;
            }
        }
    }
    Err(ConfinedError::TooManyLinks(path.to_path_buf()))
}

/// The root `path` lies in and the steps below it, by the longest matching
/// prefix (lexical first, then with the existing part of `path` resolved,
/// so a path reaching the workspace through an outside link still works;
/// the steps are walked from the root either way).
fn split<'a>(roots: &'a [Root], path: &Path) -> Option<(&'a Root, Vec<Step>)> {
    let lexical = |path: &Path| {
        roots
            .iter()
            .flat_map(|root| [(root, &root.given), (root, &root.real)])
            .filter(|(_, prefix)| path.starts_with(prefix))
            .max_by_key(|(_, prefix)| prefix.components().count())
            .map(|(root, prefix)| (root, path.strip_prefix(prefix).unwrap_or(path).to_owned()))
    };
    let (root, rest) = lexical(path).or_else(|| lexical(&super::super::files::real_path(path)))?;
    let steps = rest
        .components()
        .filter_map(|c| match c {
            Component::Normal(name) => Some(Step::Name(name.to_owned())),
            Component::ParentDir => Some(Step::Up),
            _ => None,
        })
        .collect();
    Some((root, steps))
}

fn walk(
    roots: &[Root],
    asked: &Path,
    path: &Path,
    create_dirs: bool,
) -> Result<Walk, ConfinedError> {
    let outside = || ConfinedError::Outside {
        path: asked.to_path_buf(),
        resolved: path.to_path_buf(),
    };
    let (root, steps) = split(roots, path).ok_or_else(outside)?;
    let Some((last, parents)) = steps.split_last() else {
        return Err(io::Error::new(
            io::ErrorKind::IsADirectory,
            "the path is a workspace directory",
        )
        .into());
    };
    let mut dir = rfs::open(
        &root.given,
        OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC,
        Mode::empty(),
    )?;
    let mut dir_path = root.real.clone();
    for (i, step) in parents.iter().enumerate() {
        let rest = &steps[i + 1..];
        let name = match step {
            Step::Up => return Ok(restart(parent(&dir_path), rest, false)),
            Step::Name(name) => name,
        };
        match open_dir(&dir, name, create_dirs) {
            Ok(next) => {
                dir = next;
                dir_path.push(name);
            }
            Err(errno) => match link_target(&dir, name) {
                Some(target) => {
                    tracing::debug!(link = %dir_path.join(name).display(), target = %target.display(), "following a directory symlink");
                    return Ok(restart(dir_path.join(target), rest, true));
                }
                // It was a link when opened and is a directory again: look
                // again (counted like a link, so this ends).
                None if is_dir(&dir, name) && matches!(errno, Errno::LOOP | Errno::NOTDIR) => {
                    return Ok(restart(dir_path.join(name), rest, true));
                }
                None => return Err(errno.into()),
            },
        }
    }
    match last {
        Step::Up => Ok(restart(parent(&dir_path), &[], false)),
        Step::Name(name) => match link_target(&dir, name) {
            Some(target) => Ok(restart(dir_path.join(target), &[], true)),
            None => Ok(Walk::Done(Located {
                dir,
                name: name.clone(),
            })),
        },
    }
}

fn restart(mut path: PathBuf, rest: &[Step], link: bool) -> Walk {
    for step in rest {
        match step {
            Step::Name(name) => path.push(name),
            Step::Up => path.push(".."),
        }
    }
    Walk::Restart { path, link }
}

fn parent(path: &Path) -> PathBuf {
    path.parent().unwrap_or(path).to_path_buf()
}

/// Opens the directory `name` in `dir` without following a link, creating
/// it first when asked.
fn open_dir(dir: &OwnedFd, name: &OsStr, create: bool) -> Result<OwnedFd, Errno> {
    let flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC;
    match rfs::openat(dir, name, flags, Mode::empty()) {
        Err(Errno::NOENT) if create => {
            // Someone else may create it meanwhile; opening it is what counts.
            match rfs::mkdirat(dir, name, Mode::from_raw_mode(0o777)) {
                Ok(()) | Err(Errno::EXIST) => {}
                Err(e) => return Err(e),
            }
            rfs::openat(dir, name, flags, Mode::empty())
        }
        other => other,
    }
}

fn is_dir(dir: &OwnedFd, name: &OsStr) -> bool {
    rfs::statat(dir, name, AtFlags::SYMLINK_NOFOLLOW)
        .is_ok_and(|stat| FileType::from_raw_mode(stat.st_mode) == FileType::Directory)
}

/// The target of `name` in `dir` when it is a symlink.
fn link_target(dir: &OwnedFd, name: &OsStr) -> Option<PathBuf> {
    let target = rfs::readlinkat(dir, name, Vec::new()).ok()?;
    Some(PathBuf::from(OsStr::from_bytes(target.as_bytes())))
}

/// Opens the file `path` names for reading, confined to `roots`; `None`
/// when it (or a directory on the way) does not exist. A non-blocking open
/// so that a FIFO cannot hang the caller.
pub fn open_for_read(roots: &[PathBuf], path: &Path) -> Result<Option<File>, ConfinedError> {
    let located = match locate(roots, path, false) {
        Ok(located) => located,
        Err(ConfinedError::Io(e)) if is_missing(&e) => return Ok(None),
        Err(e) => return Err(e),
    };
    let flags = OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::NONBLOCK | OFlags::CLOEXEC;
    match rfs::openat(&located.dir, &located.name, flags, Mode::empty()) {
        Ok(fd) => Ok(Some(File::from(fd))),
        Err(Errno::NOENT | Errno::NOTDIR) => Ok(None),
        // A link appeared after the walk looked: not followed.
        Err(Errno::LOOP) => Err(io::Error::other(
            "the file was replaced by a symbolic link while it was opened",
        )
        .into()),
        Err(e) => Err(e.into()),
    }
}

fn is_missing(e: &io::Error) -> bool {
    matches!(
        e.kind(),
        io::ErrorKind::NotFound | io::ErrorKind::NotADirectory
    )
}

static TEMP_COUNTER: AtomicU64 = AtomicU64::new(0);

/// Replaces the content of the file `path` names with `bytes`, confined to
/// `roots`: missing directories are created, a temporary file in the
/// target's directory is written, given the permissions of the file it
/// replaces, synced and renamed over it, all relative to the directory's
/// descriptor. A symlink inside the workspace is written through (its
/// target is replaced, the link stays); one leading outside is refused. A
/// read-only file or a directory is refused. On failure the temporary file
/// is removed and the original is untouched.
pub fn write(roots: &[PathBuf], path: &Path, bytes: &[u8]) -> Result<(), ConfinedError> {
    let Located { dir, name, .. } = locate(roots, path, true)?;
    let mode = match rfs::statat(&dir, &name, AtFlags::SYMLINK_NOFOLLOW) {
        Ok(stat) => match FileType::from_raw_mode(stat.st_mode) {
            FileType::Directory => {
                return Err(
                    io::Error::new(io::ErrorKind::IsADirectory, "the path is a directory").into(),
                );
            }
            FileType::RegularFile => {
                let mode = stat.st_mode & 0o7777;
                if mode & 0o222 == 0 {
                    return Err(io::Error::new(
                        io::ErrorKind::PermissionDenied,
                        "the file is read-only",
                    )
                    .into());
                }
                Some(mode)
            }
            // A link swapped in since the walk (it is replaced, never
            // followed) or a special file: nothing to keep.
            _ => None,
        },
        Err(Errno::NOENT) => None,
        Err(e) => return Err(e.into()),
    };
    let (temp_name, temp) = create_temp(&dir, &name)?;
    let result = (|| -> io::Result<()> {
        let mut file = File::from(temp);
        file.write_all(bytes)?;
        if let Some(mode) = mode {
            rfs::fchmod(&file, Mode::from_raw_mode(mode))?;
        }
        file.sync_all()?;
        drop(file);
        rfs::renameat(&dir, &temp_name, &dir, &name)?;
        Ok(())
    })();
    if let Err(e) = result {
        let _ = rfs::unlinkat(&dir, &temp_name, AtFlags::empty());
        return Err(e.into());
    }
    // Make the rename itself durable; not every file system supports
    // syncing a directory, so a failure is ignored.
    let _ = rfs::fsync(&dir);
    Ok(())
}

/// Creates a new temporary file next to `name` in `dir` (`O_EXCL`, so an
/// existing entry, link or not, is never opened).
fn create_temp(dir: &OwnedFd, name: &OsStr) -> io::Result<(OsString, OwnedFd)> {
    // Short enough that the temporary name stays within name limits.
    let short: String = name.to_string_lossy().chars().take(100).collect();
    let flags = OFlags::WRONLY | OFlags::CREATE | OFlags::EXCL | OFlags::NOFOLLOW | OFlags::CLOEXEC;
    loop {
        let n = TEMP_COUNTER.fetch_add(1, Ordering::Relaxed);
        let temp = OsString::from(format!(".{short}.{}.{n}.gd-tmp", std::process::id()));
        match rfs::openat(dir, &temp, flags, Mode::from_raw_mode(0o666)) {
            Ok(fd) => return Ok((temp, fd)),
            Err(Errno::EXIST) => continue,
            Err(e) => return Err(e.into()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;
    use std::os::unix::fs::{FileTypeExt, PermissionsExt, symlink};

    /// A workspace `ws` and a directory `out` beside it.
    struct Dirs {
        _dir: tempfile::TempDir,
        ws: PathBuf,
        out: PathBuf,
    }

    fn dirs() -> Dirs {
        let dir = tempfile::tempdir().unwrap();
        let base = dir.path().canonicalize().unwrap();
        let (ws, out) = (base.join("ws"), base.join("out"));
        fs::create_dir(&ws).unwrap();
        fs::create_dir(&out).unwrap();
        Dirs { _dir: dir, ws, out }
    }

    fn entries(dir: &Path) -> Vec<String> {
        let mut names: Vec<String> = fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        names
    }

    fn is_outside(result: Result<(), ConfinedError>) -> bool {
        matches!(result, Err(ConfinedError::Outside { .. }))
    }

    #[test]
    fn writes_plain_paths_and_creates_missing_directories() {
        let d = dirs();
        let roots = [d.ws.clone()];
        write(&roots, &d.ws.join("a.txt"), b"a").unwrap();
        write(&roots, &d.ws.join("x/y/z.txt"), b"z").unwrap();
        write(&roots, &d.ws.join("x/y/z.txt"), b"z2").unwrap();
        assert_eq!(fs::read(d.ws.join("a.txt")).unwrap(), b"a");
        assert_eq!(fs::read(d.ws.join("x/y/z.txt")).unwrap(), b"z2");
        assert_eq!(entries(&d.ws.join("x/y")), ["z.txt"]);
        // Directories and files are created with the umask applied (0777 and
        // 0666 before it), as mkdir and open do.
        let dir_mode = fs::metadata(d.ws.join("x")).unwrap().permissions().mode();
        let file_mode = fs::metadata(d.ws.join("a.txt"))
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(dir_mode & 0o666, file_mode & 0o777);
    }

    #[test]
    fn refuses_dot_dot_escapes_and_paths_outside() {
        let d = dirs();
        let roots = [d.ws.clone()];
        assert!(is_outside(write(&roots, &d.ws.join("../out/x.txt"), b"x")));
        assert!(is_outside(write(&roots, &d.out.join("x.txt"), b"x")));
        // `..` that stays inside is fine.
        write(&roots, &d.ws.join("s/../in.txt"), b"in").unwrap();
        assert_eq!(fs::read(d.ws.join("in.txt")).unwrap(), b"in");
        assert!(entries(&d.out).is_empty());
    }

    #[test]
    fn refuses_a_symlinked_directory_leading_outside_and_creates_nothing_there() {
        let d = dirs();
        let roots = [d.ws.clone()];
        symlink(&d.out, d.ws.join("abs")).unwrap();
        symlink("../out", d.ws.join("rel")).unwrap();
        for path in ["abs/f.txt", "abs/new/deep.txt", "rel/f.txt", "rel/new/f"] {
            let result = write(&roots, &d.ws.join(path), b"x");
            match result {
                Err(ConfinedError::Outside { resolved, .. }) => {
                    assert!(resolved.starts_with(&d.out), "{path}: {resolved:?}")
                }
                other => panic!("{path}: {other:?}"),
            }
        }
        assert!(entries(&d.out).is_empty());
    }

    #[test]
    fn follows_symlinks_that_stay_inside() {
        let d = dirs();
        let roots = [d.ws.clone()];
        fs::create_dir_all(d.ws.join("real/sub")).unwrap();
        symlink(d.ws.join("real"), d.ws.join("abs")).unwrap();
        symlink("real/sub", d.ws.join("rel")).unwrap();
        // `..` in a target applies to the link's real directory.
        symlink("..", d.ws.join("real/sub/up")).unwrap();
        write(&roots, &d.ws.join("abs/a.txt"), b"a").unwrap();
        write(&roots, &d.ws.join("rel/b.txt"), b"b").unwrap();
        write(&roots, &d.ws.join("rel/up/c.txt"), b"c").unwrap();
        assert_eq!(entries(&d.ws.join("real")), ["a.txt", "c.txt", "sub"]);
        assert_eq!(fs::read(d.ws.join("real/sub/b.txt")).unwrap(), b"b");
    }

    #[test]
    fn a_final_symlink_is_written_through_inside_and_refused_outside() {
        let d = dirs();
        let roots = [d.ws.clone()];
        fs::write(d.ws.join("target.txt"), "old").unwrap();
        symlink("target.txt", d.ws.join("link.txt")).unwrap();
        write(&roots, &d.ws.join("link.txt"), b"new").unwrap();
        assert_eq!(fs::read(d.ws.join("target.txt")).unwrap(), b"new");
        let link = fs::symlink_metadata(d.ws.join("link.txt")).unwrap();
        assert!(link.file_type().is_symlink());

        fs::write(d.out.join("secret.txt"), "secret").unwrap();
        symlink(d.out.join("secret.txt"), d.ws.join("out.txt")).unwrap();
        symlink("../out/new.txt", d.ws.join("dangling.txt")).unwrap();
        assert!(is_outside(write(&roots, &d.ws.join("out.txt"), b"x")));
        assert!(is_outside(write(&roots, &d.ws.join("dangling.txt"), b"x")));
        assert_eq!(fs::read(d.out.join("secret.txt")).unwrap(), b"secret");
        assert_eq!(entries(&d.out), ["secret.txt"]);
        let link = fs::symlink_metadata(d.ws.join("out.txt")).unwrap();
        assert!(link.file_type().is_symlink());
    }

    #[test]
    fn symlink_loops_end_with_an_error() {
        let d = dirs();
        symlink("l2", d.ws.join("l1")).unwrap();
        symlink("l1", d.ws.join("l2")).unwrap();
        let result = write(std::slice::from_ref(&d.ws), &d.ws.join("l1/f.txt"), b"x");
        assert!(
            matches!(result, Err(ConfinedError::TooManyLinks(_))),
            "{result:?}"
        );
        let result = write(std::slice::from_ref(&d.ws), &d.ws.join("l1"), b"x");
        assert!(
            matches!(result, Err(ConfinedError::TooManyLinks(_))),
            "{result:?}"
        );
    }

    #[test]
    fn keeps_permissions_and_refuses_read_only_files_and_directories() {
        let d = dirs();
        let roots = [d.ws.clone()];
        let script = d.ws.join("run.sh");
        fs::write(&script, "old").unwrap();
        fs::set_permissions(&script, fs::Permissions::from_mode(0o750)).unwrap();
        write(&roots, &script, b"new").unwrap();
        let mode = fs::metadata(&script).unwrap().permissions().mode() & 0o7777;
        assert_eq!(mode, 0o750);

        let read_only = d.ws.join("ro.txt");
        fs::write(&read_only, "keep").unwrap();
        fs::set_permissions(&read_only, fs::Permissions::from_mode(0o444)).unwrap();
        let err = write(&roots, &read_only, b"x").unwrap_err();
        assert!(
            matches!(&err, ConfinedError::Io(e) if e.kind() == io::ErrorKind::PermissionDenied),
            "{err:?}"
        );
        assert_eq!(fs::read(&read_only).unwrap(), b"keep");
        fs::create_dir(d.ws.join("dir")).unwrap();
        let err = write(&roots, &d.ws.join("dir"), b"x").unwrap_err();
        assert!(
            matches!(&err, ConfinedError::Io(e) if e.kind() == io::ErrorKind::IsADirectory),
            "{err:?}"
        );
        let err = write(&roots, &d.ws, b"x").unwrap_err();
        assert!(
            matches!(&err, ConfinedError::Io(e) if e.kind() == io::ErrorKind::IsADirectory),
            "{err:?}"
        );
        assert_eq!(entries(&d.ws), ["dir", "ro.txt", "run.sh"]);
    }

    #[test]
    fn a_root_given_through_a_symlink_works() {
        let d = dirs();
        let alias = d.out.join("alias");
        symlink(&d.ws, &alias).unwrap();
        // Both spellings of a path reach the root.
        write(std::slice::from_ref(&alias), &alias.join("a.txt"), b"a").unwrap();
        write(std::slice::from_ref(&alias), &d.ws.join("b.txt"), b"b").unwrap();
        assert_eq!(entries(&d.ws), ["a.txt", "b.txt"]);
    }

    #[test]
    fn reading_is_confined_and_never_blocks_on_a_fifo() {
        let d = dirs();
        let roots = [d.ws.clone()];
        fs::write(d.out.join("secret.txt"), "secret").unwrap();
        symlink(d.out.join("secret.txt"), d.ws.join("out.txt")).unwrap();
        let result = open_for_read(&roots, &d.ws.join("out.txt"));
        assert!(
            matches!(result, Err(ConfinedError::Outside { .. })),
            "{result:?}"
        );
        assert!(
            open_for_read(&roots, &d.ws.join("none/x"))
                .unwrap()
                .is_none()
        );
        fs::write(d.ws.join("in.txt"), "in").unwrap();
        let mut text = String::new();
        let mut file = open_for_read(&roots, &d.ws.join("in.txt"))
            .unwrap()
            .unwrap();
        io::Read::read_to_string(&mut file, &mut text).unwrap();
        assert_eq!(text, "in");
        let dir = rfs::open(&d.ws, OFlags::RDONLY | OFlags::DIRECTORY, Mode::empty()).unwrap();
        rfs::mknodat(&dir, "fifo", FileType::Fifo, Mode::from_raw_mode(0o644), 0).unwrap();
        let fifo = open_for_read(&roots, &d.ws.join("fifo")).unwrap().unwrap();
        assert!(FileTypeExt::is_fifo(&fifo.metadata().unwrap().file_type()));
    }
}
