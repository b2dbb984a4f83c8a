//! The seccomp filter as bubblewrap installs it: each refused system call, called from Python
//! inside the sandbox, fails with the filter's errno; a harmless subset called outside shows the
//! kernel would have answered otherwise (so the errno is the filter's, not the kernel's).

mod support;

use std::collections::BTreeMap;

use support::{Fixture, PYTHON};

/// (name, number, arguments) of the calls to try. Arguments are harmless (null pointers,
/// invalid descriptors): were the filter missing, the kernel would refuse or do nothing.
fn calls() -> Vec<(&'static str, i64, [i64; 3])> {
    vec![
        ("ptrace", libc::SYS_ptrace, [16, 999_999_999, 0]),
        (
            "process_vm_readv",
            libc::SYS_process_vm_readv,
            [999_999_999, 0, 0],
        ),
        (
            "process_vm_writev",
            libc::SYS_process_vm_writev,
            [999_999_999, 0, 0],
        ),
        ("pidfd_getfd", libc::SYS_pidfd_getfd, [-1, 0, 0]),
        ("kcmp", libc::SYS_kcmp, [999_999_999, 999_999_999, 0]),
        ("perf_event_open", libc::SYS_perf_event_open, [0, 0, -1]),
        ("bpf", libc::SYS_bpf, [-1, 0, 0]),
        ("userfaultfd", libc::SYS_userfaultfd, [-1, 0, 0]),
        ("keyctl", libc::SYS_keyctl, [0, 0, 0]),
        ("add_key", libc::SYS_add_key, [0, 0, 0]),
        ("request_key", libc::SYS_request_key, [0, 0, 0]),
        ("mount", libc::SYS_mount, [0, 0, 0]),
        ("umount2", libc::SYS_umount2, [0, 0, 0]),
        ("pivot_root", libc::SYS_pivot_root, [0, 0, 0]),
        ("move_mount", libc::SYS_move_mount, [-1, 0, -1]),
        ("open_tree", libc::SYS_open_tree, [-1, 0, 0]),
        ("open_tree_attr", 467, [-1, 0, 0]),
        ("mount_setattr", libc::SYS_mount_setattr, [-1, 0, 0]),
        ("fsopen", libc::SYS_fsopen, [0, 0, 0]),
        ("fsmount", libc::SYS_fsmount, [-1, 0, 0]),
        ("fsconfig", libc::SYS_fsconfig, [-1, 0, 0]),
        ("fspick", libc::SYS_fspick, [-1, 0, 0]),
        ("unshare", libc::SYS_unshare, [0, 0, 0]),
        ("setns", libc::SYS_setns, [-1, 0, 0]),
        ("init_module", libc::SYS_init_module, [0, 0, 0]),
        ("finit_module", libc::SYS_finit_module, [-1, 0, 0]),
        ("delete_module", libc::SYS_delete_module, [0, 0, 0]),
        ("kexec_load", libc::SYS_kexec_load, [0, 1, 0]),
        ("kexec_file_load", libc::SYS_kexec_file_load, [-1, -1, 0]),
        ("reboot", libc::SYS_reboot, [0, 0, 0]),
        ("swapon", libc::SYS_swapon, [0, 0, 0]),
        ("swapoff", libc::SYS_swapoff, [0, 0, 0]),
        ("acct", libc::SYS_acct, [1, 0, 0]),
        ("quotactl", libc::SYS_quotactl, [0, 0, 0]),
        ("quotactl_fd", libc::SYS_quotactl_fd, [-1, 0, 0]),
        ("open_by_handle_at", libc::SYS_open_by_handle_at, [-1, 0, 0]),
        ("name_to_handle_at", libc::SYS_name_to_handle_at, [-1, 0, 0]),
        ("io_uring_setup", libc::SYS_io_uring_setup, [0, 0, 0]),
        ("io_uring_enter", libc::SYS_io_uring_enter, [-1, 0, 0]),
        ("io_uring_register", libc::SYS_io_uring_register, [-1, 0, 0]),
        // Refused by their arguments.
        ("ioctl TIOCSTI", libc::SYS_ioctl, [0, 0x5412, 0]),
        (
            "ioctl TIOCSTI high bits",
            libc::SYS_ioctl,
            [0, 0x1_0000_5412, 0],
        ),
        ("ioctl TIOCLINUX", libc::SYS_ioctl, [0, 0x541C, 0]),
        ("clone NEWUSER", libc::SYS_clone, [0x1000_0011, 0, 0]),
        ("clone NEWNS", libc::SYS_clone, [0x0002_0011, 0, 0]),
        ("clone NEWNET", libc::SYS_clone, [0x4000_0011, 0, 0]),
        (
            "personality ADDR_NO_RANDOMIZE",
            libc::SYS_personality,
            [0x0004_0000, 0, 0],
        ),
        ("socket AF_VSOCK", libc::SYS_socket, [40, 1, 0]),
        ("clone3", libc::SYS_clone3, [0, 0, 0]),
    ]
}

/// A Python program printing `name errno` (0: the call returned ≥ 0) for each call.
fn script(calls: &[(&str, i64, [i64; 3])]) -> String {
    let mut py = String::from(
        "import ctypes\nl = ctypes.CDLL(None, use_errno=True)\nl.syscall.restype = ctypes.c_long\n\
         def t(name, nr, a, b, c):\n    ctypes.set_errno(0)\n    \
         r = l.syscall(ctypes.c_long(nr), ctypes.c_long(a), ctypes.c_long(b), ctypes.c_long(c), ctypes.c_long(0), ctypes.c_long(0))\n    \
         print(name + '=' + str(0 if r >= 0 else ctypes.get_errno()), flush=True)\n",
    );
    for (name, nr, [a, b, c]) in calls {
        py.push_str(&format!("t({name:?}, {nr}, {a}, {b}, {c})\n"));
    }
    py
}

fn parse(output: &str) -> BTreeMap<String, i32> {
    output
        .lines()
        .filter_map(|l| l.split_once('='))
        .filter_map(|(k, v)| Some((k.to_owned(), v.trim().parse().ok()?)))
        .collect()
}

#[test]
fn every_refused_call_gets_the_filters_errno() {
    let _s = sandbox_or_skip!();
    let f = Fixture::new();
    let calls = calls();
    std::fs::write(f.ws.join("calls.py"), script(&calls)).unwrap();
    let run = f.run(&format!("{PYTHON} calls.py"));
    assert_eq!(run.code, Some(0), "{run:?}");
    let got = parse(&run.output);
    for (name, _, _) in &calls {
        let want = if *name == "clone3" {
            libc::ENOSYS
        } else {
            libc::EPERM
        };
        assert_eq!(got.get(*name), Some(&want), "{name}: {}", run.output);
    }
}

#[test]
fn outside_the_sandbox_the_kernel_answers_otherwise() {
    let _s = sandbox_or_skip!();
    let f = Fixture::new();
    // Only calls that are harmless when they are not filtered.
    let safe = [
        "ptrace",
        "process_vm_readv",
        "unshare",
        "setns",
        "open_tree",
        "io_uring_setup",
        "clone3",
        "ioctl TIOCSTI",
        "ioctl TIOCSTI high bits",
        "pidfd_getfd",
    ];
    let calls: Vec<_> = calls()
        .into_iter()
        .filter(|(n, _, _)| safe.contains(n))
        .collect();
    std::fs::write(f.ws.join("calls.py"), script(&calls)).unwrap();
    let out = std::process::Command::new(PYTHON)
        .arg(f.ws.join("calls.py"))
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    let got = parse(&String::from_utf8_lossy(&out.stdout));
    eprintln!("outside: {got:?}");
    assert_eq!(got.len(), safe.len(), "{got:?}");
    for (name, errno) in got {
        let filtered = if name == "clone3" {
            libc::ENOSYS
        } else {
            libc::EPERM
        };
        assert_ne!(
            errno, filtered,
            "{name} answers the same outside: the test would prove nothing"
        );
    }
}

#[test]
fn allowed_calls_still_work() {
    let _s = sandbox_or_skip!();
    let f = Fixture::new();
    let run = f.run(&format!(
        "{PYTHON} -c 'import os, threading, ctypes; t = threading.Thread(target=lambda: None); t.start(); t.join(); \
         p = os.fork(); os._exit(0) if p == 0 else os.waitpid(p, 0); \
         l = ctypes.CDLL(None, use_errno=True); assert l.personality(0xffffffff) == 0; \
         import socket; socket.socketpair(); print(\"ok\")'"
    ));
    assert_eq!(run.code, Some(0), "{run:?}");
    assert_eq!(run.output.trim(), "ok");
}

#[cfg(target_arch = "x86_64")]
#[test]
fn a_foreign_abi_kills_the_process() {
    let _s = sandbox_or_skip!();
    let f = Fixture::new();
    // x32: getpid with the x32 bit.
    let run = f.run(&format!(
        "{PYTHON} -c 'import ctypes; ctypes.CDLL(None).syscall(0x40000027)'; echo \"status $?\""
    ));
    assert!(
        run.output
            .contains(&format!("status {}", 128 + libc::SIGSYS)),
        "{run:?}"
    );
    // i386 through int 0x80: getpid is 20 there.
    std::fs::write(
        f.ws.join("i386.c"),
        "int main(void) { long r; __asm__ volatile (\"int $0x80\" : \"=a\"(r) : \"a\"(20L)); return r > 0 ? 0 : 1; }\n",
    )
    .unwrap();
    let run = f.run("cc -o i386 i386.c && ./i386; echo \"status $?\"");
    assert!(
        run.output
            .contains(&format!("status {}", 128 + libc::SIGSYS)),
        "{run:?}"
    );
    // The same program outside the sandbox gets its pid.
    let out = std::process::Command::new(f.ws.join("i386"))
        .status()
        .unwrap();
    assert!(out.success());
}
