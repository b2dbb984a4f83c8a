use super::*;

/// What the kernel would return for a call: the program run by a small interpreter of the
/// instructions it uses, on a `struct seccomp_data` laid out as the kernel does.
fn run(arch: u32, nr: u32, args: [u64; 6]) -> u32 {
    let mut data = [0u8; 64];
    data[0..4].copy_from_slice(&nr.to_le_bytes());
    data[4..8].copy_from_slice(&arch.to_le_bytes());
    for (i, arg) in args.iter().enumerate() {
        data[16 + 8 * i..24 + 8 * i].copy_from_slice(&arg.to_le_bytes());
    }
    let program = program();
    let mut acc: u32 = 0;
    let mut pc = 0usize;
    loop {
        let i = program[pc];
        pc += 1;
        match i.code {
            LD_W_ABS => {
                let at = i.k as usize;
                acc = u32::from_le_bytes(data[at..at + 4].try_into().unwrap());
            }
            JEQ_K | JGE_K | JSET_K => {
                let taken = match i.code {
                    JEQ_K => acc == i.k,
                    JGE_K => acc >= i.k,
                    _ => acc & i.k != 0,
                };
                pc += usize::from(if taken { i.jt } else { i.jf });
            }
            RET_K => return i.k,
            other => panic!("unexpected opcode {other:#x}"),
        }
    }
}

fn call(nr: i64, args: [u64; 6]) -> u32 {
    run(AUDIT_ARCH, super::nr(nr), args)
}

const EPERM: u32 = RET_ERRNO | libc::EPERM as u32;
const ENOSYS: u32 = RET_ERRNO | libc::ENOSYS as u32;

#[test]
fn the_bytes_are_whole_instructions_ending_in_a_return() {
    let program = program();
    let bytes = bytes();
    assert_eq!(bytes.len(), program.len() * 8);
    assert!(program.len() < 4096, "BPF_MAXINSNS");
    // First: load the architecture (offset 4), little-endian fields.
    assert_eq!(&bytes[0..8], &[0x20, 0, 0, 0, 4, 0, 0, 0]);
    assert_eq!(program.last().map(|i| i.code), Some(RET_K));
    for (at, i) in program.iter().enumerate() {
        assert!(
            matches!(i.code, LD_W_ABS | JEQ_K | JGE_K | JSET_K | RET_K),
            "{at}: {i:?}"
        );
        if i.code != RET_K && i.code != LD_W_ABS {
            // Every jump lands inside the program.
            assert!(
                at + 1 + usize::from(i.jt.max(i.jf)) < program.len(),
                "{at}: {i:?}"
            );
        }
        if i.code == LD_W_ABS {
            assert!(i.k < 64 && i.k % 4 == 0, "{at}: {i:?}");
        }
    }
    let again = bytes.chunks(8).map(|c| Instruction {
        code: u16::from_le_bytes([c[0], c[1]]),
        jt: c[2],
        jf: c[3],
        k: u32::from_le_bytes([c[4], c[5], c[6], c[7]]),
    });
    assert!(again.eq(program.iter().copied()));
}

#[test]
fn a_foreign_abi_is_killed() {
    // i386 (int 0x80 on x86_64) and AArch32 on aarch64; any other.
    for arch in [0x4000_0003, 0x4000_0028, 0, 0xC000_00F3] {
        assert_eq!(run(arch, 0, [0; 6]), RET_KILL_PROCESS, "{arch:#x}");
    }
    #[cfg(target_arch = "x86_64")]
    {
        // x32: the x86_64 arch with bit 30 in the number.
        assert_eq!(run(AUDIT_ARCH, 0x4000_0000 | 39, [0; 6]), RET_KILL_PROCESS);
        assert_eq!(run(AUDIT_ARCH, u32::MAX, [0; 6]), RET_KILL_PROCESS);
    }
}

#[test]
fn every_listed_call_is_eperm() {
    for (name, number) in denied() {
        assert_eq!(call(number, [0; 6]), EPERM, "{name}");
        assert_eq!(call(number, [u64::MAX; 6]), EPERM, "{name}");
    }
    assert_eq!(denied().len(), 40);
}

#[test]
fn clone3_is_enosys_so_libc_falls_back_to_clone() {
    assert_eq!(call(libc::SYS_clone3, [0; 6]), ENOSYS);
}

#[test]
fn ordinary_calls_are_allowed() {
    for number in [
        libc::SYS_read,
        libc::SYS_write,
        libc::SYS_openat,
        libc::SYS_execve,
        libc::SYS_wait4,
        libc::SYS_connect,
        libc::SYS_chroot,
        libc::SYS_prctl,
        libc::SYS_seccomp,
    ] {
        assert_eq!(call(number, [0; 6]), RET_ALLOW, "{number}");
    }
}

#[test]
fn terminal_injection_ioctls_are_refused_on_their_low_32_bits() {
    let ioctl = libc::SYS_ioctl;
    assert_eq!(call(ioctl, [0, TIOCSTI.into(), 0, 0, 0, 0]), EPERM);
    assert_eq!(call(ioctl, [0, TIOCLINUX.into(), 0, 0, 0, 0]), EPERM);
    // High bits the kernel ignores do not get it through.
    assert_eq!(call(ioctl, [0, 0xdead_0000_0000_5412, 0, 0, 0, 0]), EPERM);
    assert_eq!(call(ioctl, [0, 0x1_0000_541C, 0, 0, 0, 0]), EPERM);
    // Other requests (TCGETS, FIONREAD, TIOCGWINSZ) pass.
    for request in [0x5401u64, 0x541B, 0x5413] {
        assert_eq!(
            call(ioctl, [1, request, 0, 0, 0, 0]),
            RET_ALLOW,
            "{request:#x}"
        );
    }
}

#[test]
fn clone_with_a_namespace_flag_is_refused() {
    let clone = libc::SYS_clone;
    // fork (SIGCHLD), vfork-like spawn, a thread.
    for flags in [0x11u64, 0x4111, 0x3d0f00] {
        assert_eq!(call(clone, [flags, 0, 0, 0, 0, 0]), RET_ALLOW, "{flags:#x}");
    }
    for flag in [
        libc::CLONE_NEWNS,
        libc::CLONE_NEWCGROUP,
        libc::CLONE_NEWUTS,
        libc::CLONE_NEWIPC,
        libc::CLONE_NEWUSER,
        libc::CLONE_NEWPID,
        libc::CLONE_NEWNET,
    ] {
        let flags = (flag as u64) | 0x11;
        assert_eq!(call(clone, [flags, 0, 0, 0, 0, 0]), EPERM, "{flag:#x}");
        // The kernel takes the low 32 bits: high garbage changes nothing.
        assert_eq!(
            call(clone, [flags | 0xffff_0000_0000_0000, 0, 0, 0, 0, 0]),
            EPERM
        );
    }
    assert_eq!(CLONE_NEW_MASK & 0xff, 0, "the exit signal bits stay free");
}

#[test]
fn personality_allows_only_linux_and_the_query() {
    let personality = libc::SYS_personality;
    assert_eq!(call(personality, [0, 0, 0, 0, 0, 0]), RET_ALLOW);
    assert_eq!(call(personality, [0xffff_ffff, 0, 0, 0, 0, 0]), RET_ALLOW);
    // ADDR_NO_RANDOMIZE, READ_IMPLIES_EXEC, PER_LINUX32.
    for value in [0x0004_0000u64, 0x0040_0000, 0x0008] {
        assert_eq!(
            call(personality, [value, 0, 0, 0, 0, 0]),
            EPERM,
            "{value:#x}"
        );
    }
}

#[test]
fn vsock_sockets_are_refused_other_families_not() {
    for number in [libc::SYS_socket, libc::SYS_socketpair] {
        assert_eq!(call(number, [AF_VSOCK.into(), 1, 0, 0, 0, 0]), EPERM);
        for family in [
            libc::AF_UNIX,
            libc::AF_INET,
            libc::AF_INET6,
            libc::AF_NETLINK,
        ] {
            assert_eq!(call(number, [family as u64, 1, 0, 0, 0, 0]), RET_ALLOW);
        }
    }
}
