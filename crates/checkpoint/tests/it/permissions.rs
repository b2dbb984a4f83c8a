//! The shadow repositories copy workspace files: their root is owner-only, new or old.
#![cfg(unix)]

use crate::common;

use std::os::unix::fs::PermissionsExt;

use common::Fixture;

fn mode(path: &std::path::Path) -> u32 {
    std::fs::metadata(path).unwrap().permissions().mode() & 0o777
}

#[test]
fn the_checkpoint_root_is_private_and_an_old_one_is_tightened() {
    let fx = Fixture::new();
    fx.write("secret.txt", "token=abc");
    drop(fx.open());
    assert_eq!(mode(&fx.config.root), 0o700);

    std::fs::set_permissions(&fx.config.root, std::fs::Permissions::from_mode(0o755)).unwrap();
    drop(fx.open());
    assert_eq!(mode(&fx.config.root), 0o700);
}
