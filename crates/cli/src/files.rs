//! Output files: checked before the run, never over an input, written atomically.
//!
//! # Ground rules
//!
//! - **Checked first.** Every output path is checked before anything runs: it is not a
//!   directory, its directory exists, and a file can be created there (one is created and
//!   removed). So a long run is never lost to a typo in `--deaths`.
//! - **Never over an input.** An output that is the same file as an input (`--population
//!   f.csv --deaths f.csv`, also through `./f.csv`, a symbolic link or a hard link) or as
//!   another output is refused: paths are compared canonicalised, existing files by device and
//!   inode.
//! - **Atomic.** A file is written to a temporary file in the same directory, flushed to the
//!   disk, then renamed over the target. A full disk or a crash leaves the previous file whole
//!   and no truncated one. Special files (`/dev/stdout`, a FIFO) are written in place: there
//!   is nothing to rename over.

use std::ffi::OsString;
use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};

/// The files a command reads and writes, each with the flag that named it.
#[derive(Debug, Clone, Default)]
pub(crate) struct FileSet {
    pub(crate) inputs: Vec<(&'static str, PathBuf)>,
    pub(crate) outputs: Vec<(&'static str, PathBuf)>,
}

impl FileSet {
    /// A set with `--config`, if given, as an input.
    pub(crate) fn with_config(config: Option<&PathBuf>) -> FileSet {
        FileSet {
            inputs: config
                .map(|path| ("--config", path.clone()))
                .into_iter()
                .collect(),
            outputs: Vec::new(),
        }
    }

    /// Adds an input, if given.
    pub(crate) fn input(mut self, flag: &'static str, path: Option<&PathBuf>) -> FileSet {
        self.inputs.extend(path.map(|path| (flag, path.clone())));
        self
    }

    /// Adds an output, if given.
    pub(crate) fn output(mut self, flag: &'static str, path: Option<&PathBuf>) -> FileSet {
        self.outputs.extend(path.map(|path| (flag, path.clone())));
        self
    }
}

/// The directory a file is created in (`.` for a bare file name).
fn directory_of(path: &Path) -> PathBuf {
    match path.parent() {
        Some(parent) if !parent.as_os_str().is_empty() => parent.to_path_buf(),
        _ => PathBuf::from("."),
    }
}

/// What identifies a file: its canonical path (the canonical directory and the name, for a
/// file that does not exist yet) and, for an existing file, its device and inode.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Identity {
    path: PathBuf,
    inode: Option<(u64, u64)>,
}

impl Identity {
    fn of(path: &Path) -> Identity {
        let canonical = fs::canonicalize(path).ok().unwrap_or_else(|| {
            let directory = fs::canonicalize(directory_of(path)).unwrap_or(directory_of(path));
            match path.file_name() {
                Some(name) => directory.join(name),
                None => directory,
            }
        });
        Identity {
            path: canonical,
            inode: inode_of(path),
        }
    }

    fn same_file(&self, other: &Identity) -> bool {
        self.path == other.path || (self.inode.is_some() && self.inode == other.inode)
    }
}

#[cfg(unix)]
fn inode_of(path: &Path) -> Option<(u64, u64)> {
    use std::os::unix::fs::MetadataExt;
    fs::metadata(path)
        .ok()
        .map(|metadata| (metadata.dev(), metadata.ino()))
}

#[cfg(not(unix))]
fn inode_of(_path: &Path) -> Option<(u64, u64)> {
    None
}

/// Checks every output of `files` before the run (see the module's ground rules).
///
/// # Errors
///
/// One line naming the flag and the path: a directory, a missing or read-only directory, a
/// read-only file, or an output that is an input or another output.
pub(crate) fn check_outputs(files: &FileSet) -> Result<()> {
    let mut seen: Vec<(&'static str, &Path, Identity)> = files
        .inputs
        .iter()
        .map(|(flag, path)| (*flag, path.as_path(), Identity::of(path)))
        .collect();
    let n_inputs = seen.len();
    for (flag, path) in &files.outputs {
        check_writable(flag, path)?;
        let identity = Identity::of(path);
        if let Some((index, (other, other_path, _))) = seen
            .iter()
            .enumerate()
            .find(|(_, (_, _, known))| known.same_file(&identity))
        {
            let role = if index < n_inputs { "input" } else { "output" };
            bail!(
                "{flag} {}: this is the same file as the {role} {other} {}; refusing to \
                 overwrite it",
                path.display(),
                other_path.display()
            );
        }
        seen.push((flag, path.as_path(), identity));
    }
    Ok(())
}

fn check_writable(flag: &str, path: &Path) -> Result<()> {
    let shown = path.display();
    if path.as_os_str().is_empty() {
        bail!("{flag}: the file name is empty");
    }
    if let Ok(metadata) = fs::metadata(path) {
        if metadata.is_dir() {
            bail!("{flag} {shown}: is a directory, not a file");
        }
        if !metadata.is_file() {
            // A device or a FIFO is written in place: it only has to open for writing.
            fs::OpenOptions::new()
                .write(true)
                .open(path)
                .with_context(|| format!("{flag} {shown}: cannot be opened for writing"))?;
            return Ok(());
        }
        if metadata.permissions().readonly() {
            bail!("{flag} {shown}: the file is read-only");
        }
    }
    let directory = directory_of(path);
    match fs::metadata(&directory) {
        Ok(metadata) if metadata.is_dir() => {}
        Ok(_) => bail!("{flag} {shown}: {} is not a directory", directory.display()),
        Err(_) => bail!(
            "{flag} {shown}: the directory {} does not exist",
            directory.display()
        ),
    }
    // The one reliable test of "can I create a file here": create one (and drop it, which
    // removes it).
    tempfile::Builder::new()
        .prefix(".warpsim-check-")
        .tempfile_in(&directory)
        .with_context(|| {
            format!(
                "{flag} {shown}: cannot create a file in {}",
                directory.display()
            )
        })?;
    Ok(())
}

/// Writes `contents` to `path` atomically (see the module's ground rules).
///
/// # Errors
///
/// `cannot write PATH: …` with the system's reason; the previous file, if any, is unchanged
/// and no temporary file is left behind.
pub(crate) fn write_atomic(path: &Path, contents: &[u8]) -> Result<()> {
    write_atomic_with(path, |file| file.write_all(contents))
}

/// [`write_atomic`] with the bytes produced by `write` (which may fail, as a full disk does).
pub(crate) fn write_atomic_with(
    path: &Path,
    write: impl FnOnce(&mut fs::File) -> std::io::Result<()>,
) -> Result<()> {
    let failed = || {
        format!(
            "cannot write {} (any previous file there is unchanged)",
            path.display()
        )
    };
    // Write through a symbolic link to its target, as a plain write would.
    let target = fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf());
    if let Ok(metadata) = fs::metadata(&target)
        && !metadata.is_file()
    {
        let mut file = fs::OpenOptions::new()
            .write(true)
            .open(&target)
            .with_context(|| format!("cannot write {}", path.display()))?;
        return write(&mut file).with_context(|| format!("cannot write {}", path.display()));
    }
    let directory = directory_of(&target);
    let mut prefix = OsString::from(".");
    prefix.push(target.file_name().unwrap_or_default());
    prefix.push(".");
    let mut builder = tempfile::Builder::new();
    builder.prefix(&prefix).suffix(".tmp");
    #[cfg(unix)]
    {
        // The mode a plain `File::create` gives (the umask still applies), not tempfile's
        // private 0600, so that the result reads like any other output.
        use std::os::unix::fs::PermissionsExt;
        builder.permissions(fs::Permissions::from_mode(0o666));
    }
    let mut temporary = builder.tempfile_in(&directory).with_context(failed)?;
    write(temporary.as_file_mut()).with_context(failed)?;
    temporary.as_file().sync_all().with_context(failed)?;
    temporary
        .persist(&target)
        .map_err(|error| error.error)
        .with_context(failed)?;
    Ok(())
}

/// Reads the text file `path`, refusing one longer than `limit` bytes (`/dev/zero` as a
/// scenario must end in an error, not in an exhausted memory).
///
/// # Errors
///
/// `cannot read PATH: …`, or a file over the limit.
pub(crate) fn read_text(path: &Path, limit: u64) -> Result<String> {
    use std::io::Read;
    let shown = path.display().to_string();
    let shown = crate::text::excerpt(&shown);
    let file = fs::File::open(path).with_context(|| format!("cannot read {shown}"))?;
    let mut text = String::new();
    file.take(limit.saturating_add(1))
        .read_to_string(&mut text)
        .with_context(|| format!("cannot read {shown}"))?;
    if text.len() as u64 > limit {
        bail!(
            "cannot read {shown}: the file is larger than {}",
            crate::limits::human_bytes(u128::from(limit))
        );
    }
    Ok(text)
}

/// Writes `text` with [`write_atomic`].
pub(crate) fn write_text(path: &Path, text: &str) -> Result<()> {
    write_atomic(path, text.as_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scratch(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("warpsim-files-{}-{name}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        fs::create_dir_all(&dir).unwrap();
        dir
    }

    #[test]
    fn a_failing_write_keeps_the_previous_file_and_leaves_no_temporary() {
        let dir = scratch("failing");
        let path = dir.join("deaths.csv");
        write_text(&path, "fish,shark,time\n1,2,3\n").unwrap();
        let error = write_atomic_with(&path, |file| {
            file.write_all(b"fish,shark,time\n")?;
            Err(std::io::Error::new(
                std::io::ErrorKind::StorageFull,
                "No space left on device",
            ))
        })
        .unwrap_err();
        assert!(
            format!("{error:#}").contains("No space left on device"),
            "{error:#}"
        );
        assert_eq!(
            fs::read_to_string(&path).unwrap(),
            "fish,shark,time\n1,2,3\n"
        );
        let names: Vec<_> = fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names, [OsString::from("deaths.csv")]);
    }

    #[test]
    fn outputs_over_inputs_or_each_other_are_refused() {
        let dir = scratch("same");
        let input = dir.join("population.csv");
        fs::write(&input, "x").unwrap();
        let spelled = dir.join(".").join("population.csv");
        let files = FileSet::default()
            .input("--population", Some(&input))
            .output("--deaths", Some(&spelled));
        let error = check_outputs(&files).unwrap_err().to_string();
        assert!(
            error.contains("same file as the input --population"),
            "{error}"
        );
        let files = FileSet::default()
            .output("--deaths", Some(&dir.join("a.csv")))
            .output("--plot", Some(&dir.join("a.csv")));
        assert!(
            check_outputs(&files)
                .unwrap_err()
                .to_string()
                .contains("output --deaths")
        );
        let files = FileSet::default().output("--deaths", Some(&dir.join("no/such/d.csv")));
        assert!(
            check_outputs(&files)
                .unwrap_err()
                .to_string()
                .contains("does not exist")
        );
        let files = FileSet::default().output("--deaths", Some(&dir));
        assert!(
            check_outputs(&files)
                .unwrap_err()
                .to_string()
                .contains("is a directory")
        );
        let ok = FileSet::default()
            .input("--population", Some(&input))
            .output("--deaths", Some(&dir.join("deaths.csv")));
        check_outputs(&ok).unwrap();
        // The check leaves nothing behind.
        assert_eq!(fs::read_dir(&dir).unwrap().count(), 1);
    }
}
