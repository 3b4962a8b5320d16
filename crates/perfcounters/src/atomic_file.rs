//! Output files that appear under their name only when complete, the one way the crate writes a
//! file atomically (capture directories, Parquet files, the files of a dataset).
//!
//! A file is written under a hidden temporary name in the directory of its final name
//! (`.NAME.tmp-XXXXXX`), then given that name: replacing a file already there (a rename), or
//! refusing to (a rename that fails when the name exists, or a hard link where the file system has
//! none). A file dropped or failed before that is removed, so an error never leaves a partial file
//! behind. The file is created with the permissions of an ordinary new file (`0o666` less the
//! umask on Unix), not the owner-only ones of a temporary file.

use std::ffi::OsString;
use std::fs::File;
use std::io::{self, Write};
use std::path::{Path, PathBuf};

use tempfile::{Builder, TempPath};

/// A file being written under a temporary name beside `target`; dropped before
/// [`commit`](Self::commit), it removes the temporary file.
#[derive(Debug)]
pub(crate) struct PendingFile {
    temp: TempPath,
    target: PathBuf,
}

impl PendingFile {
    /// Creates a new temporary file for `target` in the same directory, and the file to write.
    pub(crate) fn create(target: &Path) -> io::Result<(PendingFile, File)> {
        let dir = match target.parent() {
            Some(dir) if !dir.as_os_str().is_empty() => dir,
            _ => Path::new("."),
        };
        let name = target
            .file_name()
            .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "no file name"))?;
        let mut prefix = OsString::from(".");
        prefix.push(name);
        prefix.push(".tmp-");
        let mut builder = Builder::new();
        builder.prefix(&prefix);
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            builder.permissions(std::fs::Permissions::from_mode(0o666));
        }
        let (file, temp) = builder.tempfile_in(dir)?.into_parts();
        Ok((
            PendingFile {
                temp,
                target: target.to_owned(),
            },
            file,
        ))
    }

    /// The temporary file's path.
    #[cfg_attr(not(feature = "arrow"), allow(dead_code))] // used by datasets
    pub(crate) fn temp_path(&self) -> &Path {
        &self.temp
    }

    /// The final name.
    #[cfg_attr(not(feature = "arrow"), allow(dead_code))] // used by datasets
    pub(crate) fn target(&self) -> &Path {
        &self.target
    }

    /// Gives the file its final name. With `replace`, a file of that name is replaced (atomically,
    /// by a rename); without, an existing file is an error and stays as it was. On an error the
    /// temporary file is removed.
    pub(crate) fn commit(self, replace: bool) -> io::Result<()> {
        let PendingFile { temp, target } = self;
        if replace {
            return temp.persist(&target).map_err(|e| e.error);
        }
        match temp.persist_noclobber(&target) {
            Ok(()) => Ok(()),
            Err(e) if e.error.kind() == io::ErrorKind::AlreadyExists => Err(io::Error::new(
                io::ErrorKind::AlreadyExists,
                format!("{} exists and is left alone", target.display()),
            )),
            // A file system with neither a no-replace rename nor hard links: rename when nothing is
            // there (the check and the rename are not one step).
            Err(e) if !target.exists() => e.path.persist(&target).map_err(|e| e.error),
            Err(e) => Err(e.error),
        }
    }
}

/// Writes `bytes` to `path` atomically (see the [module documentation](self)), replacing a file of
/// that name.
pub(crate) fn write_file(path: &Path, bytes: &[u8]) -> io::Result<()> {
    let (pending, mut file) = PendingFile::create(path)?;
    file.write_all(bytes)?;
    file.sync_all()?;
    drop(file);
    pending.commit(true)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;

    fn names(dir: &Path) -> Vec<String> {
        let mut names: Vec<String> = fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        names
    }

    #[test]
    fn a_file_appears_only_when_committed() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("out.bin");
        let (pending, mut file) = PendingFile::create(&target).unwrap();
        file.write_all(b"data").unwrap();
        drop(file);
        assert!(!target.exists());
        let temp = pending.temp_path().to_owned();
        let temp_name = temp.file_name().unwrap().to_string_lossy().into_owned();
        assert!(temp_name.starts_with(".out.bin.tmp-"), "{temp_name}");
        assert_eq!(temp.parent(), Some(dir.path()));
        assert_eq!(pending.target(), target);
        pending.commit(false).unwrap();
        assert_eq!(fs::read(&target).unwrap(), b"data");
        assert_eq!(names(dir.path()), ["out.bin"]);
    }

    #[test]
    fn dropped_or_refused_files_leave_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("out.bin");
        let (pending, file) = PendingFile::create(&target).unwrap();
        // Windows removes a file when its last handle closes: the writer's handle first.
        drop(file);
        drop(pending);
        assert!(names(dir.path()).is_empty());

        fs::write(&target, b"old").unwrap();
        let (pending, mut file) = PendingFile::create(&target).unwrap();
        file.write_all(b"new").unwrap();
        drop(file);
        let e = pending.commit(false).unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::AlreadyExists);
        assert!(e.to_string().contains("exists and is left alone"), "{e}");
        assert_eq!(fs::read(&target).unwrap(), b"old");
        assert_eq!(names(dir.path()), ["out.bin"]);

        let (pending, mut file) = PendingFile::create(&target).unwrap();
        file.write_all(b"new").unwrap();
        pending.commit(true).unwrap();
        assert_eq!(fs::read(&target).unwrap(), b"new");
        assert_eq!(names(dir.path()), ["out.bin"]);
    }

    #[test]
    fn write_file_replaces_and_fails_cleanly() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("a.txt");
        write_file(&target, b"one").unwrap();
        write_file(&target, b"two").unwrap();
        assert_eq!(fs::read(&target).unwrap(), b"two");
        // A directory cannot be replaced by a file: the error leaves no temporary file.
        fs::create_dir(dir.path().join("d")).unwrap();
        fs::write(dir.path().join("d/x"), b"").unwrap();
        assert!(write_file(&dir.path().join("d"), b"three").is_err());
        assert_eq!(names(dir.path()), ["a.txt", "d"]);
        // No such directory.
        assert!(write_file(&dir.path().join("missing/a.txt"), b"").is_err());
    }

    #[cfg(unix)]
    #[test]
    fn files_have_an_ordinary_files_permissions() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let plain = dir.path().join("plain");
        File::create(&plain).unwrap();
        let target = dir.path().join("atomic");
        write_file(&target, b"").unwrap();
        let mode = |p: &Path| fs::metadata(p).unwrap().permissions().mode();
        assert_eq!(mode(&target), mode(&plain));
    }
}
