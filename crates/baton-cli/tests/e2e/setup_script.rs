//! scripts/setup.sh, which the README's commands and CI run first, on the venvs it may find. A
//! stand-in `python3` on PATH makes the venv and a stand-in `pip` records what it was asked to
//! install, so these tests need neither PyPI nor minutes.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use baton_tests::write_script;

fn repository() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn write_program(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    write_script(path, text);
}

/// A checkout holding the real setup script and requirements, and a `bin/python3` that answers
/// `python3 -m venv [--clear] DIR` by making DIR/bin/{python,pip,temporal}: the `pip` logs its
/// arguments to `pip.log`, the `temporal` prints a version.
fn checkout() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let scripts = dir.path().join("scripts");
    std::fs::create_dir_all(&scripts).unwrap();
    for file in ["setup.sh", "requirements.txt"] {
        std::fs::copy(repository().join("scripts").join(file), scripts.join(file)).unwrap();
    }
    write_program(
        &dir.path().join("bin/python3"),
        r#"#!/bin/sh
[ "$1 $2" = "-m venv" ] || exit 2
shift 2
[ "$1" = "--clear" ] && { shift; rm -rf "$1"; }
echo "venv $1" >> venv.log
mkdir -p "$1/bin"
printf '#!/bin/sh\n' > "$1/bin/python"
printf '#!/bin/sh\necho "$@" >> pip.log\n' > "$1/bin/pip"
printf '#!/bin/sh\necho "temporal version test"\n' > "$1/bin/temporal"
chmod +x "$1/bin/python" "$1/bin/pip" "$1/bin/temporal"
"#,
    );
    dir
}

fn run_setup(checkout: &Path) -> Output {
    let path = format!(
        "{}:{}",
        checkout.join("bin").display(),
        std::env::var("PATH").unwrap_or_default()
    );
    Command::new("bash")
        .arg("scripts/setup.sh")
        .current_dir(checkout)
        .env("PATH", path)
        .output()
        .expect("running bash")
}

fn assert_succeeded(output: &Output) {
    assert!(
        output.status.success(),
        "setup failed: {}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
}

fn read(path: PathBuf) -> String {
    std::fs::read_to_string(path).unwrap_or_default()
}

#[test]
fn a_fresh_checkout_gets_a_venv_with_the_requirements() {
    let checkout = checkout();
    let output = run_setup(checkout.path());
    assert_succeeded(&output);
    assert_eq!(read(checkout.path().join("venv.log")), "venv .venv\n");
    assert!(read(checkout.path().join("pip.log")).contains("-r scripts/requirements.txt"));
    assert!(String::from_utf8_lossy(&output.stdout).contains("temporal version test"));
}

#[test]
fn a_venv_cut_short_before_its_pip_is_made_again() {
    let checkout = checkout();
    // What `python3 -m venv` leaves when it is stopped before it installs pip.
    write_program(&checkout.path().join(".venv/bin/python"), "#!/bin/sh\n");
    let output = run_setup(checkout.path());
    assert_succeeded(&output);
    assert_eq!(read(checkout.path().join("venv.log")), "venv .venv\n");
    assert!(read(checkout.path().join("pip.log")).contains("-r scripts/requirements.txt"));
}

#[test]
fn a_whole_venv_is_kept_and_only_topped_up() {
    let checkout = checkout();
    assert_succeeded(&run_setup(checkout.path()));
    assert_succeeded(&run_setup(checkout.path()));
    assert_eq!(
        read(checkout.path().join("venv.log")),
        "venv .venv\n",
        "the second run made the venv again"
    );
    assert_eq!(read(checkout.path().join("pip.log")).lines().count(), 2);
}
