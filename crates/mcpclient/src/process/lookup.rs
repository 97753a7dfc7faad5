//! Finding a program the way a Windows shell does, so that a command written as users write
//! it starts: `npx` is `npx.cmd` and `uvx` is `uvx.exe`, found through `PATH` and `PATHEXT`.
//! Windows' own process creation appends `.exe` only, and npm's extensionless `npx` beside
//! `npx.cmd` is a shell script it cannot run.
//!
//! Each folder of `PATH` in turn is searched for the name with each extension of `PATHEXT`
//! (the name as written first when it has an extension); a name with a folder in it is looked
//! for there alone. Nothing found leaves the program as written, so a missing program fails to
//! start with the same error as anywhere else. The `PATH` searched is the one the server gets:
//! its entry's `env` when that sets one, else mcpx's, as the platform's own lookup reads it.

use std::path::{Path, PathBuf};

/// The extensions tried when `PATHEXT` is not set: `cmd.exe`'s default.
#[cfg(any(windows, test))]
const DEFAULT_PATHEXT: &str = ".COM;.EXE;.BAT;.CMD";

/// What to start for `spec`: the file its program names through `PATH` and `PATHEXT`, else the
/// program as written.
#[cfg(windows)]
pub(super) fn program(spec: &crate::StdioCommand) -> std::ffi::OsString {
    locate(spec).map_or_else(|| spec.program.clone().into(), PathBuf::into_os_string)
}

/// The folders of the `PATH` `spec`'s server gets: its entry's `env` when that sets one (the
/// name in any case: `Path` is the usual spelling on Windows), else mcpx's.
fn search_path(spec: &crate::StdioCommand) -> Vec<PathBuf> {
    let path = spec
        .env
        .iter()
        .find(|(name, _)| name.eq_ignore_ascii_case("PATH"))
        .map(|(_, value)| std::ffi::OsString::from(value))
        .or_else(|| std::env::var_os("PATH"))
        .unwrap_or_default();
    std::env::split_paths(&path).collect()
}

/// Where the program `spec` names is, found as the platform starts it: through `PATH` (and on
/// Windows `PATHEXT`, so `npx` is `npx.cmd`), an executable file on Unix; `None` when there is
/// none (for `mcpx doctor`, which says so before anything is started).
pub fn locate(spec: &crate::StdioCommand) -> Option<PathBuf> {
    let folders = search_path(spec);
    #[cfg(windows)]
    {
        let pathext = std::env::var_os("PATHEXT")
            .map(|p| p.to_string_lossy().into_owned())
            .unwrap_or_default();
        find(&spec.program, &folders, &extensions(&pathext), &|p| {
            p.is_file()
        })
    }
    #[cfg(not(windows))]
    {
        use std::os::unix::fs::PermissionsExt;
        let executable = |p: &Path| {
            p.metadata()
                .is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
        };
        let program = Path::new(&spec.program);
        if spec.program.is_empty() {
            return None;
        }
        if spec.program.contains('/') {
            return executable(program).then(|| program.to_path_buf());
        }
        folders
            .iter()
            .filter(|f| !f.as_os_str().is_empty())
            .map(|folder| folder.join(program))
            .find(|p| executable(p))
    }
}

/// The extensions of a `PATHEXT` value (`.COM;.EXE;…`), or of its default when it names none.
#[cfg(any(windows, test))]
fn extensions(pathext: &str) -> Vec<String> {
    let listed: Vec<String> = pathext
        .split(';')
        .map(str::trim)
        .filter(|e| e.starts_with('.') && e.len() > 1)
        .map(str::to_owned)
        .collect();
    if listed.is_empty() {
        return extensions(DEFAULT_PATHEXT);
    }
    listed
}

/// The first file `is_file` accepts among `program` with each of `extensions`, in `folders` in
/// turn (or where `program` says, when it names a folder).
#[cfg(any(windows, test))]
fn find(
    program: &str,
    folders: &[PathBuf],
    extensions: &[String],
    is_file: &dyn Fn(&Path) -> bool,
) -> Option<PathBuf> {
    if program.is_empty() {
        return None;
    }
    let names = || {
        let written = Path::new(program).extension().is_some();
        written
            .then(|| program.to_owned())
            .into_iter()
            .chain(extensions.iter().map(|e| format!("{program}{e}")))
    };
    let named_folder = program.contains(['/', '\\'])
        || Path::new(program).has_root()
        || program.as_bytes().get(1) == Some(&b':');
    if named_folder {
        return names().map(PathBuf::from).find(|p| is_file(p));
    }
    folders
        .iter()
        .filter(|f| !f.as_os_str().is_empty())
        .flat_map(|folder| names().map(move |name| folder.join(name)))
        .find(|p| is_file(p))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What `find` finds for `program` among `files`, with `/` between folders whatever the
    /// platform joins them with.
    fn found(program: &str, folders: &[&str], files: &[&str]) -> Option<String> {
        let folders: Vec<PathBuf> = folders.iter().map(PathBuf::from).collect();
        let plain = |p: &str| p.replace('\\', "/").to_lowercase();
        // Windows' file systems ignore case.
        let exists = |p: &Path| {
            let p = plain(&p.display().to_string());
            files.iter().any(|f| plain(f) == p)
        };
        find(program, &folders, &extensions(""), &exists)
            .map(|p| p.display().to_string().replace('\\', "/"))
    }

    #[test]
    fn a_bare_name_takes_the_first_folder_with_any_extension_in_pathext_order() {
        let files = [
            "nodejs/npx",
            "nodejs/npx.cmd",
            "nodejs/npx.ps1",
            "bin/npx.exe",
        ];
        assert_eq!(
            found("npx", &["nodejs", "bin"], &files).as_deref(),
            Some("nodejs/npx.CMD"),
            "npm's extensionless shell script is never taken"
        );
        assert_eq!(
            found("npx", &["bin", "nodejs"], &files).as_deref(),
            Some("bin/npx.EXE")
        );
        let both = ["d/uvx.bat", "d/uvx.exe"];
        assert_eq!(found("uvx", &["d"], &both).as_deref(), Some("d/uvx.EXE"));
    }

    #[test]
    fn a_name_with_an_extension_is_taken_as_written_first() {
        let files = ["d/server.py.exe", "d/server.py", "d/tool.cmd"];
        assert_eq!(
            found("server.py", &["d"], &files).as_deref(),
            Some("d/server.py")
        );
        assert_eq!(
            found("tool.cmd", &["d"], &files).as_deref(),
            Some("d/tool.cmd")
        );
    }

    #[test]
    fn a_name_with_a_folder_is_looked_for_there_alone() {
        let files = [r"C:\tools\srv.cmd", "d/srv.exe", "rel/x.bat"];
        assert_eq!(
            found(r"C:\tools\srv", &["d"], &files).as_deref(),
            Some("C:/tools/srv.CMD")
        );
        assert_eq!(found("rel/x", &["d"], &files).as_deref(), Some("rel/x.BAT"));
        assert_eq!(found("./srv", &["d"], &files), None);
    }

    #[test]
    fn nothing_found_leaves_the_program_as_written() {
        assert_eq!(found("missing", &["d", ""], &["d/other.exe"]), None);
        assert_eq!(found("", &["d"], &["d/.exe"]), None);
    }

    #[test]
    fn pathext_is_read_as_listed_and_defaults_when_empty() {
        assert_eq!(extensions(".EXE; .CMD;;x"), [".EXE", ".CMD"]);
        assert_eq!(extensions(""), [".COM", ".EXE", ".BAT", ".CMD"]);
    }
}
