//! Imports that vanished or broke a file (issue 53 items 3 and 8): a name used only
//! as a member is unused, a Python string annotation uses its names, a removed or
//! deleted import leaves no blank line out of place, a name merged into a multi-line
//! import gets a line of its own.

use crate::util::TestRepo;

fn blob_at(repo: &TestRepo, id: &str, path: &str) -> String {
    repo.git(&["cat-file", "blob", &format!("refs/astedit/{id}:{path}")])
}

/// Stages `edit ARGS` in `repo` and returns the preview id.
fn stage(repo: &TestRepo, args: &[&str]) -> String {
    let mut all = vec!["edit"];
    all.extend_from_slice(args);
    all.push("--json");
    let out = repo.run(&all);
    out.assert_code(0);
    out.json()["id"].as_str().expect("an id").to_string()
}

#[test]
fn remove_import_fires_once_only_a_member_has_the_name() {
    let repo = TestRepo::new();
    repo.write(
        "a.ts",
        "import { isArray, isString } from \"@vue/shared\";\n\n\
         export const f = (x: unknown) => isArray(x) || isString(x);\n",
    );
    repo.commit_all("init");
    let id = stage(
        &repo,
        &[
            "-p",
            "isArray($X)",
            "-r",
            "Array.isArray($X)",
            "--remove-import",
            "isArray",
        ],
    );
    assert_eq!(
        blob_at(&repo, &id, "a.ts"),
        "import { isString } from \"@vue/shared\";\n\n\
         export const f = (x: unknown) => Array.isArray(x) || isString(x);\n"
    );
}

#[test]
fn remove_import_keeps_a_name_a_string_annotation_uses() {
    let repo = TestRepo::new();
    repo.write(
        "users.py",
        "from typing import Dict, List\n\nfrom .models import User\n\n\n\
         def all_users() -> \"List[User]\":\n    return Dict()\n",
    );
    repo.commit_all("init");
    let id = stage(
        &repo,
        &[
            "-p",
            "Dict()",
            "-r",
            "[]",
            "--remove-import",
            "Dict",
            "--remove-import",
            "List",
            "--remove-import",
            "User",
        ],
    );
    assert_eq!(
        blob_at(&repo, &id, "users.py"),
        "from typing import List\n\nfrom .models import User\n\n\n\
         def all_users() -> \"List[User]\":\n    return []\n"
    );
}

#[test]
fn a_file_s_only_import_goes_without_a_leading_blank_line() {
    let repo = TestRepo::new();
    repo.write("a.py", "import os\n\nx = os.sep\n");
    repo.commit_all("init");
    let id = stage(
        &repo,
        &["-p", "os.sep", "-r", "\"/\"", "--remove-import", "os"],
    );
    assert_eq!(blob_at(&repo, &id, "a.py"), "x = \"/\"\n");
    repo.run(&["discard", &id]).assert_code(0);
    // Deleted by the rewrite itself: its line and the blank line after it.
    let id = stage(&repo, &["-p", "import os", "-r", ""]);
    assert_eq!(blob_at(&repo, &id, "a.py"), "x = os.sep\n");
}

#[test]
fn a_name_merged_into_a_multi_line_import_gets_its_own_line() {
    let repo = TestRepo::new();
    repo.write(
        "a.ts",
        "import {\n  isArray,\n  isObject,\n} from \"@vue/shared\";\n\nconsole.warn(isArray, isObject);\n",
    );
    repo.commit_all("init");
    let id = stage(
        &repo,
        &[
            "-p",
            "console.warn($$$A)",
            "-r",
            "warn($$$A)",
            "--add-import",
            "import { warn } from \"@vue/shared\"",
        ],
    );
    assert_eq!(
        blob_at(&repo, &id, "a.ts"),
        "import {\n  isArray,\n  isObject,\n  warn,\n} from \"@vue/shared\";\n\nwarn(isArray, isObject);\n"
    );
}

/// The id of the preview `scan --stage --json` staged.
fn scan_stage(repo: &TestRepo, config: &str) -> String {
    scan_staged(repo, config).0
}

/// The id of the preview `scan --stage --json` staged, and its JSON.
fn scan_staged(repo: &TestRepo, config: &str) -> (String, serde_json::Value) {
    let out = repo.run(&["scan", "--stage", "--config", config, "--json"]);
    assert!(
        out.code == 0 || out.code == 1,
        "{}\n{}",
        out.stdout,
        out.stderr
    );
    let v = out.json();
    let id = v["id"]
        .as_str()
        .or_else(|| v["staged"]["id"].as_str())
        .unwrap_or_else(|| panic!("an id in {v}"))
        .to_string();
    (id, v)
}

/// The paths a preview changes.
fn staged_paths(repo: &TestRepo, id: &str) -> Vec<String> {
    let tree = format!("refs/astedit/{id}");
    repo.git(&["ls-tree", "-r", "--name-only", &tree])
        .lines()
        .map(str::to_string)
        .collect()
}

#[test]
fn a_rule_s_import_uses_a_metavariable_its_transform_makes() {
    let repo = TestRepo::new();
    repo.write(
        "rules/tasks.yml",
        "id: tasks\nlanguage: typescript\nrule:\n  pattern: legacy.$F($$$A)\n\
         transform:\n  NAME:\n    convert:\n      source: $F\n      toCase: pascalCase\n\
         fix: $NAME.run($$$A)\nimports:\n  add: [\"import { $NAME } from './tasks'\"]\n",
    );
    repo.write(
        "a.ts",
        "import { other } from \"./tasks\";\n\nlegacy.send_mail(other);\nlegacy.parse_args(1);\n",
    );
    repo.commit_all("init");
    let id = scan_stage(&repo, "rules/tasks.yml");
    assert_eq!(
        blob_at(&repo, &id, "a.ts"),
        "import { other, SendMail, ParseArgs } from \"./tasks\";\n\n\
         SendMail.run(other);\nParseArgs.run(1);\n"
    );
    // A metavariable the rule neither captures nor makes is an error, not a skip.
    repo.write(
        "rules/bad.yml",
        "id: bad\nlanguage: typescript\nrule:\n  pattern: legacy.$F($$$A)\nfix: $F($$$A)\n\
         imports:\n  add: [\"import { $NAME } from './tasks'\"]\n",
    );
    let out = repo.run(&["scan", "--config", "rules/bad.yml", "--json"]);
    assert_ne!(out.code, 0);
    assert!(
        out.stdout.contains("imports") && out.stdout.contains("$NAME"),
        "{}",
        out.stdout
    );
}

/// ruff, from `ASTEDIT_RUFF` or PATH; `None` (the check skipped with a message) without
/// it, unless ASTEDIT_REQUIRE_RUFF is set (`.ci/run` installs it and sets both).
pub(crate) fn ruff() -> Option<std::path::PathBuf> {
    let found = std::env::var_os("ASTEDIT_RUFF")
        .map(std::path::PathBuf::from)
        .or_else(|| {
            let path = std::env::var_os("PATH")?;
            std::env::split_paths(&path)
                .map(|d| d.join("ruff"))
                .find(|p| p.is_file())
        });
    if found.is_none() {
        assert!(
            std::env::var_os("ASTEDIT_REQUIRE_RUFF").is_none(),
            "ASTEDIT_REQUIRE_RUFF is set and ruff is neither ASTEDIT_RUFF nor on PATH"
        );
        eprintln!("ruff not found: the import-order check is skipped");
    }
    found
}

#[test]
fn add_import_in_a_grouped_python_file_goes_into_its_group() {
    let grouped = "from __future__ import annotations\n\n\
        import os\nfrom typing import List\n\n\
        import requests\n\n\
        from myapp import models\n\n\
        from . import views\n\n\
        print(os, List, requests, models, views)\n";
    let repo = TestRepo::new();
    repo.write("myapp/__init__.py", "");
    repo.write("myapp/api.py", grouped);
    repo.commit_all("init");
    let id = stage(
        &repo,
        &[
            "-p",
            "print($$$A)",
            "-r",
            "log($$$A, sys, sleep, httpx, db)",
            "--add-import",
            "import sys",
            "--add-import",
            "from time import sleep",
            "--add-import",
            "import httpx",
            "--add-import",
            "from myapp.db import db",
        ],
    );
    let after = blob_at(&repo, &id, "myapp/api.py");
    assert_eq!(
        after,
        "from __future__ import annotations\n\n\
         import os\nimport sys\nfrom time import sleep\nfrom typing import List\n\n\
         import httpx\nimport requests\n\n\
         from myapp import models\nfrom myapp.db import db\n\n\
         from . import views\n\n\
         log(os, List, requests, models, views, sys, sleep, httpx, db)\n"
    );
    // ruff's import order (I001) holds on the file as staged.
    let Some(ruff) = ruff() else { return };
    let args = ["check", "--no-cache", "--isolated", "--select", "I"];
    passes(&repo, &ruff, &args, "myapp/api.py", &after);
}

/// Asserts that `tool ARGS -- PATH` passes on `text` written at `path` in `repo`.
pub(crate) fn passes(
    repo: &TestRepo,
    tool: &std::path::Path,
    args: &[&str],
    path: &str,
    text: &str,
) {
    repo.write(path, text);
    let out = std::process::Command::new(tool)
        .args(args)
        .arg("--")
        .arg(path)
        .current_dir(repo.path())
        .output()
        .expect("the tool runs");
    assert!(
        out.status.success(),
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn rel_path_is_written_relative_to_each_changed_file() {
    let repo = TestRepo::new();
    repo.write("packages/runtime-core/src/a.ts", "console.warn(1);\n");
    repo.write(
        "packages/runtime-core/src/helpers/b.ts",
        "console.warn(2);\n",
    );
    repo.write("packages/shared/src/c.ts", "console.warn(3);\n");
    repo.write("app/api/views.py", "print(1)\n");
    repo.write("app/main.py", "print(2)\n");
    repo.commit_all("init");
    let id = stage(
        &repo,
        &[
            "-p",
            "console.warn($A)",
            "-r",
            "warn($A)",
            "--add-import",
            "import { warn } from '{rel:packages/shared/src/warning}'",
        ],
    );
    for (path, module) in [
        ("packages/runtime-core/src/a.ts", "../../shared/src/warning"),
        (
            "packages/runtime-core/src/helpers/b.ts",
            "../../../shared/src/warning",
        ),
        ("packages/shared/src/c.ts", "./warning"),
    ] {
        let text = blob_at(&repo, &id, path);
        assert!(
            text.starts_with(&format!("import {{ warn }} from '{module}';\n\n")),
            "{path}: {text}"
        );
    }
    let id = stage(
        &repo,
        &[
            "-p",
            "print($A)",
            "-r",
            "warn($A)",
            "--add-import",
            "from {rel:app/log.py} import warn",
        ],
    );
    assert_eq!(
        blob_at(&repo, &id, "app/api/views.py"),
        "from ..log import warn\n\nwarn(1)\n"
    );
    assert_eq!(
        blob_at(&repo, &id, "app/main.py"),
        "from .log import warn\n\nwarn(2)\n"
    );
    // A path that leaves the repository's root is refused; nothing is staged.
    let out = repo.run(&[
        "edit",
        "-p",
        "print($A)",
        "-r",
        "warn($A)",
        "--add-import",
        "from {rel:../log} import warn",
        "--json",
    ]);
    out.assert_code(2);
    assert_eq!(out.json()["error"]["code"], "bad-import", "{}", out.stdout);
}

#[test]
fn add_import_of_a_name_bound_from_another_module_leaves_that_file_out() {
    let repo = TestRepo::new();
    repo.write(
        "a.ts",
        "import { warn } from \"./log\";\n\nwarn(1);\nconsole.warn(2);\n",
    );
    repo.write("b.ts", "console.warn(3);\n");
    repo.commit_all("init");
    let out = repo.run(&[
        "edit",
        "-p",
        "console.warn($A)",
        "-r",
        "warn($A)",
        "--add-import",
        "import { warn } from \"@vue/shared\"",
        "--json",
    ]);
    out.assert_code(0);
    let v = out.json();
    let id = v["id"].as_str().expect("an id");
    // The rest is staged; a.ts, where `warn` is bound already, is left out with a note.
    assert_eq!(
        blob_at(&repo, id, "b.ts"),
        "import { warn } from \"@vue/shared\";\n\nwarn(3);\n"
    );
    let staged = staged_paths(&repo, id);
    assert!(!staged.iter().any(|p| p == "a.ts"), "{staged:?}");
    let warnings = v["warnings"].to_string();
    assert!(
        warnings.contains("left out a.ts") && warnings.contains("from \\\"./log\\\" on line 1"),
        "{v}"
    );
    // Refreshed after b.ts came to import its own `warn`: a conflict, not a second one.
    repo.write(
        "b.ts",
        "import { warn } from \"./log\";\n\nconsole.warn(3);\n",
    );
    let out = repo.run(&["refresh", id, "--json"]);
    out.assert_code(3);
    let v = out.json();
    assert_eq!(v["error"]["code"], "refresh-conflict", "{v}");
    let conflict = &v["error"]["details"]["conflicts"][0];
    assert_eq!(conflict["path"], "b.ts", "{v}");
    assert!(
        conflict["why"]
            .as_str()
            .is_some_and(|w| w.contains("`warn` is imported already")),
        "{v}"
    );
}

#[test]
fn a_rule_s_import_of_a_name_bound_from_another_module_leaves_that_file_out() {
    let repo = TestRepo::new();
    repo.write(
        "rules/warn.yml",
        "id: warn\nlanguage: typescript\nrule:\n  pattern: console.warn($A)\n\
         fix: warn($A)\nimports:\n  add: [\"import { warn } from '@vue/shared'\"]\n",
    );
    repo.write(
        "a.ts",
        "import { h } from \"vue\";\nimport { warn } from \"./log\";\n\nwarn(h);\nconsole.warn(2);\n",
    );
    repo.write("b.ts", "console.warn(3);\n");
    repo.commit_all("init");
    let (id, v) = scan_staged(&repo, "rules/warn.yml");
    assert_eq!(
        blob_at(&repo, &id, "b.ts"),
        "import { warn } from '@vue/shared';\n\nwarn(3);\n"
    );
    let staged = staged_paths(&repo, &id);
    assert!(!staged.iter().any(|p| p == "a.ts"), "{staged:?}");
    // The note names the file, the line of the import in the way, and the rule.
    assert!(v.to_string().contains("a.ts:2: rule 'warn'"), "{v}");
}

/// A value import of a name the file imports from that module as a type only: the
/// type import becomes a value import (beside it, the name was imported twice,
/// TypeScript's duplicate identifier TS2300).
#[test]
fn add_import_of_a_name_imported_as_a_type_makes_that_import_a_value_import() {
    let repo = TestRepo::new();
    repo.write(
        "a.ts",
        "import type { Level, logger } from \"./log\";\n\n\
         export const f = (l: Level, x: typeof logger) => console.warn(l, x);\n",
    );
    repo.write(
        "log.ts",
        "export type Level = number;\nexport const logger = { warn: (..._: unknown[]) => {} };\n",
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
            "import { logger } from \"./log\"",
            "a.ts",
        ],
    );
    assert_eq!(
        blob_at(&repo, &id, "a.ts"),
        "import { type Level, logger } from \"./log\";\n\n\
         export const f = (l: Level, x: typeof logger) => logger.warn(l, x);\n"
    );
}
