//! Imports fixed up in the files a rewrite changes: added (already there, merged or new
//! after each language's header), removed when no longer used, re-derived by `refresh`,
//! from an op, the MCP tool or a rule's `imports` key.

use super::ast_edit;
use super::blob_at;
use super::scan_stage;
use super::stage;
use crate::util::TestRepo;

const LOGGER: &str = "import { logger } from \"./log\"";

#[test]
fn add_import_already_there_merged_or_new_after_each_header() {
    let repo = TestRepo::new();
    let files = [
        // Already imported (single quotes, an alias elsewhere): nothing added.
        (
            "have.ts",
            "import { logger } from './log';\nconsole.warn(1);\n",
        ),
        // Another name of the same module: merged.
        (
            "merge.ts",
            "import { other } from \"./log\";\n\nconsole.warn(other);\n",
        ),
        // Other imports: a new statement after them, in their quotes and semicolons.
        (
            "after.ts",
            "import a from 'a'\nimport b from 'b'\n\nconsole.warn(a, b)\n",
        ),
        ("shebang.ts", "#!/usr/bin/env node\nconsole.warn(1);\n"),
        (
            "license.ts",
            "// Copyright 2026 The Authors.\n// SPDX-License-Identifier: MIT\n\nconsole.warn(1);\n",
        ),
        ("strict.js", "\"use strict\";\nconsole.warn(1);\n"),
        // No match: no import.
        ("untouched.ts", "console.log(1);\n"),
    ];
    for (path, text) in files {
        repo.write(path, text);
    }
    repo.commit_all("init");
    let id = stage(
        &repo,
        &[
            "-p",
            "console.warn($$$A)",
            "-r",
            "logger.warn($$$A)",
            "--add-import",
            LOGGER,
        ],
    );
    let want = [
        ("have.ts", "import { logger } from './log';\nlogger.warn(1);\n"),
        ("merge.ts", "import { other, logger } from \"./log\";\n\nlogger.warn(other);\n"),
        (
            "after.ts",
            "import a from 'a'\nimport b from 'b'\nimport { logger } from './log'\n\nlogger.warn(a, b)\n",
        ),
        (
            "shebang.ts",
            "#!/usr/bin/env node\n\nimport { logger } from \"./log\";\n\nlogger.warn(1);\n",
        ),
        (
            "license.ts",
            "// Copyright 2026 The Authors.\n// SPDX-License-Identifier: MIT\n\nimport { logger } from \"./log\";\n\nlogger.warn(1);\n",
        ),
        (
            "strict.js",
            "\"use strict\";\n\nimport { logger } from \"./log\";\n\nlogger.warn(1);\n",
        ),
    ];
    for (path, text) in want {
        assert_eq!(blob_at(&repo, &id, path), text, "{path}");
    }
    // The work tree is not touched, and a file without a match gets no import.
    assert_eq!(repo.read_string("merge.ts"), files[1].1);
    let show = repo.run(&["show", "--stat", &id]);
    show.assert_code(0);
    assert!(!show.stdout.contains("untouched.ts"), "{}", show.stdout);
    repo.fsck();
}

#[test]
fn python_go_rust_and_java_headers() {
    let repo = TestRepo::new();
    repo.write(
        "a.py",
        "\"\"\"Module doc.\"\"\"\nfrom __future__ import annotations\n\nwarn(1)\n",
    );
    repo.write("b.py", "\"\"\"Module doc.\"\"\"\n\nwarn(1)\n");
    repo.write("c.py", "from log import info\n\nwarn(info)\n");
    repo.commit_all("init");
    let id = stage(
        &repo,
        &[
            "-p",
            "warn($A)",
            "-r",
            "log.warn($A)",
            "--add-import",
            "import log",
        ],
    );
    assert_eq!(
        blob_at(&repo, &id, "a.py"),
        "\"\"\"Module doc.\"\"\"\nfrom __future__ import annotations\n\nimport log\n\nlog.warn(1)\n"
    );
    assert_eq!(
        blob_at(&repo, &id, "b.py"),
        "\"\"\"Module doc.\"\"\"\n\nimport log\n\nlog.warn(1)\n"
    );
    assert_eq!(
        blob_at(&repo, &id, "c.py"),
        "import log\nfrom log import info\n\nlog.warn(info)\n"
    );

    let repo = TestRepo::new();
    repo.write("a.go", "package main\n\nfunc main() { warn(1) }\n");
    repo.write(
        "b.go",
        "package main\n\nimport \"fmt\"\n\nfunc main() { warn(fmt.Sprint(1)) }\n",
    );
    repo.write("c.rs", "//! Crate docs.\n\nfn main() { warn(1); }\n");
    repo.write("d.rs", "use log::info;\n\nfn main() { warn(info); }\n");
    repo.write(
        "E.java",
        "package a;\n\nclass E { void m() { warn(1); } }\n",
    );
    repo.commit_all("init");
    let id = stage(
        &repo,
        &[
            "-p",
            "warn($A)",
            "-r",
            "log.Print($A)",
            "--add-import",
            "\"log\"",
            "-l",
            "go",
        ],
    );
    assert_eq!(
        blob_at(&repo, &id, "a.go"),
        "package main\n\nimport \"log\"\n\nfunc main() { log.Print(1) }\n"
    );
    assert_eq!(
        blob_at(&repo, &id, "b.go"),
        "package main\n\nimport (\n\t\"fmt\"\n\t\"log\"\n)\n\nfunc main() { log.Print(fmt.Sprint(1)) }\n"
    );
    let id = stage(
        &repo,
        &[
            "-p",
            "warn($A)",
            "-r",
            "warn!($A)",
            "--add-import",
            "use log::warn;",
            "-l",
            "rust",
        ],
    );
    assert_eq!(
        blob_at(&repo, &id, "c.rs"),
        "//! Crate docs.\n\nuse log::warn;\n\nfn main() { warn!(1); }\n"
    );
    assert_eq!(
        blob_at(&repo, &id, "d.rs"),
        "use log::{info, warn};\n\nfn main() { warn!(info); }\n"
    );
    let id = stage(
        &repo,
        &[
            "-p",
            "warn($A)",
            "-r",
            "Log.warn($A)",
            "--add-import",
            "import org.log.Log;",
            "-l",
            "java",
        ],
    );
    assert_eq!(
        blob_at(&repo, &id, "E.java"),
        "package a;\n\nimport org.log.Log;\n\nclass E { void m() { Log.warn(1); } }\n"
    );
}

#[test]
fn remove_import_drops_only_what_is_no_longer_used() {
    let repo = TestRepo::new();
    repo.write(
        "a.ts",
        "import moment from \"moment\";\nimport { a, b } from \"m\";\n\nmoment(a);\n",
    );
    repo.write(
        "b.ts",
        "import moment from \"moment\";\n\nmoment(1);\nmoment.duration(2);\n",
    );
    repo.commit_all("init");
    let id = stage(
        &repo,
        &[
            "-p",
            "moment($A)",
            "-r",
            "dayjs($A)",
            "--add-import",
            "import dayjs from \"dayjs\"",
            "--remove-import",
            "moment",
            "--remove-import",
            "a",
        ],
    );
    // `a` is still used; `moment` is not.
    assert_eq!(
        blob_at(&repo, &id, "a.ts"),
        "import { a, b } from \"m\";\nimport dayjs from \"dayjs\";\n\ndayjs(a);\n"
    );
    // `moment.duration` still refers to it: the import stays.
    assert_eq!(
        blob_at(&repo, &id, "b.ts"),
        "import moment from \"moment\";\nimport dayjs from \"dayjs\";\n\ndayjs(1);\nmoment.duration(2);\n"
    );
}

#[test]
fn a_bad_import_is_an_error_and_stages_nothing() {
    let repo = TestRepo::new();
    repo.write("a.py", "warn(1)\n");
    repo.commit_all("init");
    let out = repo.run(&[
        "edit",
        "-p",
        "warn($A)",
        "-r",
        "log.warn($A)",
        "--add-import",
        "import { log } from './log'",
        "--json",
    ]);
    assert_ne!(out.code, 0, "{}", out.stdout);
    assert_eq!(out.json()["error"]["code"], "bad-import", "{}", out.stdout);
    assert!(repo.astedit_refs().is_empty());
}

#[test]
fn refresh_re_derives_the_imports() {
    let repo = TestRepo::new();
    repo.write(
        "a.ts",
        "import { other } from \"./log\";\n\nconsole.warn(other);\n",
    );
    repo.commit_all("init");
    let id = stage(
        &repo,
        &[
            "-p",
            "console.warn($$$A)",
            "-r",
            "logger.warn($$$A)",
            "--add-import",
            LOGGER,
        ],
    );
    // The file moves on away from the preview's lines; the preview is stale.
    repo.write(
        "a.ts",
        "import { other } from \"./log\";\n\nconsole.warn(other);\n\nother();\n",
    );
    repo.run(&["apply", &id]).assert_code(3);
    let out = repo.run(&["apply", &id, "--refresh", "--json"]);
    assert!(out.code == 0 || out.code == 1, "{}", out.stdout);
    let text = match out.code {
        0 => repo.read_string("a.ts"),
        _ => {
            let fresh = out.json()["refreshed"]["id"]
                .as_str()
                .expect("successor")
                .to_string();
            blob_at(&repo, &fresh, "a.ts")
        }
    };
    assert_eq!(
        text,
        "import { other, logger } from \"./log\";\n\nlogger.warn(other);\n\nother();\n"
    );
}

#[test]
fn python_kotlin_and_csharp_imports_already_there_merged_or_covered() {
    let repo = TestRepo::new();
    let files = [
        // Already imported, covered by `*`, merged into the same module's import.
        ("have.py", "from log import info, warn2\n\nwarn(info)\n"),
        ("star.py", "from log import *\n\nwarn(1)\n"),
        ("merge.py", "from log import info\n\nwarn(info)\n"),
        (
            "paren.py",
            "from log import (\n    info,\n)\n\nwarn(info)\n",
        ),
        // Another module: a new statement after it.
        ("other.py", "import os\n\nwarn(os.sep)\n"),
    ];
    for (path, text) in files {
        repo.write(path, text);
    }
    repo.write("A.kt", "package a\n\nfun m() { warn(1) }\n");
    repo.write(
        "B.kt",
        "package a\n\nimport log.Info\n\nfun m() { warn(Info) }\n",
    );
    repo.write(
        "C.cs",
        "using System;\n\nclass C { void M() { warn(1); } }\n",
    );
    repo.write("D.cs", "using Log;\n\nclass D { void M() { warn(1); } }\n");
    repo.commit_all("init");
    let id = stage(
        &repo,
        &[
            "-p",
            "warn($A)",
            "-r",
            "warn2($A)",
            "--add-import",
            "from log import warn2",
            "-l",
            "python",
        ],
    );
    let want = [
        ("have.py", "from log import info, warn2\n\nwarn2(info)\n"),
        ("star.py", "from log import *\n\nwarn2(1)\n"),
        ("merge.py", "from log import info, warn2\n\nwarn2(info)\n"),
        (
            "paren.py",
            "from log import (\n    info,\n    warn2,\n)\n\nwarn2(info)\n",
        ),
        (
            "other.py",
            "import os\n\nfrom log import warn2\n\nwarn2(os.sep)\n",
        ),
    ];
    for (path, text) in want {
        assert_eq!(blob_at(&repo, &id, path), text, "{path}");
    }
    let id = stage(
        &repo,
        &[
            "-p",
            "warn($A)",
            "-r",
            "Log.warn($A)",
            "--add-import",
            "import log.Log",
            "-l",
            "kotlin",
        ],
    );
    assert_eq!(
        blob_at(&repo, &id, "A.kt"),
        "package a\n\nimport log.Log\n\nfun m() { Log.warn(1) }\n"
    );
    assert_eq!(
        blob_at(&repo, &id, "B.kt"),
        "package a\n\nimport log.Info\nimport log.Log\n\nfun m() { Log.warn(Info) }\n"
    );
    let id = stage(
        &repo,
        &[
            "-p",
            "warn($A)",
            "-r",
            "Logger.Warn($A)",
            "--add-import",
            "using Log;",
            "-l",
            "csharp",
        ],
    );
    assert_eq!(
        blob_at(&repo, &id, "C.cs"),
        "using System;\nusing Log;\n\nclass C { void M() { Logger.Warn(1); } }\n"
    );
    assert_eq!(
        blob_at(&repo, &id, "D.cs"),
        "using Log;\n\nclass D { void M() { Logger.Warn(1); } }\n"
    );
}

#[test]
fn the_mcp_ast_edit_op_takes_imports() {
    let repo = TestRepo::new();
    repo.write(
        "a.ts",
        "import { other } from \"./log\";\n\nconsole.warn(other);\n",
    );
    repo.commit_all("init");
    let reply = ast_edit(
        &repo,
        serde_json::json!({"ops": [{
            "pattern": "console.warn($$$A)", "rewrite": "logger.warn($$$A)",
            "imports": {"add": [LOGGER]}}]}),
    );
    let result = &reply["result"];
    assert_eq!(result["isError"], false, "{reply}");
    let id = result["structuredContent"]["id"].as_str().expect("id");
    assert_eq!(
        blob_at(&repo, id, "a.ts"),
        "import { other, logger } from \"./log\";\n\nlogger.warn(other);\n"
    );
}

#[test]
fn a_rule_imports_key_in_yaml_and_toml() {
    let repo = TestRepo::new();
    repo.write(
        "rules/log.yml",
        "id: logger\nlanguage: typescript\nrule:\n  pattern: console.warn($$$A)\nfix: logger.warn($$$A)\n\
         imports:\n  add: ['import { logger } from \"./log\"']\n",
    );
    repo.write(
        "astedit.toml",
        "[[rules]]\nid = \"dayjs\"\nlanguage = \"typescript\"\nrule.pattern = \"moment($A)\"\n\
         fix = \"dayjs($A)\"\nimports.add = [\"import dayjs from 'dayjs'\"]\nimports.remove = [\"moment\"]\n",
    );
    repo.write(
        "a.ts",
        "import { other } from \"./log\";\n\nconsole.warn(other);\n",
    );
    repo.write("b.ts", "import moment from \"moment\";\n\nmoment(1);\n");
    repo.write("c.ts", "other(1);\n");
    repo.commit_all("init");
    let id = scan_stage(&repo, "rules/log.yml");
    assert_eq!(
        blob_at(&repo, &id, "a.ts"),
        "import { other, logger } from \"./log\";\n\nlogger.warn(other);\n"
    );
    repo.run(&["discard", &id]).assert_code(0);
    let id = scan_stage(&repo, "astedit.toml");
    assert_eq!(
        blob_at(&repo, &id, "b.ts"),
        "import dayjs from \"dayjs\";\n\ndayjs(1);\n"
    );
    // A malformed key is named.
    repo.write(
        "rules/bad.yml",
        "id: bad\nlanguage: typescript\nrule:\n  pattern: f($A)\nimports:\n  add: 3\n",
    );
    let out = repo.run(&["scan", "--config", "rules/bad.yml", "--json"]);
    assert!(out.stdout.contains("imports"), "{}", out.stdout);
}
