//! Unit tests of the analysis; the engine-level and real-bash tests are in
//! `crates/policy/tests/`.

use super::*;

fn names(cmd: &str) -> Vec<Option<String>> {
    analyze(cmd).commands.into_iter().map(|c| c.name).collect()
}

fn texts(cmd: &str) -> Vec<String> {
    split_commands(cmd)
}

fn proven(cmd: &str) -> bool {
    analyze(cmd).is_proven()
}

fn n(v: &[&str]) -> Vec<Option<String>> {
    v.iter().map(|s| Some((*s).to_owned())).collect()
}

#[test]
fn lists_every_command_in_order() {
    assert_eq!(
        texts("a && b || c; d | e & f\ng |& h"),
        ["a", "b", "c", "d", "e", "f", "g", "h"]
    );
    assert_eq!(
        texts("echo \"today: $(date; rm x)\" && ls"),
        ["echo \"today: $(date; rm x)\"", "date", "rm x", "ls"]
    );
    assert_eq!(
        texts("diff <(ls a) >(cat)"),
        ["diff <(ls a) >(cat)", "ls a", "cat"]
    );
    assert_eq!(
        names("if grep -q x f; then rm f; else ls; fi"),
        n(&["grep", "rm", "ls"])
    );
    assert_eq!(
        names("f() { rm x; }; (cd a && make) | { tee l; }"),
        n(&["rm", "cd", "make", "tee"])
    );
    assert_eq!(
        names("for f in *; do rm \"$f\"; done; while true; do sleep 1; done"),
        n(&["rm", "true", "sleep"])
    );
    assert_eq!(names("case $x in a) rm a;; *) ls;; esac"), n(&["rm", "ls"]));
    assert_eq!(names("cat <<EOF\n$(rm x)\nEOF"), n(&["cat", "rm"]));
    assert_eq!(
        names("echo ${x:-$(rm x)} > $(mktemp)"),
        n(&["echo", "rm", "mktemp"])
    );
    assert!(texts("").is_empty());
}

#[test]
fn quoted_heredocs_and_comments_run_nothing() {
    assert_eq!(names("cat <<'EOF'\n$(rm x) '\nEOF"), n(&["cat"]));
    assert!(proven("cat <<'EOF'\n$(rm x) '\nEOF"));
    assert_eq!(names("ls # ; rm x"), n(&["ls"]));
    assert!(proven("echo 'a && b' # rm"));
}

#[test]
fn review_attacks_are_found() {
    // Each of these ran `touch` with only echo and cat allowed.
    assert_eq!(
        names("echo \"$'\" ; touch ../x ; echo \"'\""),
        n(&["echo", "touch", "echo"])
    );
    assert_eq!(
        names("echo $(echo)#; touch ../x"),
        n(&["echo", "echo", "touch"])
    );
    assert_eq!(
        names("echo <(echo)#; touch ../x"),
        n(&["echo", "echo", "touch"])
    );
    assert_eq!(
        names("cat <<EOF\n'\nEOF\ntouch ../x\necho '"),
        n(&["cat", "touch", "echo"])
    );
    assert!(!proven("echo ${x:='a[$(touch ../x)]'} $((x))"));
}

#[test]
fn wrappers_list_their_inner_commands() {
    let a = analyze("find . -name '*.o' -exec rm {} + | xargs -0 -n1 rm -f");
    let listed: Vec<_> = a
        .commands
        .iter()
        .map(|c| (c.name.clone(), c.text.clone()))
        .collect();
    assert_eq!(
        listed,
        [
            (
                Some("find".into()),
                "find . -name '*.o' -exec rm {} +".into()
            ),
            (Some("rm".into()), "rm {}".into()),
            (Some("xargs".into()), "xargs -0 -n1 rm -f".into()),
            (Some("rm".into()), "rm -f".into()),
        ]
    );
    assert!(a.is_proven(), "{:?}", a.unproven);
    assert_eq!(names("bash -c 'rm x; ls'"), n(&["bash", "rm", "ls"]));
    assert_eq!(
        names("sudo -u me env A=1 nice -n 5 rm x"),
        n(&["sudo", "env", "nice", "rm"])
    );
    assert_eq!(names("eval 'rm x'"), n(&["eval", "rm"]));
    assert_eq!(names("trap 'rm x' EXIT"), n(&["trap", "rm"]));
    assert_eq!(
        names("timeout 5 sh -c \"touch a\""),
        n(&["timeout", "sh", "touch"])
    );
    assert!(proven("bash -c 'rm x; ls'"));
    for dynamic in [
        "eval \"$c\"",
        "bash -c \"$c\"",
        "trap \"$c\" EXIT",
        "xargs sh -c \"$c\"",
    ] {
        assert!(!proven(dynamic), "{dynamic}");
    }
    // Depth is bounded.
    let mut deep = "rm x".to_owned();
    for _ in 0..10 {
        deep = format!("eval {}", shell_quote(&deep));
    }
    assert!(!proven(&deep));
}

fn shell_quote(s: &str) -> String {
    format!("'{}'", s.replace('\'', "'\\''"))
}

#[test]
fn what_cannot_be_proven() {
    for cmd in [
        "echo 'unclosed",
        "echo $((x + 1))",
        "((x++))",
        "for ((i=0; i<n; i++)); do :; done",
        "let x=y",
        "[[ $a -eq 1 ]]",
        "echo ${a[i]}",
        "a[i]=1",
        "echo ${x:i:2}",
        "declare -i n=x",
        "printf -v 'a[$(id)]' x",
        "read 'a[$(id)]'",
        "echo ${!ref}",
        "echo ${x@P}",
        "source ./env.sh",
        ". ./env.sh",
        "alias ls=rm",
        "shopt -s expand_aliases",
        "set -o posix",
        "PATH=. cat x",
        "export PATH=.",
        "IFS=, read -r a b",
        "export -f f",
        "BASH_ENV=x bash -c 'ls'",
        "hash -p /bin/rm ls",
        "$cmd x",
        "\"$@\"",
        "x=(1 [$(id)]=2)",
        "echo `echo \\`id\\``",
        "echo \"${x:-'$(id)'}\"",
        "bash script.sh",
        "env -S 'rm x'",
        "ec\\\nho hi",
    ] {
        assert!(!proven(cmd), "should be unproven: {cmd}");
    }
}

#[test]
fn what_is_proven() {
    for cmd in [
        "echo hi | cat",
        "cat a b 2>&1",
        "echo x > /dev/null",
        "cat <<'EOF'\nx\nEOF",
        "X=1; echo $X",
        "echo $((1 + 2)) ${#x} ${a[@]} ${x:1:2}",
        "[[ -f x ]] && [[ $a == b ]]",
        "set -euo pipefail; ls",
        "git log --oneline | head -5",
        "for f in *.rs; do wc -l \"$f\"; done",
    ] {
        let a = analyze(cmd);
        assert!(a.is_proven(), "{cmd}: {:?}", a.unproven);
    }
}

#[test]
fn file_redirections() {
    let redirs = |cmd: &str| -> Vec<Vec<String>> {
        analyze(cmd)
            .commands
            .into_iter()
            .map(|c| c.file_redirections)
            .collect()
    };
    assert_eq!(redirs("echo a > f 2>&1"), [vec!["f".to_owned()]]);
    assert_eq!(
        redirs("echo a >> f; cat < g"),
        [vec!["f".to_owned()], vec!["g".to_owned()]]
    );
    assert_eq!(redirs("echo a &> f"), [vec!["f".to_owned()]]);
    assert_eq!(redirs("echo a >&f"), [vec!["f".to_owned()]]);
    assert_eq!(redirs("exec >log"), [vec!["log".to_owned()]]);
    assert_eq!(
        redirs("echo a > /dev/null 2>/dev/stderr 3>&- 1>&2 <<EOF\nb\nEOF"),
        [Vec::<String>::new()]
    );
    assert_eq!(redirs("cat <<<x"), [Vec::<String>::new()]);
    assert_eq!(
        redirs("{ ls; pwd; } > out"),
        [vec!["out".to_owned()], vec!["out".to_owned()]]
    );
    // The text includes the redirection, as written.
    assert_eq!(texts("echo pwned > ~/f"), ["echo pwned > ~/f"]);
}

#[test]
fn root_commands_skip_assignments() {
    assert_eq!(
        root_command("A=1 B=\"x y\" make -j4").as_deref(),
        Some("make")
    );
    assert_eq!(root_command("\"my tool\" --x").as_deref(), Some("my tool"));
    assert_eq!(root_command("A=1; ls").as_deref(), Some("ls"));
    assert_eq!(root_command("A=1"), None);
}

#[test]
fn words_the_grammar_splits_are_one_word() {
    // `''0'>(T)'` is the code `0>(T)`: one word, `0/dev/fd/63`.
    assert!(!proven("0>(T)"));
    assert!(!proven("sh -c ''0'>(T)'"));
    // The code of `-c` with a substitution glued on is not static.
    assert!(!proven("sh -c '\\ #$()'>(\\;)"));
    assert!(!proven("x | sh -c ''\\x$(x)'e'"));
    // Glued static parts are concatenated as bash does.
    let a = analyze("sh -c 'rm x; l'\\s");
    assert!(a.is_proven(), "{a:?}");
    assert_eq!(names("sh -c 'rm x; l'\\s"), n(&["sh", "rm", "ls"]));
    assert_eq!(names("''ls -la"), n(&["ls"]));
    assert!(proven("git commit -m\"a b\" --author='x <y>'"));
}

#[test]
fn here_documents_the_grammar_may_misread_are_unproven() {
    for cmd in [
        "x=`h<<'EOF'\n`\nEOF\n`",
        "x=\"`t<<EOF\n`dirs`\nEOF\ndirs`\"",
        "\"\"`t<<'EOF'\n`$()\nEOF\n`",
        "x=`cat <<EOF\nhi\nEOF\n`",
        "x=$(cat <<'EOF'\n`rm x`\nEOF\n)",
        "xargs <<\\EOF\n\\\nEOF\nxargs <<EOF\n$(coproc f)\nEOF",
        "xargs <<EOF\n$(coproc f)\nEOF",
        "o \"$(c<<'EOF'\n\tEOF\nEOFe)\"",
        "cat <<EOF\n\tEOF\nEOF",
        // Bash 5.2 runs a `$(...)` from its own printed copy, which joins
        // the commands after a here-document (`e;f` runs `e f`, and this
        // one runs `a`; fuzz seed 35).
        "k $(t <<\"EOF\"\nEOF\ne;case x in(a)esac)",
        "k $(t <<EOF\nEOF\ne;f)",
        "k <(t <<EOF\nEOF\ne;f)",
        "k $(t <<EOF; e;f\nEOF\n)",
    ] {
        assert!(!proven(cmd), "{cmd:?}");
    }
    for cmd in [
        "cat <<'EOF'\nrm x\nEOF",
        "cat <<-EOF\n\tline\n\tEOF",
        "x=$(cat <<EOF\nhi\nEOF\n)",
        "cat <<EOF | grep x\nhi\nEOF",
        "git commit -m \"$(cat <<'EOF'\nfix: a thing\n\nwhy\nEOF\n)\"",
        "k $(e; t <<EOF\nEOF\n) ; e;f",
    ] {
        assert!(proven(cmd), "{cmd:?}: {:?}", analyze(cmd));
    }
}

#[test]
fn tokens_the_grammar_ends_elsewhere_are_unproven() {
    // The grammar's `$'...'` goes on past `\\'` (to it `x=...` is one
    // assignment, which needs no rule); `[""\ =]]` is one word to bash,
    // the glob command name `[ =]]` (fuzz seed 33, 1,000,000 cases).
    for cmd in [
        r"x=$'\\' touch ../x #'",
        r"x=$'\\' \'",
        r"x=$'\\' '\'''",
        r#"''&[""\ =]]"#,
        "[\n a ]",
    ] {
        assert!(!proven(cmd), "{cmd:?}: {:?}", analyze(cmd));
    }
    for cmd in [
        r"echo $'a\'b' $'\\'",
        "[ -f x ] && [[ -n $'y' ]]",
        // The second reading names a part without its substitutions.
        "x=$(git rev-parse HEAD)",
        r#"x=`date +%s` y="$(id -u)" make"#,
        "A=1 \\\n  make",
    ] {
        assert!(proven(cmd), "{cmd:?}: {:?}", analyze(cmd));
    }
}

#[test]
fn words_the_grammar_reads_across_a_blank_are_unproven() {
    // The grammar reads `x=$ r` as `x=$r`; bash assigns `$` and runs `r`.
    for cmd in ["x=$ r", "A=$ B=1 r", "x=$\tr", "$ rm x", "sudo $ rm x"] {
        assert!(!proven(cmd), "{cmd:?}: {:?}", analyze(cmd));
    }
    assert!(proven("echo a\\ b $x"));
}

#[test]
fn code_strings_get_the_second_reading_too() {
    // The grammar reads no substitution in `` `i` `` in a here-document
    // body; in `-c` code only the second reading of the code itself sees it.
    for cmd in [
        "c<<EOF\n`i`\nEOF",
        "env sh -c 'c<<EOF\n`i`\nEOF\nc ((s))'''''';(for x;do done)'&{ d $(t);}",
        "c ((s))",
        "c (s)",
    ] {
        assert!(!proven(cmd), "{cmd:?}: {:?}", analyze(cmd));
    }
    assert!(proven("bash -c 'git status && ls -la 2>&1'"));
}

#[test]
fn text_the_grammar_skips_is_unproven() {
    // tree-sitter-bash skips `\<newline> ` and `\ ` as blanks here; bash
    // reads `x=` then runs `e`, and runs the command ` `.
    for cmd in ["x=\\\n e", "\"\"\\ >/", "\"\"\\ x"] {
        assert!(!proven(cmd), "{cmd:?}: {:?}", analyze(cmd));
    }
    for cmd in [
        "a\\ b",
        "ls \\\n  -la",
        "make \\\n\tall > log 2>&1",
        "x=1 \\\n y",
    ] {
        assert!(proven(cmd), "{cmd:?}: {:?}", analyze(cmd));
    }
}

#[test]
fn escaped_blanks_comments_and_words_after_a_target_are_unproven() {
    for cmd in [
        "''\\ x>.",
        "c ''\\ #''&\"\"",
        "trap o>/dev/l EXIT",
        "ls > f a b",
    ] {
        assert!(!proven(cmd), "{cmd:?}: {:?}", analyze(cmd));
    }
    for cmd in [
        "ls # list",
        "git status\n# done\nls",
        "( cd a && make ) # x",
        "echo 'a # b' > out.txt",
    ] {
        assert!(proven(cmd), "{cmd:?}: {:?}", analyze(cmd));
    }
}

#[test]
fn here_documents_are_read_by_bashs_rules() {
    // Issue 33: the grammar took `cat;` for the delimiter and ended a body
    // at a line that only starts with it; bash ran the `touch`.
    for cmd in [
        "cat <<cat;\ncat\ntime touch ../x\ncat;",
        "cat <<cat&\ncat\ntime touch ../x\ncat;",
        "cat <<cat|cat\ncat\ntime touch ../x\ncat;",
        "cat <<cat\ncat;echo '$(time touch ../x)'\ncat",
        "cat <<cat\ncat | cat '${x:-$(time touch ../x)}'\ncat",
        "cat <<cat\ncat;echo '$(coproc touch ../x)'\ncat",
        "cat <<EOF\nEO\\\nF\ntouch ../x\nEOF",
        "cat <<EOF\nEOF \ntouch ../x\nEOF",
        "cat <<EOF\n\tEOF\necho '$(touch ../x)'\nEOF",
        "cat <<$x\nbody\n$x",
    ] {
        let a = analyze(cmd);
        assert!(!a.is_proven(), "{cmd:?}: {a:?}");
    }
    // What models write every day stays proven.
    for cmd in [
        "cat <<EOF > notes.md\n# Notes\n\nsome text\nEOF",
        "cat <<'EOF' | grep -v x\na\nx\nEOF",
        "git commit -m \"$(cat <<'EOF'\nfix: a thing\n\nbody\nEOF\n)\"",
        "cat <<EOF\nhello $(date)\nEOF\necho ok",
        "cat <<-EOF\n\tindented\n\tEOF",
        "cat <<EOF\ncat;x\nEOF",
    ] {
        assert!(proven(cmd), "{cmd:?}: {:?}", analyze(cmd));
    }
    assert_eq!(
        names("cat <<A\n$(rm a)\nA\necho b"),
        n(&["cat", "rm", "echo"])
    );
}

#[test]
fn keywords_before_a_command_do_not_hide_it() {
    for cmd in [
        "time touch ../x",
        "time -p touch ../x",
        "! time touch ../x",
        "coproc touch ../x",
        "case a in a) touch ../x;; esac",
        "f() { touch ../x; }; f",
    ] {
        let a = analyze(cmd);
        assert!(
            a.commands
                .iter()
                .any(|c| c.name.as_deref() == Some("touch"))
                || !a.is_proven(),
            "{cmd:?}: {a:?}"
        );
    }
}

/// Each construct nested `depth` times around `inner`.
fn nested(depth: usize) -> Vec<String> {
    vec![
        format!("echo {}a{}", "${x:-".repeat(depth), "}".repeat(depth)),
        format!("echo {}1{}", "$((".repeat(depth), "))".repeat(depth)),
        format!("echo {}a{}", "$(".repeat(depth), ")".repeat(depth)),
        format!(
            "echo \"{}a{}\"",
            "$(echo \"".repeat(depth),
            "\")".repeat(depth)
        ),
        format!("echo {}a{}", "${x:-\"".repeat(depth), "\"}".repeat(depth)),
        format!(
            "{}echo{}",
            "if true; then ".repeat(depth),
            "; fi".repeat(depth)
        ),
        format!("{}echo{}", "(".repeat(depth), ")".repeat(depth)),
        format!("{}echo;{}", "{ ".repeat(depth), " }".repeat(depth)),
        format!("echo {}", "<(echo ".repeat(depth) + &")".repeat(depth)),
    ]
}

#[test]
fn deep_nesting_is_unproven_not_a_crash() {
    // Issue 33: 6,000 to 10,000 levels overflowed the stack and aborted
    // the process. The analysis runs on tokio's worker threads (2 MiB of
    // stack); this is a debug build, whose frames are the largest.
    let handle = std::thread::Builder::new()
        .stack_size(2 << 20)
        .spawn(|| {
            for cmd in nested(10_000) {
                let a = analyze(&cmd);
                let shape: String = cmd.chars().take(30).collect();
                assert!(!a.is_proven(), "{shape}: {:?}", a.unproven);
                assert!(
                    a.unproven.len() <= 16,
                    "{shape}: {} reasons",
                    a.unproven.len()
                );
                assert!(
                    a.unproven.iter().all(|r| r.chars().count() <= 161),
                    "{shape}: a reason quotes the whole command"
                );
            }
        })
        .unwrap();
    handle.join().expect("the analysis did not crash");
}

#[test]
fn moderate_nesting_is_still_analysed() {
    let a = analyze(&format!("echo {}a{}", "$(echo ".repeat(20), ")".repeat(20)));
    assert!(a.is_proven(), "{a:?}");
    assert_eq!(a.commands.len(), 21);
}
