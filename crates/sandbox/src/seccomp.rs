//! The seccomp filter every sandboxed command runs under, as a classic BPF program.
//!
//! bubblewrap installs it (`--seccomp FD`) right before it executes the command, after setting
//! `no_new_privs`; its own setup (mounts, namespaces) is done by then, so the filter may forbid
//! everything the command itself must not do. The namespaces and the read-only mounts are the
//! confinement; the filter removes the kernel interfaces that would let a command undo them or
//! reach outside: the mount API, new namespaces, ptrace and its relatives, the kernel keyring,
//! io_uring (whose operations bypass this filter), terminal input injection, kernel modules…
//!
//! Written by hand (no libseccomp): a fixed list of syscall numbers of the build target, a few
//! argument checks, and the layout of `struct seccomp_data` (`nr` at 0, `arch` at 4, the
//! arguments at 16 + 8·i, the low 32 bits first on these little-endian targets).
//!
//! Denied calls fail with `EPERM` (so a program sees "Operation not permitted" and goes on),
//! except `clone3`, which fails with `ENOSYS`: the C libraries then fall back to `clone`, whose
//! flags are a register this filter can read (`clone3` takes them in memory, out of its reach).
//! A call from another architecture's ABI (32-bit `int 0x80` on x86_64, AArch32 on aarch64, the
//! x32 ABI) kills the process: those tables have other numbers, so nothing here would hold.

/// This build has the filter (see `lib.rs` for the others).
pub const SUPPORTED: bool = true;

/// One instruction of a classic BPF program (`struct sock_filter`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Instruction {
    pub code: u16,
    pub jt: u8,
    pub jf: u8,
    pub k: u32,
}

// Opcodes (linux/bpf_common.h): class | size | mode, or class | operation | source.
/// BPF_LD | BPF_W | BPF_ABS (0x00 | 0x00 | 0x20): load 32 bits at a fixed offset.
pub const LD_W_ABS: u16 = 0x20;
/// BPF_JMP | BPF_JEQ | BPF_K (0x05 | 0x10 | 0x00).
pub const JEQ_K: u16 = 0x15;
/// BPF_JMP | BPF_JGE | BPF_K (0x05 | 0x30 | 0x00), unsigned (the x32 check).
#[cfg_attr(not(target_arch = "x86_64"), allow(dead_code))]
pub const JGE_K: u16 = 0x35;
/// BPF_JMP | BPF_JSET | BPF_K (0x05 | 0x40 | 0x00): any of the bits set.
pub const JSET_K: u16 = 0x45;
/// BPF_RET | BPF_K (0x06 | 0x00).
pub const RET_K: u16 = 0x06;

// Results (linux/seccomp.h).
pub const RET_KILL_PROCESS: u32 = 0x8000_0000;
pub const RET_ERRNO: u32 = 0x0005_0000;
pub const RET_ALLOW: u32 = 0x7fff_0000;

// Offsets in `struct seccomp_data`.
const OFFSET_NR: u32 = 0;
const OFFSET_ARCH: u32 = 4;
/// The low 32 bits of argument `i` (little-endian).
const fn arg_low(i: u32) -> u32 {
    16 + 8 * i
}

/// `AUDIT_ARCH_*` of the build target: EM_X86_64 / EM_AARCH64, 64-bit, little-endian.
#[cfg(target_arch = "x86_64")]
pub const AUDIT_ARCH: u32 = 0xC000_003E;
#[cfg(target_arch = "aarch64")]
pub const AUDIT_ARCH: u32 = 0xC000_00B7;

/// x86_64 system calls with this bit set in their number are the x32 ABI's.
#[cfg(target_arch = "x86_64")]
const X32_SYSCALL_BIT: u32 = 0x4000_0000;

/// `TIOCSTI` pushes bytes into a terminal's input (the shell that reads it runs them, outside
/// the sandbox); `TIOCLINUX` can do the same on a Linux console (TIOCL_SETSEL/PASTESEL). The
/// same numbers on x86_64 and aarch64. What `--new-session` guards against, without moving the
/// command out of the caller's process group.
pub const TIOCSTI: u32 = 0x5412;
pub const TIOCLINUX: u32 = 0x541C;

/// Every `CLONE_NEW*` flag `clone` takes: NEWNS, NEWCGROUP, NEWUTS, NEWIPC, NEWUSER, NEWPID,
/// NEWNET. (`CLONE_NEWTIME`, 0x80, exists only for `clone3` and `unshare`: in `clone`'s flags
/// that bit is part of the exit signal.)
pub const CLONE_NEW_MASK: u32 = 0x0002_0000 // CLONE_NEWNS
    | 0x0200_0000 // CLONE_NEWCGROUP
    | 0x0400_0000 // CLONE_NEWUTS
    | 0x0800_0000 // CLONE_NEWIPC
    | 0x1000_0000 // CLONE_NEWUSER
    | 0x2000_0000 // CLONE_NEWPID
    | 0x4000_0000; // CLONE_NEWNET

/// `personality` values allowed: `PER_LINUX` (0) and the query `0xffffffff`. Anything else
/// (`ADDR_NO_RANDOMIZE`, `READ_IMPLIES_EXEC`, other personalities) is `EPERM`: turning ASLR off
/// or making data executable only weakens what runs next.
pub const PERSONALITY_ALLOWED: [u32; 2] = [0, 0xffff_ffff];

/// `AF_VSOCK`: sockets to the hypervisor host. A network namespace does not isolate them, so
/// in a virtual machine (WSL2, cloud VMs) they reach services outside the sandbox whatever the
/// network policy; refused in both.
pub const AF_VSOCK: u32 = 40;

/// `open_tree_attr` (Linux 6.15; not in libc yet). System calls numbered from 424 on have the
/// same number on every architecture.
const SYS_OPEN_TREE_ATTR: i64 = 467;

/// The system calls refused with `EPERM`, whatever their arguments, and why.
pub fn denied() -> Vec<(&'static str, i64)> {
    vec![
        // Reading or changing other processes (the caller's, if one were visible).
        ("ptrace", libc::SYS_ptrace),
        ("process_vm_readv", libc::SYS_process_vm_readv),
        ("process_vm_writev", libc::SYS_process_vm_writev),
        ("pidfd_getfd", libc::SYS_pidfd_getfd),
        ("kcmp", libc::SYS_kcmp),
        // Large kernel attack surfaces with a long record of privilege escalations.
        ("perf_event_open", libc::SYS_perf_event_open),
        ("bpf", libc::SYS_bpf),
        ("userfaultfd", libc::SYS_userfaultfd),
        // The kernel keyring is not namespaced: it can hold the user's other secrets.
        ("keyctl", libc::SYS_keyctl),
        ("add_key", libc::SYS_add_key),
        ("request_key", libc::SYS_request_key),
        // The mount API: the read-only and hidden mounts must stay as bubblewrap left them.
        ("mount", libc::SYS_mount),
        ("umount2", libc::SYS_umount2),
        ("pivot_root", libc::SYS_pivot_root),
        ("move_mount", libc::SYS_move_mount),
        ("open_tree", libc::SYS_open_tree),
        ("open_tree_attr", SYS_OPEN_TREE_ATTR),
        ("mount_setattr", libc::SYS_mount_setattr),
        ("fsopen", libc::SYS_fsopen),
        ("fsmount", libc::SYS_fsmount),
        ("fsconfig", libc::SYS_fsconfig),
        ("fspick", libc::SYS_fspick),
        // New namespaces: a new user namespace would give back every capability, and with
        // them the mount API.
        ("unshare", libc::SYS_unshare),
        ("setns", libc::SYS_setns),
        // The machine itself.
        ("init_module", libc::SYS_init_module),
        ("finit_module", libc::SYS_finit_module),
        ("delete_module", libc::SYS_delete_module),
        ("kexec_load", libc::SYS_kexec_load),
        ("kexec_file_load", libc::SYS_kexec_file_load),
        ("reboot", libc::SYS_reboot),
        ("swapon", libc::SYS_swapon),
        ("swapoff", libc::SYS_swapoff),
        ("acct", libc::SYS_acct),
        ("quotactl", libc::SYS_quotactl),
        ("quotactl_fd", libc::SYS_quotactl_fd),
        // File handles open a file by inode number, past the mounts that hide it.
        ("open_by_handle_at", libc::SYS_open_by_handle_at),
        ("name_to_handle_at", libc::SYS_name_to_handle_at),
        // io_uring performs operations (open, connect, socket…) this filter never sees.
        ("io_uring_setup", libc::SYS_io_uring_setup),
        ("io_uring_enter", libc::SYS_io_uring_enter),
        ("io_uring_register", libc::SYS_io_uring_register),
    ]
}

/// A program being assembled, with jumps to labels resolved when it is finished.
struct Assembler {
    code: Vec<(u16, Jump, Jump, u32)>,
    labels: Vec<Option<usize>>,
}

#[derive(Clone, Copy)]
enum Jump {
    Next,
    To(usize),
}

impl Assembler {
    fn new() -> Self {
        Self {
            code: Vec::new(),
            labels: Vec::new(),
        }
    }

    fn label(&mut self) -> usize {
        self.labels.push(None);
        self.labels.len() - 1
    }

    fn bind(&mut self, label: usize) {
        if let Some(slot) = self.labels.get_mut(label) {
            *slot = Some(self.code.len());
        }
    }

    fn load(&mut self, offset: u32) {
        self.code.push((LD_W_ABS, Jump::Next, Jump::Next, offset));
    }

    fn jump(&mut self, code: u16, k: u32, jt: Jump, jf: Jump) {
        self.code.push((code, jt, jf, k));
    }

    fn ret(&mut self, k: u32) {
        self.code.push((RET_K, Jump::Next, Jump::Next, k));
    }

    /// The instructions; `None` if a label was never bound or a jump is out of reach (a
    /// classic BPF jump is a forward offset of at most 255): a bug of this file, which the
    /// tests catch.
    fn finish(self) -> Option<Vec<Instruction>> {
        let mut out = Vec::with_capacity(self.code.len());
        for (at, (code, jt, jf, k)) in self.code.iter().copied().enumerate() {
            let offset = |jump: Jump| -> Option<u8> {
                match jump {
                    Jump::Next => Some(0),
                    Jump::To(label) => {
                        let target = (*self.labels.get(label)?)?;
                        u8::try_from(target.checked_sub(at + 1)?).ok()
                    }
                }
            };
            out.push(Instruction {
                code,
                jt: offset(jt)?,
                jf: offset(jf)?,
                k,
            });
        }
        Some(out)
    }
}

/// The filter's program.
pub fn program() -> Vec<Instruction> {
    let mut a = Assembler::new();
    let kill = a.label();
    let eperm = a.label();
    let enosys = a.label();
    let ioctl = a.label();
    let clone = a.label();
    let personality = a.label();
    let socket = a.label();

    // The architecture first: syscall numbers mean nothing in another ABI's table.
    a.load(OFFSET_ARCH);
    a.jump(JEQ_K, AUDIT_ARCH, Jump::Next, Jump::To(kill));
    a.load(OFFSET_NR);
    #[cfg(target_arch = "x86_64")]
    a.jump(JGE_K, X32_SYSCALL_BIT, Jump::To(kill), Jump::Next);

    a.jump(JEQ_K, nr(libc::SYS_clone3), Jump::To(enosys), Jump::Next);
    a.jump(JEQ_K, nr(libc::SYS_ioctl), Jump::To(ioctl), Jump::Next);
    a.jump(JEQ_K, nr(libc::SYS_clone), Jump::To(clone), Jump::Next);
    a.jump(
        JEQ_K,
        nr(libc::SYS_personality),
        Jump::To(personality),
        Jump::Next,
    );
    a.jump(JEQ_K, nr(libc::SYS_socket), Jump::To(socket), Jump::Next);
    a.jump(
        JEQ_K,
        nr(libc::SYS_socketpair),
        Jump::To(socket),
        Jump::Next,
    );
    for (_, number) in denied() {
        a.jump(JEQ_K, nr(number), Jump::To(eperm), Jump::Next);
    }
    a.ret(RET_ALLOW);

    // ioctl(fd, request, …): `request` is an `unsigned int` to the kernel, so only its low 32
    // bits count (comparing all 64 would let 0x1_0000_5412 through).
    a.bind(ioctl);
    a.load(arg_low(1));
    a.jump(JEQ_K, TIOCSTI, Jump::To(eperm), Jump::Next);
    a.jump(JEQ_K, TIOCLINUX, Jump::To(eperm), Jump::Next);
    a.ret(RET_ALLOW);

    // clone(flags, …): the kernel reads the low 32 bits of `flags` (x86_64 and aarch64 both
    // take them first).
    a.bind(clone);
    a.load(arg_low(0));
    a.jump(JSET_K, CLONE_NEW_MASK, Jump::To(eperm), Jump::Next);
    a.ret(RET_ALLOW);

    // personality(persona): an `unsigned int`.
    let allow = a.label();
    a.bind(personality);
    a.load(arg_low(0));
    for value in PERSONALITY_ALLOWED {
        a.jump(JEQ_K, value, Jump::To(allow), Jump::Next);
    }
    a.ret(RET_ERRNO | libc::EPERM as u32);
    a.bind(allow);
    a.ret(RET_ALLOW);

    // socket(domain, …) and socketpair(domain, …): an `int`.
    a.bind(socket);
    a.load(arg_low(0));
    a.jump(JEQ_K, AF_VSOCK, Jump::To(eperm), Jump::Next);
    a.ret(RET_ALLOW);

    a.bind(eperm);
    a.ret(RET_ERRNO | libc::EPERM as u32);
    a.bind(enosys);
    a.ret(RET_ERRNO | libc::ENOSYS as u32);
    a.bind(kill);
    a.ret(RET_KILL_PROCESS);

    // The program is fixed: a failure here is a bug of this file, caught by the tests; a
    // program that kills every call keeps even that case on the refusing side.
    a.finish().unwrap_or_else(|| {
        vec![Instruction {
            code: RET_K,
            jt: 0,
            jf: 0,
            k: RET_KILL_PROCESS,
        }]
    })
}

/// A system call number as the filter compares it (`seccomp_data.nr` is a 32-bit int).
fn nr(number: i64) -> u32 {
    // Every number of these tables is small and positive.
    u32::try_from(number).unwrap_or(u32::MAX)
}

/// The program as bubblewrap reads it: `struct sock_filter` after `struct sock_filter`, 8 bytes
/// each, in the machine's (little-endian) byte order.
pub fn bytes() -> Vec<u8> {
    program()
        .iter()
        .flat_map(|i| {
            let mut b = [0u8; 8];
            b[0..2].copy_from_slice(&i.code.to_le_bytes());
            b[2] = i.jt;
            b[3] = i.jf;
            b[4..8].copy_from_slice(&i.k.to_le_bytes());
            b
        })
        .collect()
}

#[cfg(test)]
mod tests;
